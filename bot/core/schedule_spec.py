"""Schedule specs: parse what an admin typed, keep it as JSON, compute when the next post is.

Pure on purpose -- no I/O, no clock, no asyncio -- so that every rule here is a plain function
of its arguments and can be tested exhaustively, DST transitions included.

Occurrences are always derived from *local dates*: for each local date the day rule admits, the
schedule's wall-clock time(s) on that date are turned into an instant. Nothing is computed by
adding 24 hours to a previous occurrence, which is why 09:00 Europe/Berlin stays 09:00 across a
DST change. The DST rules, exactly:

1. Each wall time is resolved with ``fold=0`` (:pep:`495`): it is paired with the UTC offset in
   force *before* any transition at that wall time.
2. So an ambiguous wall time (clocks fall back and it happens twice) posts once, at its first
   occurrence -- 01:30 America/New_York on the fall-back day posts at 01:30 EDT, not 01:30 EST.
3. And a nonexistent wall time (clocks spring forward over it) posts once, moved forward by the
   length of the gap -- 02:30 Europe/Berlin on the spring-forward day posts at 03:30 CEST.
4. Instants that coincide after resolution post once (a cron ``30 2,3 * * *`` on a
   spring-forward day resolves both to 03:30).
5. A time-of-day schedule posts at most once per local date. Where a gap ends at midnight
   (America/Nuuk springs from Saturday 23:00 to Sunday 00:00), rule 3 can carry Saturday's
   23:30 onto Sunday 00:30; it is then dropped if the day rule also admits Sunday, because
   Sunday has its own 23:30. If Sunday is not admitted it is kept.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, available_timezones

from bot.core.cron import MAX_GAP_DAYS, CronError, CronExpr, parse_cron
from bot.core.durations import format_duration, parse_duration
from bot.core.errors import BadInput
from bot.core.rounds import parse_round_spec
from bot.questions.schema import Difficulty
from bot.text import clean_text, short_echoes

__all__ = [
    "DIFFICULTIES",
    "MAX_POSTS_PER_DAY",
    "MAX_WINDOW",
    "MIN_WINDOW",
    "DaySpec",
    "ScheduleError",
    "ScheduleForm",
    "ScheduleSpec",
    "build_spec",
    "canonical_timezone",
    "decode_spec",
    "encode_spec",
    "next_occurrence",
    "occurrence_key",
    "occurrences",
    "parse_filters",
    "preview",
    "upcoming",
    "word_kind",
]

DIFFICULTIES = tuple(d.value for d in Difficulty)
"""The pack schema's difficulty values (kept equal to ``bot.questions.schema.Difficulty``)."""

MIN_WINDOW = timedelta(minutes=1)
MAX_WINDOW = timedelta(days=7)
MAX_POSTS_PER_DAY = 24
"""A cron schedule may fire at most this many times a local day: ``* * * * *`` is a typo."""

_SEARCH_DAYS = MAX_GAP_DAYS + 3  # Any accepted day rule admits a date within this many days.

_EXAMPLES = {
    "time": "/schedule add 09:00 Europe/Berlin weekdays",
    "timezone": "/schedule add 09:00 Europe/Berlin weekdays",
    "days": "/schedule add 09:00 Europe/Berlin mon,wed,fri",
    "cron": '/schedule add --cron "0 9 * * 1-5" Europe/Berlin',
    "pack": "/schedule add 09:00 --pack pytorch-dynamic-graphs",
    "tags": "/schedule add 09:00 --tag autograd --tag tensors",
    "difficulty": "/schedule add 09:00 --difficulty medium",
    "window": "/schedule add 09:00 --window 90m",
    "mention": "/schedule add 09:00 --mention @study-group",
    "args": "/schedule add 09:00 Europe/Berlin weekdays --pack pytorch-dynamic-graphs",
}

_SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # bot.questions.schema.Slug
_TAG = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")  # bot.questions.schema.Tag
_MASS_MENTIONS = frozenset({"@everyone", "@here", "<!everyone>", "<!channel>", "<!here>"})
_MAX_MENTION_CHARS = 100


