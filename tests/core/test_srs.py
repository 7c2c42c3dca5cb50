"""The pure FSRS rules (bot.core.srs): grades, replay, retrievability, log-loss."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from bot.core.srs import (
    Grade,
    SrsSettings,
    due_in,
    grade_for_choice,
    log_loss,
    parse_grade,
    replay,
    retrievability,
    review,
)

T0 = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_grade_words_and_choices() -> None:
    assert parse_grade("knew") is Grade.GOOD and parse_grade("FORGOT") is Grade.AGAIN
    assert [parse_grade(w) for w in ("again", "hard", "good", "easy")] == list(Grade)
    assert parse_grade("meh") is None
    assert grade_for_choice(True) is Grade.GOOD and grade_for_choice(False) is Grade.AGAIN


def test_retention_is_bounded() -> None:
    SrsSettings(0.70)
    SrsSettings(0.97)
    with pytest.raises(ValueError, match=r"between 0\.70 and 0\.97"):
        SrsSettings(0.99)
    with pytest.raises(ValueError, match="between"):
        SrsSettings(0.5)


def test_wrong_comes_back_within_a_day_and_right_answers_grow_the_interval() -> None:
    settings = SrsSettings()
    card, elapsed = review(None, Grade.AGAIN, T0, settings)
    assert elapsed is None and card.due - T0 < timedelta(days=1) and card.reviews == 1
    at = T0
    intervals = []
    for _ in range(6):
        at = max(at, card.due)
        card, _ = review(card, Grade.GOOD, at, settings)
        intervals.append(card.due - at)
    reviewed = intervals[2:]  # after the learning steps
    assert all(b > a for a, b in itertools.pairwise(reviewed)), intervals
    assert reviewed[-1] > timedelta(days=20)


def test_higher_retention_means_shorter_intervals() -> None:
    history = [(Grade.GOOD, T0), (Grade.GOOD, T0 + timedelta(minutes=10))]
    loose = replay(history, SrsSettings(0.70))
    strict = replay(history, SrsSettings(0.97))
    assert loose is not None and strict is not None
    assert strict.due < loose.due and strict.stability == loose.stability


def test_replay_is_review_after_review_and_deterministic() -> None:
    settings = SrsSettings()
    history = [(Grade(g), T0 + timedelta(days=d)) for g, d in ((3, 0), (1, 1), (4, 2), (2, 9))]
    card = None
    for grade, at in history:
        card, _ = review(card, grade, at, settings)
    again = replay(history, settings)
    assert card is not None and again is not None and card.same_as(again) and card == again


def test_a_clock_set_back_never_makes_a_negative_gap() -> None:
    settings = SrsSettings()
    card, _ = review(None, Grade.GOOD, T0, settings)
    earlier, elapsed = review(card, Grade.GOOD, T0 - timedelta(days=3), settings)
    assert elapsed == 0 and earlier.last_review == T0


def test_retrievability_and_log_loss() -> None:
    settings = SrsSettings()
    card, _ = review(None, Grade.GOOD, T0, settings)
    assert retrievability(card, T0 + timedelta(days=1), settings) > retrievability(
        card, T0 + timedelta(days=30), settings
    )
    histories = [[(Grade.GOOD, T0), (Grade.GOOD, T0 + timedelta(days=3))]]
    loss, n = log_loss(histories, settings)
    assert n == 1 and 0 < loss < 1
    assert log_loss([[(Grade.GOOD, T0)]], settings)[1] == 0


def test_due_in_words() -> None:
    assert due_in(timedelta(0)) == "now"
    assert due_in(timedelta(minutes=10)) == "10 minutes"
    assert due_in(timedelta(hours=1)) == "1 hour"
    assert due_in(timedelta(days=3, hours=2)) == "3 days"
