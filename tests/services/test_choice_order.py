"""Choices in an order that teaches nothing: each post draws its own, and every view agrees.

The pack below writes the right answer first, as authors often do. A member who always
answers A must not gain from it: the post, its reveal, ``/history``, ``/question``, a restart
and the member's ``/review`` card all show the order drawn for that post, and the letter a
member picks is scored in that order. ``shuffle: false`` keeps the file's order.
"""

from __future__ import annotations

import random
import re
import shutil
from collections import Counter
from datetime import timedelta
from pathlib import Path

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.messages import Message
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.storage.database import Database
from tests.conftest import TEST_PACKS
from tests.helpers import member

ANN, BOB = member("ann"), member("bob")
ADMIN = member("root", admin=True)
CHOICES = ("Alpha right", "Bravo wrong", "Charlie wrong", "Delta wrong", "Echo wrong")

PACK = f"""\
pack: order
title: Order pack
items:
  - id: o-first
    kind: multiple_choice
    difficulty: easy
    prompt: Which one is right?
    choices:
      - text: {CHOICES[0]}
        correct: true
      - text: {CHOICES[1]}
      - text: {CHOICES[2]}
      - text: {CHOICES[3]}
      - text: {CHOICES[4]}
  - id: o-kept
    kind: multiple_choice
    difficulty: easy
    shuffle: false
    prompt: Which one is right, in order?
    choices:
      - text: Steps one then two
        correct: true
      - text: Steps two then one
      - text: All of the above
"""


def _packs(tmp_path: Path) -> Path:
    """The test packs and the pack above, in a folder of their own."""
    folder = tmp_path / "packs"
    shutil.copytree(TEST_PACKS, folder)
    (folder / "order.yaml").write_text(PACK)
    return folder


async def _service(db: Database, clock: SimulatedClock, folder: Path) -> Services:
    built = build_services(db, clock, default_timezone="UTC", rng=random.Random(3))
    result = load_packs(folder)
    assert not result.problems, result.problems
    await built.services.packs.sync(result.packs)
    return built.services


def _letters(message: Message) -> dict[str, str]:
    """The letter each choice text shows with, as a member reads the message."""
    found = re.findall(
        r"(?m)^(?:[✅▫️ ]*)([A-E])\. (.+?)(?: — \d+ \(\d+%\))?$", message.plain_text()
    )
    return {text: letter for letter, text in found}


async def test_each_post_draws_an_order_that_every_view_and_the_score_agree_on(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = _packs(tmp_path)
    service = await _service(db, clock, folder)
    right_at: Counter[str] = Counter()
    posts = []
    for _ in range(30):
        draft = await service.quiz.post_question(ANN, question="o-first")
        shown = _letters(draft.message)
        assert sorted(shown) == sorted(CHOICES)
        right_at[shown[CHOICES[0]]] += 1
        posts.append((draft.post.id, shown))
    # 30 posts of a 5-choice item: the right answer is not stuck in one place.
    assert len(right_at) >= 4 and max(right_at.values()) <= 15, right_at

    post_id, shown = posts[0]
    right, wrong = shown[CHOICES[0]], shown[CHOICES[1]]
    assert "Correct" in (await service.quiz.answer(ANN, post_id, right)).plain_text()
    assert "Not quite" in (await service.quiz.answer(BOB, post_id, wrong)).plain_text()
    before = await service.history.question(ANN, post_id)  # open: the same order, no answer
    assert _letters(before) == shown
    edit = await service.quiz.reveal(ADMIN, post_id)
    revealed = edit.message.plain_text()
    assert f"✅ {right}. {CHOICES[0]} — 1 (50%)" in revealed
    assert f"{wrong}. {CHOICES[1]} — 1 (50%)" in revealed
    assert _letters(edit.message) == shown

    # A restart: a new bot on the same database shows the post as it was.
    again = await _service(db, clock, folder)
    assert _letters(await again.history.question(ANN, post_id)) == shown
    assert _letters(await again.history.question(ANN, posts[1][0])) == posts[1][1]


async def test_an_item_with_shuffle_false_keeps_the_files_order(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = _packs(tmp_path)
    service = await _service(db, clock, folder)
    for _ in range(8):
        draft = await service.quiz.post_question(ANN, question="o-kept")
        assert _letters(draft.message) == {
            "Steps one then two": "A",
            "Steps two then one": "B",
            "All of the above": "C",
        }


async def test_always_answering_a_scores_at_chance(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = _packs(tmp_path)
    service = await _service(db, clock, folder)
    right = 0
    for _ in range(100):
        draft = await service.quiz.post_question(ANN, question="o-first")
        right += "Correct" in (await service.quiz.answer(ANN, draft.post.id, "A")).plain_text()
    # Chance is 20 of 100; without a drawn order it would be 100 of 100.
    assert 5 <= right <= 40, right


async def test_a_review_card_is_graded_in_the_order_it_showed(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = _packs(tmp_path)
    service = await _service(db, clock, folder)
    orders = set()
    for round_ in range(6):
        name = f"m{round_}"
        draft = await service.quiz.post_question(member(name), question="o-first")
        shown = _letters(draft.message)
        wrong = shown[CHOICES[2]]
        await service.quiz.answer(member(name), draft.post.id, wrong)  # due again soon
        clock.advance(timedelta(minutes=2))
        turn = await service.review.next(member(name))
        assert turn.key is not None and turn.question_id == "o-first"
        card = _letters(turn.message)
        assert sorted(card) == sorted(CHOICES)
        orders.add(tuple(sorted(card.items())))
        button = next(b for b in turn.message.buttons if b.label == card[CHOICES[0]])
        after = await service.review.click(member(name), turn.key, button.value)
        assert after.feedback is not None and "Correct" in after.feedback.plain_text()
    assert len(orders) >= 2  # each card shows an order of its own


async def test_an_old_post_without_a_seed_shows_the_files_order(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = _packs(tmp_path)
    service = await _service(db, clock, folder)
    draft = await service.quiz.post_question(ANN, question="o-first")
    async with db.write() as conn:  # a post made before posts drew an order
        await conn.execute("UPDATE posts SET choice_seed = NULL WHERE id = ?", (draft.post.id,))
    again = await _service(db, clock, folder)  # a new process: nothing cached
    shown = _letters(await again.history.question(ANN, draft.post.id))
    assert shown == {text: "ABCDE"[i] for i, text in enumerate(CHOICES)}