class ScheduleError(ValueError):
    """A schedule spec that does not parse: which field, why, and an example that works.

    ``suggestions`` holds likely intended values (timezone names, day names, option names) so
    that an adapter can offer them as buttons; they are already part of ``reason``.
    """

    def __init__(
        self,
        field: str,
        reason: str,
        example: str | None = None,
        suggestions: Sequence[str] = (),
    ) -> None:
        self.field = field
        self.reason = short_echoes(clean_text(reason))  # it quotes what was typed
        self.example = example if example is not None else _EXAMPLES.get(field, _EXAMPLES["args"])
        self.suggestions = tuple(suggestions)
        super().__init__(f"{field}: {reason} (example: {self.example})")


# --- timezones -----------------------------------------------------------------------------

_SUGGEST_CUTOFF = 0.7  # How alike (difflib ratio) a zone name must be to be suggested,
_SUGGEST_TIE = 0.05  # and how close to the best match, so one clear winner is shown alone.


@lru_cache(maxsize=1)
def _zone_index() -> dict[str, str]:
    """Lower-cased IANA name -> real name (sorted first, so the choice is deterministic)."""
    index: dict[str, str] = {}
    for name in sorted(available_timezones()):
        index.setdefault(name.lower(), name)
    return index


def _zone_key(text: str) -> str:
    return "_".join(text.strip().lower().split())


def canonical_timezone(text: str) -> str:
    """The real IANA name for ``text`` (``europe/berlin`` -> ``Europe/Berlin``), or raise.

    Case and spaces-for-underscores are forgiven; anything else is refused with up to three
    suggestions, matched on the whole name and on the city part (``berlin`` -> Europe/Berlin).
    """
    name = _zone_index().get(_zone_key(text))
    if name is not None:
        return name
    suggestions = _suggest_timezones(text)
    reason = f"unknown timezone {text.strip()!r}"
    if suggestions:
        reason += f" — did you mean {_or_list(suggestions)}?"
    else:
        reason += "; use an IANA name such as Europe/Berlin or America/New_York"
    raise ScheduleError("timezone", reason, suggestions=suggestions)


# Legacy zone names that look like a region's time but are not what people mean by it: "EST"
# is UTC-5 all year (New York is UTC-4 in summer), and the POSIX-style names follow US rules of
# one era. Each maps to the city zone a study group almost certainly wants.
_LEGACY_ZONES = {
    "EST": "America/New_York",
    "EST5EDT": "America/New_York",
    "CST6CDT": "America/Chicago",
    "MST": "America/Denver (or America/Phoenix, which has no daylight saving)",
    "MST7MDT": "America/Denver",
    "PST8PDT": "America/Los_Angeles",
    "HST": "Pacific/Honolulu",
    "EET": "Europe/Athens",
    "CET": "Europe/Paris",
    "MET": "Europe/Paris",
    "WET": "Europe/Lisbon",
}


def timezone_warning(name: str) -> str | None:
    """A warning for a legacy or fixed-offset zone (``EST``, ``Etc/GMT+5``), with the city
    zone to use instead; ``None`` for a real place (and for UTC, which is meant as it is)."""
    better = _LEGACY_ZONES.get(name)
    if better is not None:
        return (
            f"{name} is a legacy zone name that does not follow local daylight-saving rules "
            f"the way a city zone does; use {better} unless you mean exactly that"
        )
    if name.startswith("Etc/GMT") and name not in {"Etc/GMT", "Etc/GMT0", "Etc/GMT+0"}:
        return (
            f"{name} is a fixed offset with no daylight saving (and its sign is inverted: "
            "Etc/GMT+5 is UTC-5); use your city's zone, e.g. America/New_York"
        )
    return None


def _suggest_timezones(text: str, limit: int = 3) -> tuple[str, ...]:
    """Zones whose whole name or city part is close to ``text``; near-ties of the best only,
    so ``Europe/Berln`` suggests Europe/Berlin alone rather than a list of look-alikes."""
    key = _zone_key(text)
    city = key.rsplit("/", 1)[-1]
    scores: dict[str, float] = {}
    for lowered, name in _zone_index().items():
        whole = difflib.SequenceMatcher(None, key, lowered).ratio()
        part = difflib.SequenceMatcher(None, city, lowered.rsplit("/", 1)[-1]).ratio()
        scores[name] = max(whole, part)
    best = max(scores.values())
    floor = max(_SUGGEST_CUTOFF, best - _SUGGEST_TIE)
    ranked = sorted(
        (name for name, score in scores.items() if score >= floor),
        key=lambda name: (-scores[name], name),
    )
    return tuple(ranked[:limit])


