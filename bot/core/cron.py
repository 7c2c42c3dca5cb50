"""A small 5-field cron matcher that works on local calendar dates and wall-clock times.

Why our own instead of croniter: croniter steps through instants and its behaviour around DST
gaps and overlaps is hard to pin down. A schedule is a promise about *local* wall time, so this
module only answers two questions about a local date -- does the expression admit it, and which
wall times does it fire at -- and leaves turning wall times into instants (and the DST rules) to
:mod:`bot.core.schedule_spec`. It never looks at a clock and never loops without a bound.

Syntax: ``minute hour day-of-month month day-of-week``; each field is ``*`` or a comma list of
``N``, ``N-M``, ``*/S``, ``N-M/S`` or ``N/S`` (``N`` to the field's maximum, step ``S``). Months
and days of week also take three-letter names (``jan``, ``mon``); day of week ``0`` and ``7``
are both Sunday. As in Vixie cron, when both day fields are restricted (neither starts with
``*``) a date matches if *either* matches; otherwise both must.
"""

from __future__ import annotations

import calendar
import itertools
from dataclasses import dataclass
from datetime import date, time

__all__ = ["MAX_GAP_DAYS", "CronError", "CronExpr", "parse_cron"]

MAX_GAP_DAYS = 8 * 366
"""An accepted expression fires at least once in any window of this many days.

Eight years, so that ``29 2`` (leap days, up to eight years apart across 2100) is accepted while
``31 2`` (never) and rare weekday coincidences are refused at parse time, and so that a search
for the next date is always bounded.
"""

_GREGORIAN_CYCLE_DAYS = 146097  # 400 years: the calendar, weekdays included, repeats exactly.
_CYCLE_START_YEAR = 2000

