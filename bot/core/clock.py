"""Clocks: the real one, and a simulated one that only moves when told to.

The core never calls ``datetime.now()`` itself; it asks its clock. The console's ``--clock``
mode and the tests use :class:`SimulatedClock` so that days, streaks, windows and schedules
can be exercised in a second, deterministically.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = ["EARLIEST", "LATEST", "Clock", "SimulatedClock", "SystemClock", "check_simulated"]

EARLIEST = datetime(2000, 1, 1, tzinfo=UTC)
LATEST = datetime(2999, 12, 31, 23, 59, 59, tzinfo=UTC)
"""The times a simulated clock may show. Everything the bot computes from "now" (answer
windows, schedules a year ahead, leaderboard months, local days in any timezone) then stays
far inside ``datetime``'s years 1 to 9999, where it would overflow."""


def check_simulated(moment: datetime) -> datetime:
    """``moment`` if a simulated clock may show it; otherwise ``ValueError`` saying the range."""
    if moment.tzinfo is None:
        raise ValueError("give the time with a UTC offset, e.g. 2026-03-29T09:00:00+02:00")
    if not EARLIEST <= moment <= LATEST:
        raise ValueError(
            f"{moment.isoformat()} is outside the years {EARLIEST.year} to {LATEST.year}, "
            "which a simulated clock can show"
        )
    return moment


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...

    async def sleep_until(self, moment: datetime) -> None:
        """Return once ``now() >= moment``."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep_until(self, moment: datetime) -> None:
        # Sleep in bounded steps so a suspended laptop or a clock jump is noticed promptly.
        while (remaining := (moment - self.now()).total_seconds()) > 0:  # noqa: ASYNC110
            await asyncio.sleep(min(remaining, 60.0))


class SimulatedClock:
    """A clock that stands still until :meth:`set` or :meth:`advance` moves it."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("the simulated clock needs a timezone-aware start time")
        self._now = check_simulated(start).astimezone(UTC)
        self._changed = asyncio.Event()

    def now(self) -> datetime:
        return self._now

    def set(self, moment: datetime) -> None:
        """Show ``moment`` from now on; ``ValueError`` outside :data:`EARLIEST`..:data:`LATEST`."""
        self._now = check_simulated(moment).astimezone(UTC)
        self._changed.set()
        self._changed = asyncio.Event()

    def advance(self, delta: timedelta) -> None:
        if delta < timedelta(0):
            raise ValueError("the clock only moves forward; use /clock set to jump")
        self.set(self._now + delta)

    async def sleep_until(self, moment: datetime) -> None:
        while self._now < moment:
            await self._changed.wait()
