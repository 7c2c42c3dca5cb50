"""The schedules' timetable: which schedules it watches, where each got to, and which is due
soonest.

A heap of ``(due, schedule id, version)``; a schedule that changes gets a new entry and version,
and its old heap items go stale and are dropped lazily when they reach the top, so a change
costs O(log n) and nothing is ever searched for. Pure bookkeeping, no I/O: the loop in
:mod:`bot.services.schedule_source` decides what to do with what is due.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from datetime import datetime

from bot.core.schedule_spec import next_occurrence
from bot.log import get_logger
from bot.services.schedule_book import Schedule

__all__ = ["Entry", "Timetable"]

log = get_logger(__name__)


@dataclass(slots=True)
class Entry:
    """A schedule the loop is watching: its spec, where it got to, and when it is due."""

    schedule: Schedule
    after: datetime  # every occurrence at or before this has been dealt with
    due: datetime
    version: int
    upcoming: datetime | None = None  # when it is due next, once the pass has planned it
    following: datetime | None = None  # the occurrence after ``due``, if computed ahead


class Timetable:
    def __init__(self) -> None:
        self._entries: dict[int, Entry] = {}
        self._heap: list[tuple[datetime, int, int]] = []  # (due, schedule id, version)
        self._versions = itertools.count()
        self._sized: tuple[datetime, int] | None = None  # (due, how many are due then)

    def get(self, schedule_id: int) -> Entry | None:
        return self._entries.get(schedule_id)

    def put(self, schedule: Schedule, due: datetime | None = None) -> None:
        """Watch a schedule; ``due`` is its next occurrence after ``after`` if known."""
        previous = self._entries.get(schedule.id)
        after = schedule.after if previous is None else max(schedule.after, previous.after)
        try:
            if due is None or due <= after:
                due = next_occurrence(schedule.spec, after)
        except ValueError:
            log.exception("schedule %d: cannot compute its next occurrence", schedule.id)
            self._entries.pop(schedule.id, None)
            return
        entry = Entry(schedule, after, due, next(self._versions))
        self._entries[schedule.id] = entry
        heapq.heappush(self._heap, (due, schedule.id, entry.version))
        self._sized = None  # batch sizes are counted afresh

    def drop(self, schedule_id: int) -> None:
        """Stop watching a schedule (paused or removed); its heap items go stale."""
        self._entries.pop(schedule_id, None)
        self._sized = None

    def top(self) -> datetime | None:
        """The soonest valid occurrence (stale heap items are dropped on the way)."""
        while self._heap:
            due, schedule_id, version = self._heap[0]
            entry = self._entries.get(schedule_id)
            if entry is not None and entry.version == version:
                return due
            heapq.heappop(self._heap)
        return None

    def pop_due(self, now: datetime) -> list[Entry]:
        """Every entry due at or before ``now``, in due order (then schedule id)."""
        due: list[Entry] = []
        while (top := self.top()) is not None and top <= now:
            _, schedule_id, _ = heapq.heappop(self._heap)
            due.append(self._entries[schedule_id])
        return due

    def due_at(self, due: datetime) -> list[Entry]:
        found = []
        for when, schedule_id, version in self._heap:
            entry = self._entries.get(schedule_id)
            if when == due and entry is not None and entry.version == version:
                found.append(entry)
        return found

    def batch_size(self, due: datetime) -> int:
        """How many schedules are due at ``due`` (counted once per change of the timetable)."""
        if self._sized is None or self._sized[0] != due:
            self._sized = (due, len(self.due_at(due)))
        return self._sized[1]
