"""Timed work as the one timer loop sees it: a due source.

The scheduler (``bot/scheduler.py``) is one loop for all timed work. It asks each source when
it next has something to do, sleeps until the soonest (or until a change wakes it), and hands
each source that is due the current time. A feature with timed work (weekly recaps, review
reminders, a live round's next step) adds a source beside its service; it never starts a
polling loop of its own. Because every kind of timed work goes through the same loop, the
console's ``/clock advance`` fires all of it in time order, exactly as a running bot would.

Durability stays with the source: what it sends is claimed in the database first (a recap's
week, a reminder's day, a scheduled post's occurrence), so a restart or a second process never
sends it twice.

Sources run in the order they were added, so the order members see things in is the order of
:meth:`~bot.scheduler.Scheduler.add_source` calls (the scheduled questions' sources add re-sends,
then reveals, then retries, then new posts). A source may also take part in the loop's life with
the optional protocols below: :class:`Starts` (load and listen while the loop runs),
:class:`Syncs` (another process may have changed its plan) and :class:`Prepares` (get a large
batch ready a little ahead of its due time).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = ["RECHECK", "DueSource", "Prepares", "Starts", "Syncs", "soonest"]

#: The longest a source with planned work waits before looking again, whatever it computed:
#: a workspace's new time zone takes over at its local midnight. (Changes made here wake the
#: loop at once; other processes' changes are looked at every sync.)
RECHECK = timedelta(days=1)


class DueSource(Protocol):
    """One kind of timed work."""

    @property
    def name(self) -> str:
        """For logs: what this source does (``weekly recaps``)."""
        ...

    def next_due(self) -> datetime | None:
        """When it next has work, as of its last :meth:`run_due`; None: nothing is planned."""
        ...

    async def run_due(self, now: datetime) -> None:
        """Do everything due at ``now`` (safe to call early: claims keep it once), then work
        out :meth:`next_due` afresh. Errors are the source's to log and retry."""
        ...


@runtime_checkable
class Starts(Protocol):
    """A source that loads what it plans from when the loop starts, and listens for changes
    while it runs (the schedules: one loop per process may serve them)."""

    async def start(self) -> None:
        """Load and begin listening (before the loop's first pass). Raises RuntimeError if
        another loop already serves them."""
        ...

    def stop(self) -> None:
        """Stop listening (the loop stopped)."""
        ...


@runtime_checkable
class Syncs(Protocol):
    """A source whose plan other processes sharing the database change: every ``sync_every``
    the loop calls :meth:`sync` (before any source runs), then runs every source."""

    async def sync(self, now: datetime) -> None: ...


@runtime_checkable
class Prepares(Protocol):
    """A source that gets a large batch ready ahead of its due time. The loop wakes at
    :meth:`prepare_at` (which is not a due time: ``/clock advance`` does not stop there) and
    calls :meth:`prepare` at the end of every pass."""

    def prepare_at(self, now: datetime) -> datetime | None:
        """When to wake early to prepare (None: nothing large is coming)."""
        ...

    async def prepare(self, now: datetime) -> None: ...


def soonest(now: datetime, planned: datetime | None) -> datetime | None:
    """When to look next: ``planned``, or sooner (``now + RECHECK``); None if nothing is."""
    return None if planned is None else min(planned, now + RECHECK)
