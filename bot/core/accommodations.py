"""Accommodations: a member's extra time (and fewer choices), as Canvas keeps them per student.

An admin gives a member a time factor (x1.5, x2: from just over 1 to :data:`MAX_FACTOR`). In a
live round that member keeps their own deadline, the question's window times their factor,
and their speed bonus shrinks over their own window, so needing more time never costs points.
The question stays open until every accommodated player has answered or run out. Pure: the
factor's parsing and the deadline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.errors import BadInput
from bot.core.models import Post

__all__ = ["MAX_FACTOR", "Accommodation", "own_close", "own_deadline", "parse_factor"]

#: The most extra time: four times the window (a 20 s question gives 80 s).
MAX_FACTOR = 4.0

_FACTOR = re.compile(r"^[x\u00d7*]?\s*(\d+(?:\.\d+)?)\s*[x\u00d7]?$|^(\d{2,3})\s*%$")


@dataclass(frozen=True, slots=True)
class Accommodation:
    """One member's: their time factor (1.0: none) and whether one wrong choice is removed."""

    time_factor: float = 1.0
    fewer_choices: bool = False

    def describe(self) -> str:
        parts = []
        if self.time_factor > 1:
            parts.append(f"x{self.time_factor:g} time")
        if self.fewer_choices:
            parts.append("one wrong choice removed")
        return ", ".join(parts) or "none"


def parse_factor(text: str) -> float:
    """``1.5``, ``x1.5``, ``x2``, ``150%``: a factor over 1 and at most :data:`MAX_FACTOR`."""
    match = _FACTOR.match(text.strip().lower())
    if match is None:
        raise BadInput(f"Give extra time as a factor such as 1.5 or x2, not `{text}`.")
    factor = float(match[1]) if match[1] is not None else int(match[2]) / 100
    if not 1 < factor <= MAX_FACTOR:
        raise BadInput(
            f"Extra time is a factor over 1 and up to x{MAX_FACTOR:g} (e.g. 1.5 or 2), "
            f"not x{factor:g}."
        )
    return round(factor, 2)


def own_deadline(asked_at: datetime, window: timedelta, factor: float) -> datetime:
    """When a member with ``factor`` runs out of time on a question asked at ``asked_at``."""
    return asked_at + window * max(1.0, factor)


def own_close(post: Post, factor: float) -> datetime | None:
    """When a member with ``factor`` runs out of time on a posted question whose window is held
    open for extra time (:mod:`bot.services.extra_time`); None when it is not held."""
    if post.window_ends_at is None:
        return None
    return own_deadline(post.posted_at, post.window_ends_at - post.posted_at, factor)
