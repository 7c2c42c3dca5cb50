"""Typed cards in /review: graded by the bot from the answer and the time taken, a miss shows
what was typed against what was expected, and the grade may be changed once. Through the
services, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput
from bot.core.guesses import FREE_TRIES
from bot.core.replies import OVERRIDE, TYPE_IT, typed_diff
from bot.core.srs import Grade
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.review import typed_grade
from bot.storage.database import Database
from bot.storage.reviews import ReviewStore
from tests.adapters.test_typed_answers import TYPED_PACKS
from tests.conftest import TEST_PACKS
from tests.helpers import member

ANN = member("ann")


@pytest.mark.parametrize(
    ("right", "slip", "seconds", "grade"),
    [
        (False, False, 3.0, Grade.AGAIN),
        (True, False, 3.0, Grade.EASY),
        (True, False, 10.0, Grade.EASY),
        (True, False, 25.0, Grade.GOOD),
        (True, False, 61.0, Grade.HARD),
        (True, True, 3.0, Grade.HARD),  # accepted with a typo
        (True, False, None, Grade.GOOD),  # served before a restart: time unknown
    ],
)
def test_a_typed_review_is_graded_from_the_answer_and_the_time(
    right: bool, slip: bool, seconds: float | None, grade: Grade
) -> None:
    assert typed_grade(right, slip=slip, seconds=seconds) is grade


def test_a_miss_shows_what_was_typed_against_what_was_expected() -> None:
    shown = typed_diff("x.gard_fn", "x.grad")
    typed, marks, expected = shown.splitlines()
    assert typed == "typed:    x.gard_fn" and expected == "expected: x.grad"
    assert marks.startswith("          ") and "^" in marks
    assert marks.index("^") - 10 == 3  # under the first letter that differs: the "a" of gard


async def _typed_cards_due(service: Services, clock: SimulatedClock) -> None:
    await service.packs.sync([*load_packs(TEST_PACKS).packs, *load_packs(TYPED_PACKS).packs])
    for tag, wrong in (("leaf", "y.grad"), ("number", "6")):
        draft = await service.quiz.post_question(ANN, pack="typed-mini", tags=(tag,))
        await service.quiz.answer(ANN, draft.post.id, wrong)
    clock.advance(timedelta(days=2))


async def test_typed_cards_are_answered_by_typing_and_graded_by_the_bot(
    service: Services, clock: SimulatedClock, db: Database
) -> None:
    await _typed_cards_due(service, clock)
    turn = await service.review.next(ANN)
    assert turn.key is not None
    [button] = turn.message.buttons
    assert button.label == "Answer" and button.value.startswith(f"{TYPE_IT}-")
    with pytest.raises(BadInput, match="opens a text box"):
        await service.review.click(ANN, turn.key, button.value)
    first = turn.key
    clock.advance(timedelta(seconds=4))
    if "print(x.grad.item())" in turn.message.plain_text():  # the due order is FSRS's
        with pytest.raises(BadInput, match="not a number"):
            await service.review.answer_typed(ANN, first, "twelve", reviewed=0)
        graded, word = await service.review.answer_typed(ANN, first, "1.2e1", reviewed=0), "easy"
    else:  # right, with a slip: hard
        graded, word = await service.review.answer_typed(ANN, first, "x.gard", reviewed=0), "hard"
    assert graded.feedback is not None
    assert "✅ Right" in graded.feedback.plain_text()
    assert f"Graded **{word}**" in str(graded.feedback.sections[0].body)
    overrides = [b for b in graded.feedback.buttons if b.value.startswith(OVERRIDE)]
    assert len(overrides) == 3 and f"Make it {word}" not in [b.label for b in overrides]
    assert graded.key is not None and graded.key != first
    second = graded.key
    clock.advance(timedelta(seconds=90))  # slow, and wrong
    miss = "99" if "print(x.grad.item())" in graded.message.plain_text() else "grad_fn"
    missed = await service.review.answer_typed(ANN, second, miss, reviewed=1)
    assert missed.feedback is not None
    text = missed.feedback.plain_text()
    assert "❌ Not quite. Graded again" in text.replace("**", "")
    assert f"typed:    {miss}" in text and "expected:" in text

    # The first card's grade, changed once: the log's last row says so, the card follows.
    ratings = await db.fetchall(
        "SELECT question_id, rating FROM reviews WHERE question_id IN (?, ?) ORDER BY id",
        (first, second),
    )
    given = int(Grade[word.upper()])
    assert [(int(r[0]), int(r[1])) for r in ratings][-2:] == [(first, given), (second, 1)]
    store = ReviewStore(db)
    before = await store.card(
        int(await db.fetchval("SELECT id FROM members WHERE display_name = 'ann'")), first
    )
    assert before is not None
    changed = await service.review.override(ANN, first, Grade.AGAIN)
    assert "Changed to **again**" in str(changed.sections[0].body)
    after = await store.card(
        int(await db.fetchval("SELECT id FROM members WHERE display_name = 'ann'")), first
    )
    assert after is not None and after.reviews == before.reviews and after.due < before.due
    rating = await db.fetchval(
        "SELECT rating FROM reviews WHERE question_id = ? ORDER BY id DESC LIMIT 1", (first,)
    )
    assert int(rating) == 1
    with pytest.raises(BadInput, match="changed once"):
        await service.review.override(ANN, first, Grade.EASY)
    assert await store.replay_problems() == []


async def test_an_unreadable_number_is_free_three_times_then_a_miss(
    service: Services, clock: SimulatedClock
) -> None:
    """Unlike a post (which refuses it), a card counts a fourth unreadable number as a miss."""
    await _typed_cards_due(service, clock)
    turn = await service.review.next(ANN)
    reviewed = 0
    if "print(x.grad.item())" not in turn.message.plain_text():  # the due order is FSRS's
        turn = await service.review.answer_typed(ANN, turn.key or 0, "x.grad", reviewed=0)
        reviewed = 1
    assert turn.key is not None
    assert "print(x.grad.item())" in turn.message.plain_text()
    for _ in range(FREE_TRIES):
        with pytest.raises(BadInput, match="did not count"):
            await service.review.answer_typed(ANN, turn.key, "twelve", reviewed=reviewed)
    missed = await service.review.answer_typed(ANN, turn.key, "twelve", reviewed=reviewed)
    assert missed.feedback is not None
    assert "❌ Not quite. Graded again" in missed.feedback.plain_text().replace("**", "")
