"""Slack: slack-bolt ``AsyncApp`` over Socket Mode or HTTP, Block Kit rendering, modals.

Imported only by ``Wiring.adapter()`` when the platform is Slack, so the other platforms never
load slack-bolt.
"""

from bot.adapters.slack.adapter import SlackAdapter, SlackMode

__all__ = ["SlackAdapter", "SlackMode"]
