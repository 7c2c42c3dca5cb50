"""Human durations (``90m``, ``1d``, ``2h30m``) used by settings, schedules and the console.

One parser for the whole program, so an admin who types ``--window 90m`` and an operator who
sets ``SCHEDULE_GRACE=90m`` are understood the same way.
"""

from __future__ import annotations

import re
from datetime import timedelta

__all__ = ["MAX_DURATION", "format_duration", "parse_duration"]

_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+(?:\.\d+)?)([wdhms])")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?[wdhms])+")

MAX_DURATION = timedelta(days=3650)
"""The longest duration accepted anywhere (about ten years): far beyond any sensible window or
clock step, and far enough inside ``datetime``'s range that adding it never overflows."""


def parse_duration(text: str) -> timedelta:
    """Parse ``1d``, ``90m``, ``2h30m``, ``1.5h`` or a bare number of seconds.

    Raises ``ValueError`` with a message that shows the accepted forms, or the maximum
    (:data:`MAX_DURATION`) for a longer one.
    """
    raw = text.strip().lower().replace(" ", "")
    if not raw:
        raise ValueError("empty duration; expected something like 90m, 2h or 1d")
    if re.fullmatch(r"\d+(?:\.\d+)?", raw):
        seconds = float(raw)
    elif _WHOLE.fullmatch(raw):
        seconds = sum(float(n) * _UNITS[u] for n, u in _PART.findall(raw))
    else:
        raise ValueError(f"{text!r} is not a duration; expected something like 90m, 2h30m or 1d")
    if seconds <= 0:
        raise ValueError(f"{text!r} is not a positive duration")
    if seconds > MAX_DURATION.total_seconds():
        raise ValueError(
            f"{text!r} is longer than the maximum, {format_duration(MAX_DURATION)} "
            "(about ten years)"
        )
    return timedelta(seconds=seconds)


def format_duration(delta: timedelta) -> str:
    """The compact form of a duration (``1d2h``, ``90m`` is shown as ``1h30m``)."""
    total = int(delta.total_seconds())
    if total <= 0:
        return "0s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, total = divmod(total, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
