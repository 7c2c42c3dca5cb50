"""Timed work as the one timer loop sees it: a due source.

The scheduler (``bot/scheduler.py``) is one loop for all timed work. It asks each source when
it next has something to do, sleeps until the soonest (or until a change wakes it), and hands
each source that is due the current time. A feature with timed work (weekly recaps, review
reminders, a live round's next step) adds a source beside its service; it never starts a
polling loop of its own. Because every kind of timed work goes through the same loop, the
console's ``/clock advance`` fires all of it in time order, exactly as a running bot would.

Durability stays with the source: what it sends is claimed in the database first (a recap's
week, a reminder's day), so a restart or a second process never sends it twice.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

__all__ = ["RECHECK", "DueSource", "soonest"]

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


def soonest(now: datetime, planned: datetime | None) -> datetime | None:
    """When to look next: ``planned``, or sooner (``now + RECHECK``); None if nothing is."""
    return None if planned is None else min(planned, now + RECHECK)
