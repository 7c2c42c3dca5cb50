"""Pure scoring rules: points, daily streaks, the streak bonus, and leaderboard windows.

Kept free of I/O so the rules can be read in one screen and tested exhaustively. "Days" are
local calendar days in the workspace's timezone: a study group in Tokyo and one in New York
both get a fresh day at their own midnight.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.core.models import Window
from bot.questions.schema import Difficulty

__all__ = [
    "BASE_POINTS",
    "FREEZE_EVERY",
    "MAX_FREEZES",
    "STREAK_BONUS_CAP",
    "STREAK_BONUS_PER_DAY",
    "ScoreDecision",
    "StreakState",
    "advance_streak",
    "current_streak",
    "decide",
    "freeze_news",
    "local_day",
    "period_key",
    "period_keys",
    "points_for",
    "replay_streak",
    "streak_as_of",
    "streak_bonus",
    "window_start",
]

BASE_POINTS = {Difficulty.EASY: 10, Difficulty.MEDIUM: 20, Difficulty.HARD: 30}
SELF_GRADED_SHARE = 0.5  # flashcards are graded by the member; they count half
STREAK_BONUS_PER_DAY = 2
STREAK_BONUS_CAP = 10
FREEZE_EVERY = 7  # a freeze is earned on streak day 7, 14, 21, ...
MAX_FREEZES = 2  # held at most; one earned beyond that is not kept


@dataclass(frozen=True, slots=True)
class StreakState:
    """A member's streak as of their last answered day.

    ``days`` counts answered days only: a day covered by a freeze keeps the streak going but
    does not add to it. ``freezes`` is how many the member holds (0..:data:`MAX_FREEZES`);
    ``freezes_used`` how many have ever covered a missed day (it only grows).
    """

    days: int = 0
    best: int = 0
    last_day: date | None = None
    freezes: int = 0
    freezes_used: int = 0


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


def streak_as_of(state: StreakState, today: date) -> StreakState:
    """The stored state with the freezes spent on the days missed before ``today``.

    A missed day is a whole local day with no answer between the last answered day and
    ``today`` (today itself is not over, so it is never missed yet). Freezes are spent one per
    missed day, automatically, oldest day first. If there are more missed days than freezes,
    the freezes are all spent and the streak is broken (``days`` 0). ``last_day`` is kept, so
    applying this again (or :func:`advance_streak` later) spends nothing twice: the result
    depends only on the answered days, and replaying them gives the same state.
    """
    if state.last_day is None or state.last_day >= today:
        return state
    missed = (today - state.last_day).days - 1
    if missed <= 0:
        return state
    if missed <= state.freezes:
        return replace(
            state,
            freezes=state.freezes - missed,
            freezes_used=state.freezes_used + missed,
            last_day=today - timedelta(days=1),  # covered up to yesterday
        )
    return replace(
        state,
        days=0,
        freezes=0,
        freezes_used=state.freezes_used + state.freezes,
        last_day=today - timedelta(days=1),
    )


def advance_streak(state: StreakState, today: date) -> StreakState:
    """A streak counts consecutive local days with at least one answer (right or wrong).

    Showing up is the habit worth rewarding; correctness is rewarded by points. A missed day
    is covered by a freeze if the member holds one (:func:`streak_as_of`); a freeze is earned
    on every :data:`FREEZE_EVERY`-th answered day of a streak, and at most
    :data:`MAX_FREEZES` are held.
    """
    if state.last_day == today:
        return state
    if state.last_day is not None and state.last_day > today:
        return state  # a late clock; never move a streak backwards
    state = streak_as_of(state, today)
    days = state.days + 1 if state.last_day == today - timedelta(days=1) else 1
    freezes = state.freezes
    if days % FREEZE_EVERY == 0:
        freezes = min(freezes + 1, MAX_FREEZES)
    return replace(state, days=days, best=max(state.best, days), last_day=today, freezes=freezes)


def freeze_news(before: StreakState, after: StreakState) -> str | None:
    """What an answer did to the member's streak freezes, in words, or None: a freeze that
    covered a missed day, and one earned (said even when the member already holds the most,
    so the streak's seventh day is never silent)."""
    used = after.freezes_used - before.freezes_used
    parts = []
    if used > 0:
        days = "the day" if used == 1 else f"the {used} days"
        parts.append(
            f"🧊 A streak freeze covered {days} you missed, so your streak goes on "
            f"({_held(after.freezes)})."
        )
    if after.days != before.days and after.days > 0 and after.days % FREEZE_EVERY == 0:
        if after.freezes > before.freezes - used:
            parts.append(
                f"🧊 {after.days} days in a row: you earned a streak freeze ({_held(after.freezes)}"
                "). It covers a day you miss."
            )
        else:
            parts.append(
                f"🧊 {after.days} days in a row: you would earn a streak freeze, but you hold "
                f"the most ({MAX_FREEZES}) already."
            )
    return " ".join(parts) or None


def _held(freezes: int) -> str:
    return f"you hold {freezes}" if freezes else "you hold none now"


def replay_streak(days: Iterable[date]) -> StreakState:
    """The streak state after answering on ``days`` (local days, in the order answered): what
    the answers stored one by one add up to, so it checks a stored state (freezes included)."""
    state = StreakState()
    for day in days:
        state = advance_streak(state, day)
    return state


def streak_bonus(streak_days: int) -> int:
    """Extra points on a correct answer: +2 per day of streak beyond the first, capped at +10."""
    return min(max(streak_days - 1, 0) * STREAK_BONUS_PER_DAY, STREAK_BONUS_CAP)


def current_streak(state: StreakState, today: date) -> int:
    """The streak as it stands today: alive if the member answered today or yesterday, or
    holds enough freezes to cover every day missed since (:func:`streak_as_of`)."""
    state = streak_as_of(state, today)
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
