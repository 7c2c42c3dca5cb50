"""An exam date the group works toward: its rules, without I/O.

An admin sets a date (and optionally the tags it covers) for the workspace or one channel.
Until the day has passed, ``/exam`` and ``/stats`` count down to it, the weekly recap names it,
and the daily questions lean toward its tags as it nears: the share of scheduled questions
drawn from the exam's tags rises from nothing four weeks out to :data:`MOST_WEIGHT` on the
day, so the rest of the course is not forgotten. After the day everything returns to normal
by itself: nothing needs undoing.

Readiness is FSRS's own prediction: each card's recall on the exam day (the forgetting curve
at that day from the card's state now), averaged per tag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from bot.core.errors import BadInput

__all__ = [
    "LEAN_DAYS",
    "MAX_AHEAD",
    "MOST_WEIGHT",
    "Exam",
    "countdown",
    "exam_weight",
    "parse_exam_date",
]

#: How far ahead an exam may be set (a course's final, or a certification a year or two out).
MAX_AHEAD = timedelta(days=3 * 366)
#: From this many days before the exam, daily questions lean toward its tags...
LEAN_DAYS = 28
#: ... up to this share of them on the day itself.
MOST_WEIGHT = 0.75

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, slots=True)
class Exam:
    """An exam: its day (in the workspace's zone), its tags (none: the whole course), and the
    channel it is for (None: the whole workspace)."""

    on: date
    tags: tuple[str, ...] = ()
    channel_id: int | None = None
    set_by: str = ""

    def days_left(self, today: date) -> int:
        return (self.on - today).days

    def covers(self, tags: tuple[str, ...] | list[str]) -> bool:
        """Whether a question with ``tags`` is on the exam (every question, with no tags set)."""
        return not self.tags or any(tag in self.tags for tag in tags)

    def describe(self, today: date) -> str:
        """``Exam on Fri 15 Jan 2027, in 39 days (autograd, hooks)``."""
        scope = f" ({', '.join(self.tags)})" if self.tags else ""
        day = f"{self.on:%a} {self.on.day} {self.on:%b %Y}"
        return f"Exam on {day}, {countdown(self.on, today)}{scope}"


def parse_exam_date(text: str, today: date) -> date:
    """``YYYY-MM-DD``, today or later, within :data:`MAX_AHEAD`; refused in one line."""
    typed = text.strip()
    if not _DATE.match(typed):
        raise BadInput(f"Write the exam date as YYYY-MM-DD, e.g. {today + timedelta(days=30)}, "
                       f"not `{text}`.")  # fmt: skip
    try:
        day = date.fromisoformat(typed)
    except ValueError:
        raise BadInput(f"`{text}` is not a date on the calendar.") from None
    if day < today:
        raise BadInput(f"{day} has passed: the exam date is today ({today}) or later.")
    if day - today > MAX_AHEAD:
        raise BadInput(
            f"{day} is more than three years ahead: set a date up to {today + MAX_AHEAD}."
        )
    return day


def countdown(on: date, today: date) -> str:
    """``today``, ``tomorrow``, ``in 12 days``."""
    days = (on - today).days
    if days <= 0:
        return "today"
    return "tomorrow" if days == 1 else f"in {days} days"


def exam_weight(days_left: int) -> float:
    """The share of daily questions drawn from the exam's tags with ``days_left`` to go: none
    from :data:`LEAN_DAYS` out, rising in a line to :data:`MOST_WEIGHT` on the day; none
    after it (the exam is over)."""
    if days_left < 0 or days_left >= LEAN_DAYS:
        return 0.0
    return MOST_WEIGHT * (1 - days_left / LEAN_DAYS)