def _or_list(items: Sequence[str]) -> str:
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} or {items[-1]}"


# --- days ----------------------------------------------------------------------------------

_DAY_ABBR = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_WORDS = {
    **{abbr: i for i, abbr in enumerate(_DAY_ABBR)},
    **{
        full: i
        for i, full in enumerate(
            ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
        )
    },
    "tues": 1,
    "weds": 2,
    "thur": 3,
    "thurs": 3,
}
_ALL_DAYS = frozenset(range(7))
_WEEKDAYS = frozenset(range(5))
_WEEKENDS = frozenset({5, 6})
_DAY_GROUPS = {
    "daily": _ALL_DAYS,
    "everyday": _ALL_DAYS,
    "weekdays": _WEEKDAYS,
    "weekday": _WEEKDAYS,
    "weekends": _WEEKENDS,
    "weekend": _WEEKENDS,
}
_DAY_VOCABULARY = (*_DAY_GROUPS, *_DAY_WORDS)


@dataclass(frozen=True, slots=True)
class DaySpec:
    """Which local dates a schedule posts on: a set of weekdays, or a cron expression.

    Exactly one of ``weekdays`` (Python numbering, 0 = Monday) and ``cron`` is set. A cron
    expression also carries the times of day, which is why ``ScheduleSpec.time`` is then None.
    """

    weekdays: frozenset[int] | None = None
    cron: CronExpr | None = None

    def __post_init__(self) -> None:
        if self.weekdays is not None:  # Accept any set, keep the value hashable.
            object.__setattr__(self, "weekdays", frozenset(self.weekdays))
        if (self.weekdays is None) == (self.cron is None):
            raise ScheduleError("days", "give either a set of weekdays or a cron expression")
        if self.weekdays is not None and (not self.weekdays or not self.weekdays <= _ALL_DAYS):
            raise ScheduleError("days", "weekdays must be a non-empty set of 0 (mon) to 6 (sun)")

    @classmethod
    def every_day(cls) -> DaySpec:
        return cls(weekdays=_ALL_DAYS)

    @property
    def text(self) -> str:
        """Canonical spelling: ``daily``, ``weekdays``, ``weekends``, ``mon,wed,fri`` or cron."""
        if self.cron is not None:
            return self.cron.text
        assert self.weekdays is not None
        for word in ("daily", "weekdays", "weekends"):
            if self.weekdays == _DAY_GROUPS[word]:
                return word
        return ",".join(_DAY_ABBR[i] for i in sorted(self.weekdays))

    def admits(self, day: date) -> bool:
        """Whether anything posts on this local date."""
        if self.cron is not None:
            return self.cron.matches_date(day)
        assert self.weekdays is not None
        return day.weekday() in self.weekdays


def _parse_days(text: str) -> DaySpec:
    """``daily``, ``weekdays``, ``weekends``, or a comma list of days and ranges (``mon-fri``)."""
    days: set[int] = set()
    for part in text.strip().lower().split(","):
        days |= _parse_day_part(part.strip(), text)
    return DaySpec(weekdays=frozenset(days))


def _parse_day_part(part: str, whole: str) -> frozenset[int]:
    if part in _DAY_GROUPS:
        return _DAY_GROUPS[part]
    first, dash, last = part.partition("-")
    start = _day_number(first, whole)
    if not dash:
        return frozenset({start})
    end = _day_number(last, whole)
    # Ranges may wrap past Sunday: fri-mon is fri,sat,sun,mon.
    return frozenset((start + i) % 7 for i in range((end - start) % 7 + 1))


def _day_number(word: str, whole: str) -> int:
    if word in _DAY_WORDS:
        return _DAY_WORDS[word]
    if not word:
        raise ScheduleError("days", f"empty day in {whole.strip()!r}")
    close = difflib.get_close_matches(word, _DAY_VOCABULARY, n=1, cutoff=0.6)
    hint = f" — did you mean {close[0]}?" if close else ""
    raise ScheduleError(
        "days",
        f"unknown day {word!r}{hint} (use daily, weekdays, weekends or days like mon,wed,fri)",
        suggestions=close,
    )


def _looks_like_days(token: str) -> bool:
    """Whether a token that is neither valid days nor a timezone was probably meant as days."""
    lowered = token.lower()
    if "/" in lowered:
        return False
    if "," in lowered:
        return True
    return bool(difflib.get_close_matches(lowered, _DAY_VOCABULARY, n=1, cutoff=0.75))


