"""What the front doors and the app share about starting: the one operator-facing error, and
what a platform connection is.

Here, in the core, so a front door can raise :class:`StartupError` and be a
:class:`PlatformAdapter` without importing the runtime (the database handle, the stores)
that the app builds above it; :func:`bot.cli.main` catches this one class.
"""

from __future__ import annotations

from typing import Protocol

from bot.core.gateway import ChatGateway

__all__ = ["PlatformAdapter", "StartupError"]


class StartupError(Exception):
    """Something the operator must fix before the bot can start; the message says what."""


class PlatformAdapter(ChatGateway, Protocol):
    """A chat platform connection: runs until stopped; also the core's ChatGateway."""

    async def run(self) -> None:
        """Connect and serve events until :meth:`stop` is called or the connection ends."""
        ...

    async def stop(self) -> None:
        """Stop taking new events and disconnect cleanly."""
        ...

    def is_connected(self) -> bool:
        """Whether the platform connection is up now (the ``gateway`` health check)."""
        ...
