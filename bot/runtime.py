"""What a running bot is made of, handed to whichever adapter serves it.

Built only by :mod:`bot.app`; adapters receive it and never build parts themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.core.clock import Clock
from bot.core.gateway import ChatGateway
from bot.metrics import Metrics
from bot.questions.loader import LoadResult
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from bot.settings import Settings
from bot.storage.database import Database

__all__ = ["PlatformAdapter", "Runtime", "StartupError"]


class StartupError(Exception):
    """Something the operator must fix before the bot can start; the message says what.

    It lives here rather than in :mod:`bot.app` so that adapters can raise it: adapters sit
    below the app and never import it, and :func:`bot.cli.main` catches this one class.
    """


@dataclass(frozen=True, slots=True)
class Runtime:
    settings: Settings
    db: Database
    services: Services  # what adapters call
    timed: SchedulerParts  # what the scheduler loop is handed
    clock: Clock
    packs: LoadResult
    metrics: Metrics


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
