"""The bot's side of the sandbox: what runs in the bot's process (or a sandbox host's front).

- :class:`Sandbox` (``local.py``): the handle on a manager process this one starts, with an
  empty environment, and speaks JSON lines to;
- :class:`~bot.sandbox.client.remote.RemoteSandbox`: the same calls to sandbox hosts over HTTP
  (``SANDBOX_URLS``), and ``service.py``, the HTTP front a sandbox host runs
  (``studybot sandbox serve``);
- ``cli.py``: ``studybot snippet run|graph``.

Nothing here starts a jail itself; that is the host's (``bot.sandbox.host``).
"""

from __future__ import annotations

from bot.sandbox.client.local import Sandbox

__all__ = ["Sandbox"]
