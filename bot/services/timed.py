"""Timed work a service plans itself: the due source that recaps and reminders share.

A feature with timed work gives :class:`PlannedWork` two calls: ``deliver()`` (send what is
due now; the feature's own claims keep every send single) and ``plan(now)`` (when it is next
due, or None). The scheduler asks :meth:`next_due` and calls :meth:`run_due`; a failure is
logged and looked at again a minute later, never retried into a burst.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from bot.core.timer import soonest
from bot.log import get_logger

__all__ = ["PlannedWork"]

log = get_logger(__name__)
_RETRY = timedelta(minutes=1)


class PlannedWork:
    """A :class:`~bot.core.timer.DueSource` over a feature's ``deliver`` and ``plan``."""

    def __init__(
        self,
        name: str,
        deliver: Callable[[], Awaitable[object]],
        plan: Callable[[datetime], Awaitable[datetime | None]],
    ) -> None:
        self.name = name
        self._deliver = deliver
        self._plan = plan
        self._next: datetime | None = datetime.min.replace(tzinfo=UTC)  # look at the start

    def next_due(self) -> datetime | None:
        return self._next

    async def run_due(self, now: datetime) -> None:
        try:
            await self._deliver()
            planned = await self._plan(now)
        except Exception:
            log.exception("%s failed; trying again in a minute", self.name)
            self._next = now + _RETRY
            return
        self._next = soonest(now, planned)
