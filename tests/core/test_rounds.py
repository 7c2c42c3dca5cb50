"""The rules of a live round: how a correct answer scores, and what a round may be."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.core.errors import BadInput
from bot.core.rounds import RoundSpec, parse_round_spec, round_points

ASKED = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
DEADLINE = ASKED + timedelta(seconds=20)


def _points(after: float, *, hints: int = 0, bonus: bool = True, base: int = 20) -> int:
    return round_points(
        base,
        asked_at=ASKED,
        deadline=DEADLINE,
        answered_at=ASKED + timedelta(seconds=after),
        hints=hints,
        speed_bonus=bonus,
    )


def test_faster_beats_slower_from_plus_half_down_to_the_base() -> None:
    assert _points(0) == 30  # +50 % at once
    assert _points(10) == 25  # halfway: +25 %
    assert _points(20) == 20  # at the deadline: the base
    assert _points(0) > _points(5) > _points(15) > _points(19)


def test_each_hint_costs_a_quarter_and_no_answer_goes_below_zero() -> None:
    assert _points(0, hints=1) == round(30 * 0.75)
    assert _points(0, hints=2) == 15
    assert _points(0, hints=4) == 0
    assert _points(0, hints=9) == 0


def test_without_the_speed_bonus_every_correct_answer_scores_the_base() -> None:
    assert {_points(t, bonus=False) for t in (0, 7, 20)} == {20}


def test_a_clock_skew_before_the_question_counts_as_instant() -> None:
    assert _points(-3) == 30


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"questions": 0}, "1 to 50 questions, not 0"),
        ({"questions": 1000}, "1 to 50 questions, not 1000"),
        ({"seconds": 1}, "open 5 to 300 seconds, not 1"),
        ({"pause": 61}, "The pause is 0 to 60 seconds"),
    ],
)
def test_a_round_out_of_range_is_refused_with_the_range(
    kwargs: dict[str, int], problem: str
) -> None:
    with pytest.raises(BadInput, match=problem):
        RoundSpec(**kwargs)  # type: ignore[arg-type]


def test_a_round_is_written_questions_x_seconds() -> None:
    assert parse_round_spec("10x20s") == RoundSpec(questions=10, seconds=20)
    assert parse_round_spec("5X30") == RoundSpec(questions=5, seconds=30)
    with pytest.raises(BadInput, match="QUESTIONSxSECONDS"):
        parse_round_spec("ten")
