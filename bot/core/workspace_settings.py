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
from bot.core.rounds import (
    MAX_PAUSE,
    MAX_QUESTIONS,
    MAX_SECONDS,
    MIN_PAUSE,
    MIN_QUESTIONS,
    MIN_SECONDS,
    RoundSpec,
    Scoring,
)
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
    ROUND_QUESTIONS = "round-questions"
    ROUND_SECONDS = "round-seconds"
    ROUND_PAUSE = "round-pause"
    ROUND_SPEED_BONUS = "round-speed-bonus"
    ROUND_STARTERS = "round-starters"
    ROUND_TYPED = "round-typed"
    ROUND_SCORING = "round-scoring"
    # A member's own choice, not the workspace's: /solutions may show their passing solutions.
    SHARE_SOLUTIONS = "share-solutions"
    # Where a role reward's grant or removal is announced (/rewards): channel or dm.
    REWARD_NOTICES = "reward-notices"
    # Whether the per-member gradebook export is offered (item statistics stay for admins).
    ANALYTICS = "analytics"

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
    rounds: dict[Setting, int] = field(default_factory=dict)  # the round-* settings, as stored
    reward_notices_by_dm: bool = False  # reward-notices dm; default: in the reward's channel
    analytics: bool = True  # analytics off: no per-member export

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

    def round_spec(self) -> RoundSpec:
        """What ``round start`` asks for when a member gives no numbers."""
        built = RoundSpec()
        return RoundSpec(
            questions=self.rounds.get(Setting.ROUND_QUESTIONS, built.questions),
            seconds=self.rounds.get(Setting.ROUND_SECONDS, built.seconds),
            pause=self.rounds.get(Setting.ROUND_PAUSE, built.pause),
            speed_bonus=bool(self.rounds.get(Setting.ROUND_SPEED_BONUS, int(built.speed_bonus))),
            typed=bool(self.rounds.get(Setting.ROUND_TYPED, int(built.typed))),
            scoring=Scoring.ACCURACY if self.rounds.get(Setting.ROUND_SCORING) else Scoring.SPEED,
        )

    @property
    def rounds_for_admins_only(self) -> bool:
        """``round-starters admins``: only admins start rounds (default: everyone)."""
        return bool(self.rounds.get(Setting.ROUND_STARTERS, 0))

    def shown(self, setting: Setting, default_window: timedelta | None) -> str:
        """The value as /settings lists it."""
        if setting in _ROUND_SETTINGS:
            spec = self.round_spec()
            return {
                Setting.ROUND_QUESTIONS: str(spec.questions),
                Setting.ROUND_SECONDS: f"{spec.seconds}s",
                Setting.ROUND_PAUSE: f"{spec.pause}s",
                Setting.ROUND_SPEED_BONUS: "on" if spec.speed_bonus else "off",
                Setting.ROUND_STARTERS: "admins" if self.rounds_for_admins_only else "everyone",
                Setting.ROUND_TYPED: "on" if spec.typed else "off",
                Setting.ROUND_SCORING: spec.scoring.value,
            }[setting]
        if setting is Setting.TIMEZONE:
            return self.timezone
        if setting is Setting.SHARE_SOLUTIONS:
            return "each member's own (off by default)"
        if setting is Setting.REWARD_NOTICES:
            return "dm" if self.reward_notices_by_dm else "channel"
        if setting is Setting.ANALYTICS:
            return "on" if self.analytics else "off"
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
    if setting in _ROUND_SETTINGS or setting in _WORDS:
        return _round_value(setting, text), None
    try:
        points = int(text)
    except ValueError:
        raise BadInput(
            f"`{setting.value}` takes a whole number of points (0 to {MAX_POINTS}), not `{text}`."
        ) from None
    if not 0 <= points <= MAX_POINTS:
        raise BadInput(f"`{setting.value}` must be 0 to {MAX_POINTS} points, not {points}.")
    return str(points), None


_ROUND_SETTINGS = (
    Setting.ROUND_QUESTIONS,
    Setting.ROUND_SECONDS,
    Setting.ROUND_PAUSE,
    Setting.ROUND_SPEED_BONUS,
    Setting.ROUND_STARTERS,
    Setting.ROUND_TYPED,
    Setting.ROUND_SCORING,
)
_RANGES = {
    Setting.ROUND_QUESTIONS: (MIN_QUESTIONS, MAX_QUESTIONS, "questions"),
    Setting.ROUND_SECONDS: (MIN_SECONDS, MAX_SECONDS, "seconds"),
    Setting.ROUND_PAUSE: (MIN_PAUSE, MAX_PAUSE, "seconds"),
}
_WORDS = {
    Setting.ROUND_SPEED_BONUS: {"on": 1, "off": 0},
    Setting.ROUND_TYPED: {"on": 1, "off": 0},
    Setting.ROUND_SCORING: {"speed": 0, "accuracy": 1},
    Setting.ROUND_STARTERS: {"everyone": 0, "admins": 1},
    Setting.REWARD_NOTICES: {"channel": 0, "dm": 1},
    Setting.ANALYTICS: {"on": 1, "off": 0},
}


def _round_value(setting: Setting, text: str) -> str:
    """A round (or word) setting's stored number: a count in its range, or one of its words."""
    if setting in _WORDS:
        words = _WORDS[setting]
        stored = words.get(text.lower())
        if stored is None:
            raise BadInput(f"`{setting.value}` is {' or '.join(words)}, not `{text}`.")
        return str(stored)
    low, high, unit = _RANGES[setting]
    number = text.lower().removesuffix("s") if unit == "seconds" else text
    if not number.isdigit() or not low <= int(number) <= high:
        raise BadInput(f"`{setting.value}` takes {low} to {high} {unit}, not `{text}`.")
    return str(int(number))
