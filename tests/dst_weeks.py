"""The DST weeks, written out once: the schedule spec's occurrence maths and the scheduler's
posts are both checked against this table (``tests/core/test_schedule_spec.py``,
``tests/test_scheduler.py``).

Each row is a daily schedule, an instant to start from, and every posting instant that follows
for ``len(expected)`` days, by hand in UTC, never computed with the code under test. Europe/Berlin
2026: spring forward Sun 03-29 at 01:00 UTC (02:00 -> 03:00 CEST), fall back Sun 10-25 at
01:00 UTC (03:00 -> 02:00 CET). America/New_York 2026: spring forward Sun 03-08 at 07:00 UTC
(02:00 -> 03:00 EDT), fall back Sun 11-01 at 06:00 UTC (02:00 -> 01:00 EST).

``kind`` says what the week shows: ``steady`` (a time that exists once every day stays the
same local time through the change), ``gap`` (a time the clocks skip posts once, shifted by the
gap's length) or ``fold`` (a time that happens twice posts once, at the first).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import pytest

__all__ = ["DST_WEEKS", "DstWeek", "dst_weeks"]


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@dataclass(frozen=True)
class DstWeek:
    id: str
    kind: Literal["steady", "gap", "fold"]
    time: str  # the schedule's local time, daily
    zone: str
    start: datetime  # aware UTC: the clock when the schedule is added
    expected: tuple[datetime, ...]  # every posting instant in the following len(expected) days

    @property
    def days(self) -> int:
        return len(self.expected)


def _week(
    id: str, kind: Literal["steady", "gap", "fold"], time: str, zone: str, start: str, *times: str
) -> DstWeek:
    return DstWeek(id, kind, time, zone, _utc(start), tuple(_utc(t) for t in times))


DST_WEEKS = (
    _week(
        "berlin-0900-spring-forward", "steady", "09:00", "Europe/Berlin", "2026-03-23 06:00",
        "2026-03-23 08:00", "2026-03-24 08:00", "2026-03-25 08:00", "2026-03-26 08:00",
        "2026-03-27 08:00", "2026-03-28 08:00", "2026-03-29 07:00", "2026-03-30 07:00",
    ),
    _week(
        "berlin-0900-fall-back", "steady", "09:00", "Europe/Berlin", "2026-10-19 06:00",
        "2026-10-19 07:00", "2026-10-20 07:00", "2026-10-21 07:00", "2026-10-22 07:00",
        "2026-10-23 07:00", "2026-10-24 07:00", "2026-10-25 08:00", "2026-10-26 08:00",
    ),
    _week(
        "new-york-0900-spring-forward", "steady", "09:00", "America/New_York", "2026-03-02 12:00",
        "2026-03-02 14:00", "2026-03-03 14:00", "2026-03-04 14:00", "2026-03-05 14:00",
        "2026-03-06 14:00", "2026-03-07 14:00", "2026-03-08 13:00", "2026-03-09 13:00",
    ),
    _week(
        "new-york-0900-fall-back", "steady", "09:00", "America/New_York", "2026-10-26 12:00",
        "2026-10-26 13:00", "2026-10-27 13:00", "2026-10-28 13:00", "2026-10-29 13:00",
        "2026-10-30 13:00", "2026-10-31 13:00", "2026-11-01 14:00", "2026-11-02 14:00",
    ),
    _week(
        "berlin-0230-spring-forward", "gap", "02:30", "Europe/Berlin", "2026-03-27 12:00",
        "2026-03-28 01:30",  # 02:30 CET
        "2026-03-29 01:30",  # 02:30 does not exist: 03:30 CEST
        "2026-03-30 00:30",  # 02:30 CEST
        "2026-03-31 00:30",
    ),
    _week(
        "new-york-0230-spring-forward", "gap", "02:30", "America/New_York", "2026-03-06 12:00",
        "2026-03-07 07:30",  # 02:30 EST
        "2026-03-08 07:30",  # 02:30 does not exist: 03:30 EDT
        "2026-03-09 06:30",  # 02:30 EDT
        "2026-03-10 06:30",
    ),
    _week(
        "berlin-0230-fall-back", "fold", "02:30", "Europe/Berlin", "2026-10-23 12:00",
        "2026-10-24 00:30",  # 02:30 CEST
        "2026-10-25 00:30",  # the first 02:30 (CEST); not 01:30 UTC (CET)
        "2026-10-26 01:30",  # 02:30 CET
        "2026-10-27 01:30",
    ),
    _week(
        "new-york-0130-fall-back", "fold", "01:30", "America/New_York", "2026-10-30 12:00",
        "2026-10-31 05:30",  # 01:30 EDT
        "2026-11-01 05:30",  # the first 01:30 (EDT); not 06:30 UTC (EST)
        "2026-11-02 06:30",  # 01:30 EST
        "2026-11-03 06:30",
    ),
)  # fmt: skip


def dst_weeks(*kinds: str) -> list[object]:
    """The table's rows of these kinds (all rows if none named), as ``pytest.param``s."""
    return [pytest.param(week, id=week.id) for week in DST_WEEKS if not kinds or week.kind in kinds]
