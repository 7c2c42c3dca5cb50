"""Spaced repetition: FSRS (the ``fsrs`` package, pure Python) behind a few pure functions.

A card is one member's memory of one question. Every graded answer is a review: a correct
multiple-choice or practice answer is Good, a wrong one Again (never Hard: a click on a choice
says nothing about effort); a flashcard is graded Again, Hard, Good or Easy by the member
(``knew`` and ``forgot`` are Good and Again).

Everything here is deterministic: fuzzing is off, and a review dated before the card's last
review counts as made at that last review, so replaying a card's log in order gives exactly
its stored state (``studybot db check`` relies on it). The optimizer, which needs torch, is
never imported here; it runs only in the ``studybot review optimize`` process.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from fsrs import Card, Rating, Scheduler, State
from fsrs.scheduler import DEFAULT_PARAMETERS

__all__ = [
    "DEFAULT_RETENTION",
    "MAX_RETENTION",
    "MIN_RETENTION",
    "CardState",
    "Grade",
    "SrsSettings",
    "due_in",
    "grade_for_choice",
    "log_loss",
    "parse_grade",
    "replay",
    "retrievability",
    "review",
]

MIN_RETENTION, MAX_RETENTION, DEFAULT_RETENTION = 0.70, 0.97, 0.90


class Grade(enum.IntEnum):
    """FSRS's four ratings, by the words members type and click."""

    AGAIN = 1
    HARD = 2
    GOOD = 3
    EASY = 4

    @property
    def word(self) -> str:
        return self.name.lower()


#: What a member may type or click to grade a flashcard; ``knew``/``forgot`` are the old words.
GRADE_WORDS: dict[str, Grade] = {
    "again": Grade.AGAIN,
    "hard": Grade.HARD,
    "good": Grade.GOOD,
    "easy": Grade.EASY,
    "knew": Grade.GOOD,
    "forgot": Grade.AGAIN,
}


def parse_grade(word: str) -> Grade | None:
    return GRADE_WORDS.get(word.strip().lower())


def grade_for_choice(correct: bool) -> Grade:
    """A choice answered: right is Good, wrong is Again (never Hard)."""
    return Grade.GOOD if correct else Grade.AGAIN


@dataclass(frozen=True, slots=True)
class SrsSettings:
    """A workspace's scheduler: the retention it aims for and (optionally) fitted parameters."""

    desired_retention: float = DEFAULT_RETENTION
    parameters: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not MIN_RETENTION <= self.desired_retention <= MAX_RETENTION:
            raise ValueError(
                f"desired retention must be between {MIN_RETENTION:.2f} and {MAX_RETENTION:.2f}"
            )


@dataclass(frozen=True, slots=True)
class CardState:
    """FSRS's card, as stored: ``state`` 1 learning, 2 review, 3 relearning."""

    state: int
    step: int | None
    stability: float | None
    difficulty: float | None
    due: datetime
    last_review: datetime
    reviews: int

    def same_as(self, other: CardState, tolerance: float = 1e-9) -> bool:
        """Equal up to float rounding (what ``db check`` compares a replay with)."""

        def close(a: float | None, b: float | None) -> bool:
            if a is None or b is None:
                return a is b
            return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)

        return (
            self.state == other.state
            and self.step == other.step
            and close(self.stability, other.stability)
            and close(self.difficulty, other.difficulty)
            and abs((self.due - other.due).total_seconds()) < 0.001
            and abs((self.last_review - other.last_review).total_seconds()) < 0.001
            and self.reviews == other.reviews
        )


@lru_cache(maxsize=64)
def _scheduler(settings: SrsSettings) -> Scheduler:
    return Scheduler(
        parameters=settings.parameters or DEFAULT_PARAMETERS,
        desired_retention=settings.desired_retention,
        enable_fuzzing=False,
    )


def _to_card(card: CardState) -> Card:
    return Card(
        card_id=1,
        state=State(card.state),
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=card.due.astimezone(UTC),
        last_review=card.last_review.astimezone(UTC),
    )


def review(
    card: CardState | None, grade: Grade, at: datetime, settings: SrsSettings
) -> tuple[CardState, float | None]:
    """The card after one review at ``at``, and the days since its previous review."""
    at = at.astimezone(UTC)
    elapsed: float | None = None
    if card is None:
        fsrs_card = Card(card_id=1, due=at)
        reviews = 0
    else:
        at = max(at, card.last_review.astimezone(UTC))  # a clock set back: no negative gaps
        elapsed = (at - card.last_review).total_seconds() / 86400
        fsrs_card = _to_card(card)
        reviews = card.reviews
    new, _log = _scheduler(settings).review_card(fsrs_card, Rating(int(grade)), at)
    assert new.last_review is not None
    return (
        CardState(
            state=int(new.state),
            step=new.step,
            stability=new.stability,
            difficulty=new.difficulty,
            due=new.due,
            last_review=new.last_review,
            reviews=reviews + 1,
        ),
        elapsed,
    )


def replay(history: Iterable[tuple[Grade, datetime]], settings: SrsSettings) -> CardState | None:
    """A card's state from its reviews in log order (``None`` for no reviews)."""
    card: CardState | None = None
    for grade, at in history:
        card, _ = review(card, grade, at, settings)
    return card


def retrievability(card: CardState, at: datetime, settings: SrsSettings) -> float:
    """The predicted chance of recalling the card at ``at`` (0 before its first review)."""
    return float(_scheduler(settings).get_card_retrievability(_to_card(card), at.astimezone(UTC)))


def log_loss(
    histories: Sequence[Sequence[tuple[Grade, datetime]]], settings: SrsSettings
) -> tuple[float, int]:
    """Mean binary log-loss of the predicted recall against what happened, and how many
    reviews it was measured on (those a day or more after the card's previous review, as
    FSRS's own optimizer counts them). ``(nan, 0)`` when there are none."""
    total, count = 0.0, 0
    for history in histories:
        card: CardState | None = None
        for grade, at in history:
            if card is not None and at - card.last_review >= timedelta(days=1):
                p = min(max(retrievability(card, at, settings), 1e-6), 1 - 1e-6)
                recalled = grade is not Grade.AGAIN
                total -= math.log(p) if recalled else math.log(1 - p)
                count += 1
            card, _ = review(card, grade, at, settings)
    return (total / count if count else math.nan), count


def due_in(delta: timedelta) -> str:
    """A wait in words: ``now``, ``10 minutes``, ``5 hours``, ``3 days``."""
    seconds = delta.total_seconds()
    if seconds < 60:
        return "now" if seconds <= 0 else "less than a minute"
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            count = round(seconds / size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "now"  # unreachable: seconds >= 60 matched "minute"