_MONTH_NAMES = {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_DOW_NAMES = {"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}
# The longest each month can be (February in a leap year), for the "can this ever fire" check.
_MAX_MONTH_DAYS = {month: calendar.monthrange(2000, month)[1] for month in range(1, 13)}


class CronError(ValueError):
    """A cron expression that does not parse or can never fire; ``reason`` is for humans."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    low: int
    high: int
    names: dict[str, int]


_FIELDS = (
    _Field("minute", 0, 59, {}),
    _Field("hour", 0, 23, {}),
    _Field("day-of-month", 1, 31, {}),
    _Field("month", 1, 12, _MONTH_NAMES),
    _Field("day-of-week", 0, 7, _DOW_NAMES),
)


@dataclass(frozen=True, slots=True)
class CronExpr:
    """A parsed expression: the value set of each field, plus the Vixie "restricted" flags.

    ``days_of_week`` uses cron numbering (0 = Sunday ... 6 = Saturday; 7 is folded into 0).
    ``text`` is the canonical spelling: lower case, fields separated by one space.
    Build one with :func:`parse_cron`, which also checks that it can fire.
    """

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days_of_month: frozenset[int]
    months: frozenset[int]
    days_of_week: frozenset[int]
    dom_restricted: bool
    dow_restricted: bool

    def matches_date(self, day: date) -> bool:
        """Whether the expression fires at all on this local date (month, DOM and DOW rules)."""
        if day.month not in self.months:
            return False
        dom_ok = day.day in self.days_of_month
        dow_ok = (day.weekday() + 1) % 7 in self.days_of_week
        if self.dom_restricted and self.dow_restricted:
            return dom_ok or dow_ok
        return dom_ok and dow_ok

    def times(self) -> tuple[time, ...]:
        """The wall-clock times it fires at on every date it admits, earliest first."""
        return tuple(time(h, m) for h in sorted(self.hours) for m in sorted(self.minutes))


def parse_cron(text: str) -> CronExpr:
    """Parse a 5-field expression; raise :class:`CronError` if it is malformed or never fires.

    "Never fires" includes "fires less often than once in :data:`MAX_GAP_DAYS`" (for example
    ``0 0 31 2 *``), so that callers can search forward for the next date with a fixed bound.
    """
    parts = text.strip().lower().split()
    if len(parts) != len(_FIELDS):
        raise CronError(
            f"expected 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}"
        )
    values = [_parse_field(raw, spec) for raw, spec in zip(parts, _FIELDS, strict=True)]
    days_of_week = frozenset(v % 7 for v in values[4])
    expr = CronExpr(
        text=" ".join(parts),
        minutes=values[0],
        hours=values[1],
        days_of_month=values[2],
        months=values[3],
        days_of_week=days_of_week,
        dom_restricted=not parts[2].startswith("*"),
        dow_restricted=not parts[4].startswith("*"),
    )
    _check_fires(expr)
    return expr


def _parse_field(raw: str, spec: _Field) -> frozenset[int]:
    values: set[int] = set()
    for item in raw.split(","):
        if not item:
            raise CronError(f"{spec.name}: empty item in {raw!r}")
        values.update(_parse_item(item, spec))
    return frozenset(values)


def _parse_item(item: str, spec: _Field) -> range:
    base, slash, step_text = item.partition("/")
    step = _parse_step(step_text, item, spec) if slash else 1
    if base == "*":
        return range(spec.low, spec.high + 1, step)
    start_text, dash, end_text = base.partition("-")
    start = _parse_value(start_text, spec)
    if dash:
        end = _parse_value(end_text, spec)
    elif slash:
        end = spec.high  # `N/S` is `N-max/S`, as in cronie and croniter.
    else:
        end = start
    if end < start:
        raise CronError(f"{spec.name}: range {base!r} runs backwards; write the smaller end first")
    return range(start, end + 1, step)


def _parse_step(text: str, item: str, spec: _Field) -> int:
    if not text.isdigit() or int(text) == 0:
        raise CronError(f"{spec.name}: step in {item!r} must be a whole number of 1 or more")
    return int(text)


def _parse_value(text: str, spec: _Field) -> int:
    if text in spec.names:
        return spec.names[text]
    if not text.isdigit():
        hint = f" or a name ({', '.join(spec.names)})" if spec.names else ""
        raise CronError(f"{spec.name}: {text!r} is not a number{hint}")
    value = int(text)
    if not spec.low <= value <= spec.high:
        raise CronError(f"{spec.name}: {value} is out of range {spec.low}-{spec.high}")
    return value


def _check_fires(expr: CronExpr) -> None:
    """Refuse expressions that never fire, or fire less than once in :data:`MAX_GAP_DAYS`.

    The common shapes are decided directly; only an AND of two partial day sets (which needs a
    star-prefixed step such as ``*/10``) is checked by walking one 400-year Gregorian cycle.
    """
    if expr.dom_restricted and expr.dow_restricted:
        return  # OR: every listed weekday occurs in every admitted month.
    if len(expr.days_of_month) == 31:
        return  # AND with every day of the month: each month has each weekday.
    if len(expr.days_of_week) == 7:
        if not any(d <= _MAX_MONTH_DAYS[m] for m in expr.months for d in expr.days_of_month):
            raise CronError(_never_reason(expr))
        return  # The rarest such date is 29 February: at most eight years apart.
    gap = _largest_gap_days(expr)
    if gap is None:
        raise CronError(_never_reason(expr))
    if gap > MAX_GAP_DAYS:
        raise CronError(
            f"fires too rarely: up to {gap // 365} years between runs "
            "(day-of-month and day-of-week must match together when one starts with *)"
        )


def _never_reason(expr: CronExpr) -> str:
    months = ", ".join(calendar.month_name[m].lower() for m in sorted(expr.months))
    return f"never fires: no date in {months} matches its day-of-month and day-of-week"


def _largest_gap_days(expr: CronExpr) -> int | None:
    """The longest run of days without a match over a whole 400-year cycle (wrapping around).

    Works on day ordinals: ``ordinal % 7`` is the cron weekday (ordinal 1 was a Monday), which
    keeps the walk fast enough to run while an admin waits for a reply.
    """
    months = sorted(expr.months)
    doms = sorted(expr.days_of_month)
    ordinals: list[int] = []
    for year in range(_CYCLE_START_YEAR, _CYCLE_START_YEAR + 400):
        for month in months:
            first = date(year, month, 1).toordinal() - 1
            length = calendar.monthrange(year, month)[1]
            ordinals.extend(
                first + dom
                for dom in doms
                if dom <= length and (first + dom) % 7 in expr.days_of_week
            )
    if not ordinals:
        return None
    gaps = [b - a for a, b in itertools.pairwise(ordinals)]
    gaps.append(ordinals[0] + _GREGORIAN_CYCLE_DAYS - ordinals[-1])
    return max(gaps)