# --- times ---------------------------------------------------------------------------------

_TIME_24 = re.compile(r"(\d{1,2}):(\d{2})")
_TIME_12 = re.compile(r"(\d{1,2})(?::(\d{2}))?(am|pm)")


def _parse_time(text: str) -> dt.time:
    """``9:00``, ``09:00``, ``21:30`` (24-hour) or ``9am``, ``9:30pm``, ``12am`` (12-hour)."""
    raw = text.strip().lower()
    if match := _TIME_24.fullmatch(raw):
        hour, minute = int(match[1]), int(match[2])
        if hour > 23:
            raise ScheduleError("time", f"hour {hour} in {text!r} is out of range 0-23")
    elif match := _TIME_12.fullmatch(raw):
        hour, minute = int(match[1]), int(match[2] or 0)
        if not 1 <= hour <= 12:
            raise ScheduleError("time", f"hour {hour} in {text!r} is out of range 1-12 for am/pm")
        hour = hour % 12 + (12 if match[3] == "pm" else 0)
    else:
        raise ScheduleError(
            "time", f"{text!r} is not a time; write 24-hour HH:MM (09:00, 21:30) or 9am, 9:30pm"
        )
    if minute > 59:
        raise ScheduleError("time", f"minute {minute} in {text!r} is out of range 00-59")
    return dt.time(hour, minute)


def _check_time(value: dt.time) -> dt.time:
    if value.tzinfo is not None:
        raise ScheduleError("time", "give a wall-clock time; the timezone is a separate field")
    if value.second or value.microsecond:
        raise ScheduleError("time", "schedules are to the minute; drop the seconds")
    return value


# --- the spec ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScheduleSpec:
    """One channel schedule: when it posts and what it posts. Build with :func:`build_spec`.

    ``time`` is None exactly when ``days`` is a cron expression (which gives the times).
    ``window`` is how long answers stay open; None means until the next question posts.
    Whether the schedule is paused is state of the stored schedule, not part of its spec.
    """

    time: dt.time | None
    timezone: str
    days: DaySpec
    pack: str | None = None
    tags: tuple[str, ...] = ()
    difficulty: str | None = None
    window: timedelta | None = None
    mention: str | None = None
    kinds: tuple[str, ...] = ()
    round: tuple[int, int] | None = None  # a live round (questions, seconds), not one question

    def __post_init__(self) -> None:
        object.__setattr__(self, "tags", tuple(self.tags))
        object.__setattr__(self, "kinds", tuple(self.kinds))
        if (self.time is None) != (self.days.cron is not None):
            raise ScheduleError("time", "give a time of day, or a cron expression, not both")
        if self.time is not None:
            _check_time(self.time)
        if canonical_timezone(self.timezone) != self.timezone:
            raise ScheduleError("timezone", f"use the canonical name for {self.timezone!r}")
        if self.difficulty is not None and self.difficulty not in DIFFICULTIES:
            raise ScheduleError("difficulty", f"{self.difficulty!r} is not easy, medium or hard")
        if self.window is not None and not MIN_WINDOW <= self.window <= MAX_WINDOW:
            raise ScheduleError("window", "the answer window must be between 1m and 7d")

    def describe(self) -> str:
        """One line for humans, e.g. ``09:00 Europe/Berlin on weekdays, medium, ...``."""
        parts = [self._when()]
        if self.pack:
            parts.append(f"pack {self.pack}")
        if self.tags:
            parts.append(f"{'tag' if len(self.tags) == 1 else 'tags'} {', '.join(self.tags)}")
        if self.difficulty:
            parts.append(self.difficulty)
        if self.window is None:
            parts.append("answers close when the next question posts")
        else:
            parts.append(f"answers close after {format_duration(self.window)}")
        if self.mention:
            parts.append(f"mentions {self.mention}")
        if self.kinds:
            parts.append(f"kinds {', '.join(self.kinds)}")
        if self.round is not None:
            parts.append(f"a live round of {self.round[0]} questions, {self.round[1]} s each")
        return ", ".join(parts)

    @property
    def posted_kinds(self) -> tuple[str, ...]:
        """The kinds of question this schedule posts: ``--kinds``, else every scored kind.

        Open prompts are left out unless asked for: a day whose only question nobody can
        answer would break every member's streak (issue 17).
        """
        return self.kinds or SCORED_KINDS

    def _when(self) -> str:
        if self.time is None:
            return f'cron "{self.days.text}" in {self.timezone}'
        days = self.days.text
        on = days if days == "daily" else f"on {days}"
        return f"{self.time:%H:%M} {self.timezone} {on}"


