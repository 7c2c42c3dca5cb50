"""Pure scoring rules: points, daily streaks, the streak bonus, and leaderboard windows.

Kept free of I/O so the rules can be read in one screen and tested exhaustively. "Days" are
local calendar days in the workspace's timezone: a study group in Tokyo and one in New York
both get a fresh day at their own midnight.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.models import Window
from bot.questions.schema import Difficulty

__all__ = [
    "BASE_POINTS",
    "STREAK_BONUS_CAP",
    "STREAK_BONUS_PER_DAY",
    "ScoreDecision",
    "StreakState",
    "current_streak",
    "decide",
    "local_day",
    "period_key",
    "period_keys",
    "points_for",
    "streak_bonus",
    "window_start",
]

BASE_POINTS = {Difficulty.EASY: 10, Difficulty.MEDIUM: 20, Difficulty.HARD: 30}
SELF_GRADED_SHARE = 0.5  # flashcards are graded by the member; they count half
STREAK_BONUS_PER_DAY = 2
STREAK_BONUS_CAP = 10


@dataclass(frozen=True, slots=True)
class StreakState:
    days: int = 0
    best: int = 0
    last_day: date | None = None


@dataclass(frozen=True, slots=True)
class ScoreDecision:
    points: int
    bonus: int
    streak: StreakState


def local_day(moment: datetime, tz: ZoneInfo) -> date:
    return moment.astimezone(tz).date()


def points_for(
    difficulty: str, correct: bool, *, self_graded: bool, base: int | None = None
) -> int:
    """Points for one answer: difficulty-weighted; wrong answers score nothing.

    ``base`` is the workspace's points for that difficulty (``/settings points-hard 40``);
    ``None`` means the built-in :data:`BASE_POINTS`.
    """
    if not correct:
        return 0
    if base is None:
        base = BASE_POINTS[Difficulty(difficulty)]
    return round(base * SELF_GRADED_SHARE) if self_graded else base


def advance_streak(state: StreakState, today: date) -> StreakState:
    """A streak counts consecutive local days with at least one answer (right or wrong).

    Showing up is the habit worth rewarding; correctness is rewarded by points.
    """
    if state.last_day == today:
        return state
    if state.last_day is not None and state.last_day > today:
        return state  # a late clock; never move a streak backwards
    days = state.days + 1 if state.last_day == today - timedelta(days=1) else 1
    return StreakState(days=days, best=max(state.best, days), last_day=today)


def streak_bonus(streak_days: int) -> int:
    """Extra points on a correct answer: +2 per day of streak beyond the first, capped at +10."""
    return min(max(streak_days - 1, 0) * STREAK_BONUS_PER_DAY, STREAK_BONUS_CAP)


def current_streak(state: StreakState, today: date) -> int:
    """The streak as it stands today: alive if the member answered today or yesterday."""
    if state.last_day is None or state.last_day < today - timedelta(days=1):
        return 0
    return state.days


def decide(
    state: StreakState,
    today: date,
    *,
    difficulty: str,
    correct: bool | None,
    self_graded: bool,
    base: int | None = None,
) -> ScoreDecision:
    """Score one first answer. ``correct=None`` means an unscored kind (no points, no streak)."""
    if correct is None:
        return ScoreDecision(0, 0, state)
    streak = advance_streak(state, today)
    points = points_for(difficulty, correct, self_graded=self_graded, base=base)
    bonus = streak_bonus(streak.days) if correct else 0
    return ScoreDecision(points, bonus, streak)


def period_key(window: Window, moment: datetime, tz: ZoneInfo) -> str:
    """The leaderboard period of an instant: ``all``, ``w:<local Monday>``, ``m:<YYYY-MM>``."""
    start = window_start(window, moment, tz)
    if start is None:
        return "all"
    if window is Window.WEEK:
        return f"w:{start.date().isoformat()}"
    return f"m:{start:%Y-%m}"


def period_keys(moment: datetime, tz: ZoneInfo) -> tuple[str, ...]:
    """Every period a score event at ``moment`` counts towards."""
    return tuple(period_key(window, moment, tz) for window in Window)


def window_start(window: Window, now: datetime, tz: ZoneInfo) -> datetime | None:
    """Where a leaderboard window begins: local Monday 00:00, local 1st 00:00, or never."""
    today = now.astimezone(tz).date()
    if window is Window.WEEK:
        start = today - timedelta(days=today.weekday())
    elif window is Window.MONTH:
        start = today.replace(day=1)
    else:
        return None
    return datetime.combine(start, time(0), tzinfo=tz)
