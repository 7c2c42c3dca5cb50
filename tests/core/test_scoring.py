"""The scoring rules as a member experiences them: points, streaks, bonus, windows."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.models import Window
from bot.core.scoring import (
    StreakState,
    advance_streak,
    current_streak,
    decide,
    local_day,
    points_for,
    replay_streak,
    streak_as_of,
    streak_bonus,
    window_start,
)


@pytest.mark.parametrize(
    ("difficulty", "self_graded", "expected"),
    [("easy", False, 10), ("medium", False, 20), ("hard", False, 30), ("hard", True, 15)],
)
def test_points_weighted_by_difficulty(difficulty: str, self_graded: bool, expected: int) -> None:
    assert points_for(difficulty, True, self_graded=self_graded) == expected
    assert points_for(difficulty, False, self_graded=self_graded) == 0


def test_streak_grows_on_consecutive_days_and_resets_after_a_gap() -> None:
    day = date(2026, 3, 1)
    state = advance_streak(StreakState(), day)
    assert (state.days, state.best) == (1, 1)
    state = advance_streak(state, day)  # a second answer the same day changes nothing
    assert state.days == 1
    state = advance_streak(state, day + timedelta(days=1))
    state = advance_streak(state, day + timedelta(days=2))
    assert (state.days, state.best) == (3, 3)
    state = advance_streak(state, day + timedelta(days=4))  # missed a day
    assert (state.days, state.best) == (1, 3)


def test_streak_never_moves_backwards_for_a_late_clock() -> None:
    state = StreakState(4, 4, date(2026, 3, 10))
    assert advance_streak(state, date(2026, 3, 9)) == state


def test_streak_bonus_is_capped() -> None:
    assert [streak_bonus(n) for n in range(1, 9)] == [0, 2, 4, 6, 8, 10, 10, 10]


def test_wrong_answer_keeps_the_streak_but_earns_no_bonus() -> None:
    state = StreakState(3, 3, date(2026, 3, 1))
    wrong = decide(state, date(2026, 3, 2), difficulty="hard", correct=False, self_graded=False)
    assert (wrong.points, wrong.bonus, wrong.streak.days) == (0, 0, 4)
    right = decide(state, date(2026, 3, 2), difficulty="hard", correct=True, self_graded=False)
    assert (right.points, right.bonus, right.streak.days) == (30, 6, 4)


def test_unscored_answers_leave_everything_alone() -> None:
    state = StreakState(2, 5, date(2026, 3, 1))
    decision = decide(state, date(2026, 3, 2), difficulty="easy", correct=None, self_graded=False)
    assert (decision.points, decision.bonus, decision.streak) == (0, 0, state)


def test_streak_follows_local_days_not_utc_days() -> None:
    """Two answers on one UTC day are two local days in New York: 23:30 and 00:30 local."""
    tz = ZoneInfo("America/New_York")
    evening = datetime(2026, 3, 3, 4, 30, tzinfo=UTC)  # 23:30 on 2 March in New York
    after_midnight = datetime(2026, 3, 3, 5, 30, tzinfo=UTC)  # 00:30 on 3 March in New York
    assert evening.date() == after_midnight.date()
    state = advance_streak(StreakState(), local_day(evening, tz))
    state = advance_streak(state, local_day(after_midnight, tz))
    assert state.days == 2
    # ...while the same two instants are one day in UTC.
    utc_state = advance_streak(advance_streak(StreakState(), evening.date()), after_midnight.date())
    assert utc_state.days == 1


def test_current_streak_is_zero_once_a_day_is_missed() -> None:
    state = StreakState(5, 5, date(2026, 3, 10))
    assert current_streak(state, date(2026, 3, 10)) == 5
    assert current_streak(state, date(2026, 3, 11)) == 5  # still time to answer today
    assert current_streak(state, date(2026, 3, 12)) == 0


def test_week_and_month_windows_start_at_local_midnight() -> None:
    tz = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)  # Wednesday
    week = window_start(Window.WEEK, now, tz)
    month = window_start(Window.MONTH, now, tz)
    assert week is not None and month is not None
    assert week.astimezone(UTC) == datetime(2026, 3, 1, 23, 0, tzinfo=UTC)  # Mon 00:00 CET
    assert month.astimezone(UTC) == datetime(2026, 2, 28, 23, 0, tzinfo=UTC)
    assert window_start(Window.ALL, now, tz) is None
    # 00:30 on a Monday in Berlin is still Sunday in UTC, but already the new local week.
    monday_early = datetime(2026, 3, 8, 23, 30, tzinfo=UTC)
    new_week = window_start(Window.WEEK, monday_early, tz)
    assert new_week is not None
    assert new_week.astimezone(UTC) == datetime(2026, 3, 8, 23, 0, tzinfo=UTC)


# --- streak freezes ----------------------------------------------------------------------------


def _answered(days: list[int], start: date = date(2026, 3, 2)) -> StreakState:
    """The state after answering on these day offsets from ``start`` (in order)."""
    return replay_streak(start + timedelta(days=offset) for offset in days)


def test_a_freeze_is_earned_on_streak_day_7_and_14_and_at_most_2_are_held() -> None:
    assert _answered(list(range(6))).freezes == 0
    assert _answered(list(range(7))).freezes == 1
    assert _answered(list(range(14))).freezes == 2
    full = _answered(list(range(21)))  # the third one earned is not kept
    assert (full.days, full.freezes, full.freezes_used) == (21, 2, 0)


def test_a_freeze_covers_one_missed_day_and_the_frozen_day_does_not_count() -> None:
    state = _answered([*range(7), 8])  # day 7 missed, covered by the freeze earned on day 6
    assert (state.days, state.freezes, state.freezes_used) == (8, 0, 1)
    assert state.best == 8


def test_two_missed_days_with_two_freezes_keep_the_streak_and_a_third_breaks_it() -> None:
    kept = _answered([*range(14), 16])  # days 14 and 15 missed
    assert (kept.days, kept.freezes, kept.freezes_used) == (15, 0, 2)
    broken = _answered([*range(14), 17])  # days 14, 15 and 16 missed
    assert (broken.days, broken.freezes, broken.freezes_used, broken.best) == (1, 0, 2, 14)


def test_the_current_streak_counts_the_freezes_before_the_next_answer() -> None:
    start = date(2026, 3, 2)
    state = _answered(list(range(14)), start)  # last answered on day 13, two freezes
    assert current_streak(state, start + timedelta(days=14)) == 14  # nothing missed yet
    assert current_streak(state, start + timedelta(days=16)) == 14  # two days frozen
    assert current_streak(state, start + timedelta(days=17)) == 0  # the third breaks it
    shown = streak_as_of(state, start + timedelta(days=15))
    assert (shown.freezes, shown.freezes_used) == (1, 1)


def test_freezes_are_deterministic_when_replayed() -> None:
    days = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 22]
    once = _answered(days)
    again = _answered(days)
    assert once == again
    # Looking at the state on any day in between (as /stats does) spends nothing for good.
    state = StreakState()
    for offset in days:
        today = date(2026, 3, 2) + timedelta(days=offset)
        streak_as_of(state, today)
        state = advance_streak(streak_as_of(state, today), today)
    assert state == once


def test_an_answer_says_when_a_freeze_is_earned_and_when_one_is_used() -> None:
    from bot.core.scoring import MAX_FREEZES, freeze_news

    monday = date(2026, 3, 2)
    state = StreakState()
    news = []
    for offset in range(7):
        after = advance_streak(state, monday + timedelta(days=offset))
        news.append(freeze_news(state, after))
        state = after
    assert news[:6] == [None] * 6  # nothing to say on an ordinary day
    assert news[6] == (
        "🧊 7 days in a row: you earned a streak freeze (you hold 1). It covers a day you miss."
    )
    assert freeze_news(state, advance_streak(state, monday + timedelta(days=6))) is None
    skipped = advance_streak(state, monday + timedelta(days=8))  # Monday 9th missed
    assert freeze_news(state, skipped) == (
        "🧊 A streak freeze covered the day you missed, so your streak goes on (you hold none now)."
    )
    full = StreakState(days=13, best=13, last_day=date(2026, 3, 14), freezes=MAX_FREEZES)
    said = freeze_news(full, advance_streak(full, date(2026, 3, 15)))
    assert said is not None and "you hold the most (2) already" in said
