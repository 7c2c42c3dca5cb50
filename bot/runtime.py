"""What a running bot is made of, handed to whichever adapter serves it.

Built only by :mod:`bot.app`, for the app itself (the loop, the health check, the web
page): a front door gets only the services bundle and its settings, never this.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.clock import Clock
from bot.metrics import Metrics
from bot.questions.loader import LoadResult
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from bot.settings import Settings
from bot.storage.database import Database

__all__ = ["Runtime"]


@dataclass(frozen=True, slots=True)
class Runtime:
    settings: Settings
    db: Database
    services: Services  # what adapters call
    timed: SchedulerParts  # what the scheduler loop is handed
    clock: Clock
    packs: LoadResult
    metrics: Metrics
