"""A workspace's own settings, changed by its admins in chat (``/settings``).

The environment (``STUDYBOT_TIMEZONE``, ``QUIZ_WINDOW``) only gives a new workspace its first
values; after that the workspace's stored values win, so a group is never stuck with what the
bot happened to be started with.

A timezone change must not rewrite history or break a streak in the middle of a day, so the new
zone takes over at the next local midnight *in the new zone*; until then days and weeks still
end where members expect them to (:meth:`WorkspaceSettings.zone_at`). Pure: parsing, checking
and describing values; storage keeps them and the log of who changed what.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.durations import parse_duration
from bot.core.errors import BadInput
from bot.core.schedule_spec import ScheduleError, canonical_timezone, timezone_warning
from bot.core.scoring import BASE_POINTS
from bot.questions.schema import Difficulty

__all__ = [
    "MAX_POINTS",
    "MAX_QUIZ_WINDOW",
    "MIN_QUIZ_WINDOW",
    "Setting",
    "WorkspaceSettings",
    "next_local_midnight",
    "parse_value",
]

MIN_QUIZ_WINDOW = timedelta(minutes=1)
MAX_QUIZ_WINDOW = timedelta(days=7)
MAX_POINTS = 1000


class Setting(enum.StrEnum):
    """What an admin may change, by the name typed in chat."""

    TIMEZONE = "timezone"
    QUIZ_WINDOW = "quiz-window"
    POINTS_EASY = "points-easy"
    POINTS_MEDIUM = "points-medium"
    POINTS_HARD = "points-hard"

    @property
    def difficulty(self) -> Difficulty | None:
        if self.name.startswith("POINTS_"):
            return Difficulty(self.name.removeprefix("POINTS_").lower())
        return None

    @classmethod
    def named(cls, typed: str) -> Setting:
        key = typed.strip().lower().replace("_", "-")
        key = {"tz": "timezone", "window": "quiz-window"}.get(key, key)
        try:
            return cls(key)
        except ValueError:
            names = ", ".join(f"`{s.value}`" for s in cls)
            raise BadInput(f"`{typed}` is not a setting; the settings are {names}.") from None


@dataclass(frozen=True, slots=True)
class WorkspaceSettings:
    """The values in force; ``None`` means the bot's default (environment or built in)."""

    timezone: str
    previous_timezone: str | None = None
    timezone_from: datetime | None = None  # the instant ``timezone`` took or takes over
    quiz_window: timedelta | None = None
    points: dict[Difficulty, int] = field(default_factory=dict)

    def zone_name_at(self, moment: datetime) -> str:
        """The zone whose days and weeks ``moment`` falls in (the old one until the switch)."""
        if self.previous_timezone and self.timezone_from and moment < self.timezone_from:
            return self.previous_timezone
        return self.timezone

    def zone_at(self, moment: datetime) -> ZoneInfo:
        return ZoneInfo(self.zone_name_at(moment))

    def base_points(self, difficulty: Difficulty | str) -> int:
        level = Difficulty(difficulty)
        return self.points.get(level, BASE_POINTS[level])

    def window(self, default: timedelta | None) -> timedelta | None:
        return self.quiz_window if self.quiz_window is not None else default

    def shown(self, setting: Setting, default_window: timedelta | None) -> str:
        """The value as /settings lists it."""
        if setting is Setting.TIMEZONE:
            return self.timezone
        if setting is Setting.QUIZ_WINDOW:
            window = self.window(default_window)
            return "no limit" if window is None else describe_window(window)
        level = setting.difficulty
        assert level is not None
        return str(self.base_points(level))


def describe_window(window: timedelta) -> str:
    minutes = int(window.total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, minutes = divmod(rest, 60)
    parts = (f"{n}{unit}" for n, unit in ((days, "d"), (hours, "h"), (minutes, "m")) if n)
    return "".join(parts) or "0m"


def next_local_midnight(moment: datetime, zone: ZoneInfo) -> datetime:
    """The first 00:00 in ``zone`` after ``moment`` (a DST gap at midnight: the day's start)."""
    local = moment.astimezone(zone)
    day = local.date() + timedelta(days=1)
    start = datetime.combine(day, time(0, 0), tzinfo=zone)
    # A zone that skips midnight (e.g. a DST change at 00:00) has no 00:00; fold to a real time.
    return start.astimezone(ZoneInfo("UTC")).astimezone(zone).astimezone(moment.tzinfo)


def parse_value(setting: Setting, typed: str) -> tuple[str, str | None]:
    """The canonical stored value of ``typed`` for ``setting``, and a warning if any.

    Raises :class:`BadInput` naming the setting and what was expected.
    """
    text = typed.strip()
    if not text:
        raise BadInput(f"`{setting.value}` needs a value.")
    if setting is Setting.TIMEZONE:
        try:
            name = canonical_timezone(text)
        except ScheduleError as exc:
            raise BadInput(f"`{setting.value}`: {exc.reason}") from None
        return name, timezone_warning(name)
    if setting is Setting.QUIZ_WINDOW:
        try:
            window = parse_duration(text)
        except ValueError as exc:
            raise BadInput(
                f"`{setting.value}`: {exc}; expected a duration like `45m` or `2h`."
            ) from None
        if not MIN_QUIZ_WINDOW <= window <= MAX_QUIZ_WINDOW:
            raise BadInput(
                f"`{setting.value}` must be between {describe_window(MIN_QUIZ_WINDOW)} and "
                f"{describe_window(MAX_QUIZ_WINDOW)}, not {text}."
            )
        return str(int(window.total_seconds())), None
    try:
        points = int(text)
    except ValueError:
        raise BadInput(
            f"`{setting.value}` takes a whole number of points (0 to {MAX_POINTS}), not `{text}`."
        ) from None
    if not 0 <= points <= MAX_POINTS:
        raise BadInput(f"`{setting.value}` must be 0 to {MAX_POINTS} points, not {points}.")
    return str(points), None