def build_spec(
    *,
    time: str | dt.time | None = None,
    timezone: str,
    days: str | DaySpec | None = None,
    cron: str | None = None,
    pack: str | None = None,
    tags: Iterable[str] = (),
    difficulty: str | None = None,
    window: str | timedelta | None = None,
    mention: str | None = None,
    kinds: Iterable[str] = (),
    round: str | None = None,
) -> ScheduleSpec:
    """Validate already-split fields (a Discord or Slack form) into a :class:`ScheduleSpec`.

    Blank strings count as "not given", as forms send them. Give ``time`` (and optionally
    ``days``, default daily) or ``cron``, not both. ``window`` is a duration (``90m``) or
    ``next``/None for "until the next question posts". Raises :class:`ScheduleError`.
    """
    tz = canonical_timezone(timezone)
    at, day_spec = _when_fields(time, days, _blank(cron))
    return ScheduleSpec(
        time=at,
        timezone=tz,
        days=day_spec,
        pack=_parse_pack(pack),
        tags=_parse_tags(tags),
        difficulty=_parse_difficulty(difficulty),
        window=_parse_window(window),
        mention=_parse_mention(mention),
        kinds=_parse_kinds(kinds),
        round=_parse_round(round),
    )


def _parse_round(text: str | None) -> tuple[int, int] | None:
    """``--round 10x20s``: a live round of 10 questions, 20 s each, in place of one question."""
    if text is None or not text.strip():
        return None
    try:
        spec = parse_round_spec(text)
    except BadInput as exc:
        raise ScheduleError("round", str(exc).rstrip(".")) from None
    return spec.questions, spec.seconds


@dataclass(frozen=True, slots=True)
class ScheduleForm:
    """A schedule as typed into a form, field by field (a Discord or Slack form, or the words
    of the text grammar once sorted): strings as given, checked only by :meth:`spec`."""

    time: str | None = None
    timezone: str | None = None  # None: the workspace's zone
    days: str | None = None
    cron: str | None = None
    pack: str | None = None
    tags: tuple[str, ...] = ()
    difficulty: str | None = None
    window: str | None = None
    mention: str | None = None
    kinds: tuple[str, ...] = ()
    round: str | None = None

    @classmethod
    def from_fields(cls, fields: Mapping[str, str | None]) -> ScheduleForm:
        """A form whose fields are one value each (Discord's options, the web page's inputs).

        A blank or missing field is not given. Days typed with spaces (``mon wed``) are joined
        with commas, and tags and kinds typed with spaces or commas become one entry each, so
        every form reads the same as the text grammar.
        """

        def one(name: str) -> str | None:
            value = fields.get(name)
            return value if value and value.strip() else None

        def words(name: str) -> tuple[str, ...]:
            return tuple((fields.get(name) or "").replace(",", " ").split())

        days = words("days")
        return cls(
            time=one("time"),
            timezone=one("timezone"),
            days=",".join(days) if days else None,
            cron=one("cron"),
            pack=one("pack"),
            tags=words("tags"),
            difficulty=one("difficulty"),
            window=one("window"),
            mention=one("mention"),
            kinds=words("kinds"),
            round=one("round"),
        )

    def spec(self, default_timezone: str) -> ScheduleSpec:
        """The validated spec (:class:`ScheduleError` names the field that is wrong)."""
        return build_spec(
            time=self.time,
            timezone=_blank(self.timezone) or default_timezone,
            days=self.days,
            cron=self.cron,
            pack=self.pack,
            tags=self.tags,
            difficulty=self.difficulty,
            window=self.window,
            mention=self.mention,
            kinds=self.kinds,
            round=self.round,
        )


def parse_kinds(kinds: Iterable[str]) -> tuple[str, ...]:
    """The kinds a member or admin typed (``mc,flashcard``), checked; see :func:`_parse_kinds`."""
    return _parse_kinds(kinds)


