"""studybot: an async study bot for Discord and Slack.

The package is split so that the rules live in :mod:`bot.core` (no chat-platform imports),
storage in :mod:`bot.storage`, question packs in :mod:`bot.questions`, the snippet jail in
:mod:`bot.sandbox`, and each chat platform in its own adapter under :mod:`bot.adapters`.
Everything is wired together in :mod:`bot.app`, and nowhere else.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