def _parse_kinds(kinds: Iterable[str]) -> tuple[str, ...]:
    """``flashcard,open`` -> the kinds in a stable order; unknown names are refused."""
    found: set[str] = set()
    for raw in kinds:
        for part in raw.lower().replace("-", "_").split(","):
            name = KIND_ALIASES.get(part.strip(), part.strip())
            if not name:
                continue
            if name not in ALL_KINDS:
                raise ScheduleError(
                    "kinds", f"{part.strip()!r} is not a kind ({', '.join(ALL_KINDS)})"
                )
            found.add(name)
    return tuple(kind for kind in ALL_KINDS if kind in found)


def _blank(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def _when_fields(
    at: str | dt.time | None, days: str | DaySpec | None, cron: str | None
) -> tuple[dt.time | None, DaySpec]:
    """Time of day plus a day rule, or a cron expression alone."""
    if isinstance(at, str):
        at = _parse_time(at) if _blank(at) else None
    if isinstance(days, str):
        days = _parse_days(days) if _blank(days) else None
    if cron is not None:
        if days is not None:
            raise ScheduleError("cron", "a cron expression gives the days; drop DAYS or --cron")
        days = DaySpec(cron=_parse_cron_field(cron))
    if days is not None and days.cron is not None:
        if at is not None:
            raise ScheduleError("cron", "a cron expression gives the times; drop TIME or --cron")
        _check_posts_per_day(days.cron)
        return None, days
    if at is None:
        raise ScheduleError("time", "missing TIME (or a --cron expression)")
    return _check_time(at), days or DaySpec.every_day()


def _parse_cron_field(text: str) -> CronExpr:
    try:
        expr = parse_cron(text)
    except CronError as exc:
        raise ScheduleError("cron", exc.reason) from exc
    return expr


def _check_posts_per_day(expr: CronExpr) -> None:
    fires = len(expr.times())
    if fires > MAX_POSTS_PER_DAY:
        raise ScheduleError(
            "cron",
            f"{expr.text!r} fires {fires} times a day; at most {MAX_POSTS_PER_DAY} are allowed",
        )


def _parse_pack(pack: str | None) -> str | None:
    value = _blank(pack)
    if value is None:
        return None
    if not _SLUG.fullmatch(value.lower()):
        raise ScheduleError("pack", f"{value!r} is not a pack id (lower-case letters, digits, -._)")
    return value.lower()


def parse_filters(
    difficulty: str | None, tags: Iterable[str]
) -> tuple[str | None, tuple[str, ...]]:
    """Validate the question filters every command takes (``quiz`` and schedules alike)."""
    return _parse_difficulty(difficulty), _parse_tags(tags)


def _parse_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Tags in the order given, duplicates dropped; ``a,b`` counts as two tags."""
    found: list[str] = []
    for raw in tags:
        if not raw.strip():
            continue  # An empty form field, not an empty tag.
        for part in raw.lower().split(","):
            tag = part.strip()
            if not _TAG.fullmatch(tag):
                raise ScheduleError(
                    "tags", f"{tag!r} is not a tag (lower-case letters, digits, -_)"
                )
            found.append(tag)
    return tuple(dict.fromkeys(found))


def _parse_difficulty(difficulty: str | None) -> str | None:
    value = _blank(difficulty)
    if value is None:
        return None
    if value.lower() not in DIFFICULTIES:
        raise ScheduleError("difficulty", f"{value!r} is not one of easy, medium, hard")
    return value.lower()


def _parse_window(window: str | timedelta | None) -> timedelta | None:
    """A duration, or None/``next`` for "until the next question posts"; whole seconds kept."""
    if isinstance(window, str):
        value = _blank(window)
        if value is None or value.lower() == "next":
            return None
        try:
            window = parse_duration(value)
        except ValueError as exc:
            raise ScheduleError("window", f"{exc}, or next") from exc
    if window is None:
        return None
    window = timedelta(seconds=int(window.total_seconds()))
    if not MIN_WINDOW <= window <= MAX_WINDOW:
        raise ScheduleError(
            "window", f"{format_duration(window)} is outside 1m to 7d; answers need time"
        )
    return window


def _parse_mention(mention: str | None) -> str | None:
    """A role or user-group mention, passed on to the adapter to resolve; no mass pings."""
    value = _blank(mention)
    if value is None:
        return None
    if value.lower() in _MASS_MENTIONS:
        raise ScheduleError("mention", f"{value} pings everyone; mention a role or user group")
    if len(value) > _MAX_MENTION_CHARS or not value.isprintable():
        raise ScheduleError("mention", "a mention is one role or user-group name, up to 100 chars")
    return value


# --- the console / chat form ---------------------------------------------------------------

ALL_KINDS = ("flashcard", "multiple_choice", "practice", "open", "exercise", "typed")
SCORED_KINDS = ("flashcard", "multiple_choice", "practice", "typed")
"""What a schedule posts by default: kinds a member can answer, so a streak can go on."""
KIND_ALIASES = {
    "mc": "multiple_choice",
    "prompt": "open",
    "prompts": "open",
    "exercises": "exercise",
    "code": "exercise",
    "type": "typed",
    "typed_answer": "typed",
}


def word_kind(token: str) -> str:
    """Times start with a digit, days are day words; anything else is treated as a timezone
    unless it looks more like a misspelt day, so that the error names the right field."""
    if token[:1].isdigit():
        return "time"
    try:
        _parse_days(token)
    except ScheduleError:
        pass
    else:
        return "days"
    if _zone_key(token) in _zone_index() or not _looks_like_days(token):
        return "timezone"
    return "days"


# --- occurrences ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Occurrence:
    instant: datetime  # aware, UTC
    wall: datetime  # the naive local wall time the rule asked for (differs if shifted)


def next_occurrence(spec: ScheduleSpec, after: datetime) -> datetime:
    """The first posting instant strictly after ``after`` (aware), as an aware UTC datetime.

    Computed afresh from local dates each time (see the module docstring for the DST rules),
    so a stored schedule never drifts, whatever happened to earlier occurrences.
    """
    return _next(spec, after).instant


def occurrences(spec: ScheduleSpec, after: datetime, n: int) -> list[datetime]:
    """The next ``n`` posting instants after ``after``, strictly increasing, in UTC."""
    return [occ.instant for occ in _upcoming(spec, after, n)]


def preview(spec: ScheduleSpec, after: datetime, n: int) -> list[str]:
    """The next ``n`` postings as the channel sees them: ``Mon 2026-03-30 09:00 CEST``.

    A time moved by a DST gap or posted at the first of two identical wall times says so,
    so an admin previewing a schedule is not surprised by 03:30 or by a single 01:30.
    """
    tz = ZoneInfo(spec.timezone)
    return [_format(occ, tz) for occ in _upcoming(spec, after, n)]


def upcoming(spec: ScheduleSpec, after: datetime, n: int) -> list[tuple[datetime, str]]:
    """:func:`occurrences` and :func:`preview` together, walked once: each next posting as an
    instant in the schedule's zone and as the channel reads it (what a listing shows)."""
    tz = ZoneInfo(spec.timezone)
    return [(occ.instant.astimezone(tz), _format(occ, tz)) for occ in _upcoming(spec, after, n)]


def occurrence_key(when: datetime, /) -> str:
    """The canonical key of an occurrence, ``2026-03-30T07:00:00Z``: UTC, whole seconds.

    Storage uses it in ``UNIQUE(schedule_id, occurrence)``, so the same instant must always
    give the same text whatever timezone object it arrives with. Sub-seconds are dropped.
    """
    _require_aware(when, "occurrence")
    return when.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def _upcoming(spec: ScheduleSpec, after: datetime, n: int) -> list[_Occurrence]:
    if n < 0:
        raise ValueError(f"n must be 0 or more, not {n}")
    found: list[_Occurrence] = []
    cursor = after
    for _ in range(n):
        occ = _next(spec, cursor)
        found.append(occ)
        cursor = occ.instant
    return found


def _next(spec: ScheduleSpec, after: datetime) -> _Occurrence:
    """Walk local dates from the day before ``after``'s local date (a time shifted past
    midnight can land after ``after``) and take the earliest instant later than ``after``."""
    _require_aware(after, "after")
    tz = ZoneInfo(spec.timezone)
    first_day = after.astimezone(tz).date() - timedelta(days=1)
    for offset in range(_SEARCH_DAYS):
        day = first_day + timedelta(days=offset)
        found = _later_than(after, _on_date(spec, tz, day))
        if found:
            # A time shifted past midnight may land after early times of the next date. No
            # zone does that today (it needs a gap that is not whole hours crossing midnight);
            # a test with a synthetic zone keeps this honest.
            found += _later_than(after, _on_date(spec, tz, day + timedelta(days=1)))
            return min(found, key=lambda occ: occ.instant)
    raise ScheduleError("days", f"this schedule does not post within {_SEARCH_DAYS} days")


def _later_than(after: datetime, found: list[_Occurrence]) -> list[_Occurrence]:
    return [occ for occ in found if occ.instant > after]


def _on_date(spec: ScheduleSpec, tz: ZoneInfo, day: date) -> list[_Occurrence]:
    """Every posting the rule asks for on local date ``day``, with the DST rules applied."""
    if not spec.days.admits(day):
        return []
    if spec.time is None:
        assert spec.days.cron is not None
        walls = spec.days.cron.times()
    else:
        walls = (spec.time,)
    found: dict[datetime, _Occurrence] = {}
    for wall in walls:
        instant = _resolve(day, wall, tz)
        if spec.time is not None and _pushed_onto_posting_day(spec, tz, day, instant):
            continue  # Rule 5: that date has its own posting.
        found.setdefault(instant, _Occurrence(instant, datetime.combine(day, wall)))
    return list(found.values())


def _resolve(day: date, wall: dt.time, tz: ZoneInfo) -> datetime:
    """Rules 1-3: ``fold=0`` -- an ambiguous time is its first instance, and a nonexistent one
    uses the offset from before the gap, which moves it forward by the gap's length."""
    return datetime.combine(day, wall, tzinfo=tz).astimezone(UTC)


def _pushed_onto_posting_day(
    spec: ScheduleSpec, tz: ZoneInfo, day: date, instant: datetime
) -> bool:
    local_day = instant.astimezone(tz).date()
    return local_day != day and spec.days.admits(local_day)


def _format(occ: _Occurrence, tz: ZoneInfo) -> str:
    local = occ.instant.astimezone(tz)
    text = f"{_DAY_ABBR[local.weekday()].title()} {local:%Y-%m-%d %H:%M} {local.tzname()}"
    wall = occ.wall
    if local.replace(tzinfo=None) != wall:
        return f"{text} (shifted: clocks skip {wall:%H:%M} on {wall:%Y-%m-%d})"
    if _is_ambiguous(wall, tz):
        return f"{text} (first of two {wall:%H:%M}s)"
    return text


def _is_ambiguous(wall: datetime, tz: ZoneInfo) -> bool:
    """For a wall time that exists: whether it happens twice (the two folds differ)."""
    first = wall.replace(tzinfo=tz, fold=0).utcoffset()
    second = wall.replace(tzinfo=tz, fold=1).utcoffset()
    return first != second


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime, got {value!r}")


# --- the stored form of a spec ---------------------------------------------------------------


def encode_spec(spec: ScheduleSpec) -> str:
    """The JSON kept in ``schedules.spec``: the fields an admin gave, readable in sqlite3."""
    cron = spec.days.cron
    return json.dumps(
        {
            "time": None if spec.time is None else f"{spec.time:%H:%M}",
            "timezone": spec.timezone,
            "days": None if cron is not None else spec.days.text,
            "cron": None if cron is None else cron.text,
            "pack": spec.pack,
            "tags": list(spec.tags),
            "difficulty": spec.difficulty,
            "window": None if spec.window is None else int(spec.window.total_seconds()),
            "mention": spec.mention,
            # Only when given, so the stored JSON of older schedules stays what it was.
            **({"kinds": list(spec.kinds)} if spec.kinds else {}),
            **({"round": f"{spec.round[0]}x{spec.round[1]}s"} if spec.round else {}),
        },
        ensure_ascii=False,
    )


@lru_cache(maxsize=4096)
def decode_spec(text: str) -> ScheduleSpec:
    """Parse the stored JSON back, through the same validation an admin's input gets.

    Raises :class:`ScheduleError` (or ``ValueError`` for broken JSON) if the stored spec is no
    longer valid, e.g. a timezone that a tzdata update removed.
    """
    data = json.loads(text)
    window = data.get("window")
    return build_spec(
        time=data.get("time"),
        timezone=data["timezone"],
        days=data.get("days"),
        cron=data.get("cron"),
        pack=data.get("pack"),
        tags=data.get("tags") or (),
        difficulty=data.get("difficulty"),
        window=None if window is None else timedelta(seconds=int(window)),
        mention=data.get("mention"),
        kinds=data.get("kinds") or (),
        round=data.get("round"),
    )
