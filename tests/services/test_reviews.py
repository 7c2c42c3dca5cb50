"""Spaced repetition through Services: every answer is a review, /review serves due cards."""

from __future__ import annotations

import asyncio
import io
import random
import shutil
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from PIL import Image

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput
from bot.core.messages import Action
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.posting import PostDraft
from bot.services.review import ROUND_SIZE
from bot.services.scheduled_sources import SchedulerParts
from bot.storage.database import Database
from bot.storage.reviews import ReviewStore
from tests.conftest import TEST_PACKS
from tests.helpers import member

ANN, BOB = member("ann"), member("bob")
ADMIN = member("root", admin=True)


async def _mc(service: Services) -> PostDraft:
    """The medium multiple-choice question of the test pack (correct answer: B)."""
    return await service.quiz.post_question(ANN, pack="mini", difficulty="medium")


async def _flashcard(service: Services) -> PostDraft:
    return await service.quiz.post_question(ANN, pack="mini", difficulty="easy", tags=("autograd",))


async def _log(db: Database) -> list[tuple[str, str, int]]:
    rows = await db.fetchall(
        "SELECT m.display_name, q.slug, r.rating FROM reviews r "
        "JOIN members m ON m.id = r.member_id JOIN questions q ON q.id = r.question_id "
        "ORDER BY r.id"
    )
    return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]


async def test_every_answer_is_one_review_right_good_wrong_again(
    timed: SchedulerParts, service: Services, db: Database
) -> None:
    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "B")
    await service.quiz.answer(BOB, draft.post.id, "A")
    card = await _flashcard(service)
    await service.quiz.answer(ANN, card.post.id, "hard")
    await service.quiz.answer(BOB, card.post.id, "knew")
    await service.quiz.answer(ADMIN, card.post.id, "forgot")
    assert await _log(db) == [
        ("ann", "d-mc-1", 3),
        ("bob", "d-mc-1", 1),
        ("ann", "d-flash-1", 2),
        ("bob", "d-flash-1", 3),
        ("root", "d-flash-1", 1),
    ]
    # Each review points at its answer; a card per member and question.
    assert await db.fetchval("SELECT count(*) FROM reviews WHERE answer_id IS NULL") == 0
    assert await db.fetchval("SELECT count(*) FROM cards") == 5
    with pytest.raises(BadInput, match="again, hard, good, easy"):
        await service.quiz.answer(member("cy"), card.post.id, "B")
    assert await ReviewStore(db).replay_problems() == []


async def test_a_thousand_members_at_once_are_each_reviewed_exactly_once(
    timed: SchedulerParts, service: Services, db: Database
) -> None:
    draft = await _mc(service)
    members = [member(f"m{i}") for i in range(1000)]
    # Everyone double-clicks at the same moment: one answer, one review each.
    results = await asyncio.gather(
        *(
            service.quiz.answer(m, draft.post.id, "B" if i % 3 else "A")
            for i, m in enumerate(members)
        ),
        *(service.quiz.answer(m, draft.post.id, "A") for m in members),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1000
    assert await db.fetchval("SELECT count(*) FROM reviews") == 1000
    assert await db.fetchval("SELECT count(DISTINCT member_id) FROM reviews") == 1000
    assert await db.fetchval("SELECT count(*) FROM cards WHERE reviews = 1") == 1000
    # The review agrees with the answer that counted.
    assert (
        await db.fetchval(
            "SELECT count(*) FROM reviews r JOIN answers a ON a.id = r.answer_id "
            "WHERE (a.correct = 1) != (r.rating = 3)"
        )
        == 0
    )
    assert await db.fetchval("SELECT count(*) FROM reviews WHERE rating = 1") == 334
    assert await ReviewStore(db).replay_problems() == []


async def test_editing_a_question_keeps_its_cards_history(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = tmp_path / "packs"
    shutil.copytree(TEST_PACKS, folder)
    built = build_services(db, clock)
    service = built.services
    await service.packs.sync(load_packs(folder).packs)
    first = await _mc(service)
    await service.quiz.answer(BOB, first.post.id, "B")
    pack_file = folder / "mini.yaml"
    pack_file.write_text(
        pack_file.read_text().replace(
            "When is the autograd graph built?", "At what moment does autograd build its graph?"
        )
    )
    await service.packs.sync(load_packs(folder).packs)
    clock.advance(timedelta(days=3))
    turn = await service.review.next(BOB)
    assert turn.question_id == "d-mc-1"
    assert "At what moment" in turn.message.plain_text()  # the card shows the edited text
    assert turn.key is not None
    await service.review.click(BOB, turn.key, f"B-0-{turn.card_reviews}")
    rows = await db.fetchall("SELECT question_id, reviews FROM cards")
    assert [(int(r[0]), int(r[1])) for r in rows] == [(turn.key, 2)]


async def test_review_serves_due_cards_one_at_a_time_then_sums_up(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    turn = await service.review.next(ANN)
    assert turn.key is None and "no cards yet" in turn.message.plain_text()
    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "A")  # wrong: due again in a minute
    turn = await service.review.next(ANN)
    assert turn.key is None and "next card is due in 1 minute" in turn.message.plain_text()
    clock.advance(timedelta(minutes=2))
    turn = await service.review.next(ANN)
    assert turn.question_id == "d-mc-1" and turn.due == 1 and turn.message.ephemeral
    assert [b.action for b in turn.message.buttons] == [Action.REVIEW, Action.REVIEW]
    button = turn.message.buttons[1]
    assert button.custom_id == f"review:{turn.key}:B-0-1"
    after = await service.review.click(ANN, turn.key or 0, button.value)
    assert after.feedback is not None and "Correct" in after.feedback.plain_text()
    assert after.key is None and "1 reviewed. Next due in 10 minutes" in after.message.plain_text()
    # The same button again: the card has moved on; not a second review.
    again = await service.review.click(ANN, turn.key or 0, button.value)
    assert "already graded" in again.message.plain_text()
    assert await timed.db.fetchval("SELECT count(*) FROM reviews WHERE answer_id IS NULL") == 1


async def test_flashcards_in_review_show_then_grade_four_ways(
    service: Services, clock: SimulatedClock
) -> None:
    card = await _flashcard(service)
    await service.quiz.answer(BOB, card.post.id, "forgot")
    clock.advance(timedelta(minutes=5))
    turn = await service.review.next(BOB)
    assert turn.question_id == "d-flash-1" and turn.key is not None
    assert [b.label for b in turn.message.buttons] == ["Show answer"]
    back = await service.review.click(BOB, turn.key, turn.message.buttons[0].value)
    assert "record operations" in back.message.plain_text()
    assert [b.label for b in back.message.buttons] == ["Again", "Hard", "Good", "Easy"]
    easy = back.message.buttons[3]
    done = await service.review.click(BOB, turn.key, easy.value)
    assert done.feedback is not None and "Graded easy" in done.feedback.plain_text()


async def test_only_packs_on_in_the_workspace_count(
    service: Services, clock: SimulatedClock
) -> None:
    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "A")
    clock.advance(timedelta(hours=1))
    assert (await service.review.next(ANN)).due == 1
    await service.packs.disable(ADMIN, "mini")  # the workspace's only channel: off everywhere
    turn = await service.review.next(ANN)
    assert turn.key is None and turn.due == 0
    # On in one channel is on in the workspace.
    await service.packs.enable(member("root", admin=True, channel="random"), "mini")
    assert (await service.review.next(ANN)).due == 1


async def test_a_round_ends_after_ten_and_offers_more(
    timed: SchedulerParts, service: Services, clock: SimulatedClock, db: Database
) -> None:
    from bot.core.srs import Grade
    from bot.storage.reviews import ReviewItem

    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "A")
    ws = int(await db.fetchval("SELECT workspace_id FROM members WHERE display_name = 'ann'"))
    ann = int(await db.fetchval("SELECT id FROM members WHERE display_name = 'ann'"))
    # A backlog: the test pack's five reviewable questions, each failed; a round of three.
    questions = [
        int(r[0]) for r in await db.fetchall("SELECT id FROM questions WHERE kind != 'open'")
    ]
    for q in questions:
        await ReviewStore(db).record(ReviewItem(ws, ann, q, Grade.AGAIN, clock.now()))
    clock.advance(timedelta(hours=1))
    turn = await service.review.next(ANN)
    assert turn.due == len(questions) == 5
    import bot.services.review as review_module

    original = review_module.ROUND_SIZE
    review_module.ROUND_SIZE = 3
    try:
        while turn.key is not None:
            value = "A" if turn.message.choices[0] == "A" else "good"
            turn = await service.review.grade(ANN, turn.key, value, reviewed=turn.reviewed)
    finally:
        review_module.ROUND_SIZE = original
    assert turn.reviewed == 3
    text = turn.message.plain_text()
    assert "3 reviewed." in text and "2 more cards are due now" in text
    assert [b.label for b in turn.message.buttons] == ["Review more"]
    more = await service.review.click(ANN, 0, turn.message.buttons[0].value)
    assert more.key is not None and more.due == 2 and more.reviewed == 0
    assert ROUND_SIZE == 10


async def test_retention_change_replays_the_cards(
    timed: SchedulerParts, service: Services, db: Database, clock: SimulatedClock
) -> None:
    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "B")
    clock.advance(timedelta(minutes=20))
    turn = await service.review.next(ANN)
    await service.review.grade(ANN, turn.key or 0, "B", reviewed=0)
    before = await db.fetchval("SELECT due FROM cards")
    ws = int(await db.fetchval("SELECT id FROM workspaces"))
    assert await ReviewStore(db).update_settings(ws, desired_retention=0.97) == 1
    after = await db.fetchval("SELECT due FROM cards")
    assert after < before
    assert await ReviewStore(db).replay_problems() == []
    with pytest.raises(ValueError, match="between"):
        await ReviewStore(db).update_settings(ws, desired_retention=0.5)
    # A tampered state is found by the replay.
    async with db.write() as conn:
        await conn.execute("UPDATE cards SET stability = stability * 2")
    problems = await ReviewStore(db).replay_problems()
    assert len(problems) == 1 and "replays to" in problems[0]


async def test_stats_show_due_cards_true_retention_and_mastery_by_tag(
    service: Services, clock: SimulatedClock
) -> None:
    text = (await service.standings.stats(ANN)).plain_text()
    assert "Spaced repetition:\nNo cards yet." in text
    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "B")
    card = await _flashcard(service)
    await service.quiz.answer(ANN, card.post.id, "forgot")
    clock.advance(timedelta(days=2))
    turn = await service.review.next(ANN)
    while turn.key is not None:  # the flashcard remembered, the MC question missed
        word = "A" if turn.message.choices[0] == "A" else "good"
        turn = await service.review.grade(ANN, turn.key, word, reviewed=turn.reviewed)
    text = (await service.standings.stats(ANN)).plain_text()
    assert "Cards: 2 · due now: 0" in text
    assert "True retention, last 30 days: 50% (1 of 2)" in text
    # Mastery is the recall FSRS predicts a week on: the remembered card is ahead of the missed
    # one (right after a review both would show 100%).
    assert "Mastery by tag (recall a week from now):" in text
    assert "• autograd: 81% (1 card)" in text and "• (untagged): 68% (1 card)" in text
    clock.advance(timedelta(days=40))  # the reviews fall out of the window; recall fades
    text = (await service.standings.stats(ANN)).plain_text()
    assert "due now: 2" in text and "last 30 days: — (no review" in text
    assert "• autograd: 81%" not in text


async def test_stats_come_with_a_picture_of_study_days_and_retention_by_tag(
    db: Database, clock: SimulatedClock
) -> None:
    """Study days are the workspace's local days; the bars match the text's figures."""
    built = build_services(db, clock, default_timezone="Asia/Tokyo", rng=random.Random(7))
    service = built.services
    await service.packs.sync(load_packs(TEST_PACKS).packs)
    clock.set(datetime(2026, 3, 2, 14, 30, tzinfo=UTC))  # 23:30 in Tokyo, Monday 2 March
    draft = await _mc(service)
    await service.quiz.answer(ANN, draft.post.id, "B")
    clock.advance(timedelta(hours=1))  # 00:30 on Tuesday in Tokyo, still Monday in UTC
    card = await _flashcard(service)
    await service.quiz.answer(ANN, card.post.id, "forgot")
    clock.advance(timedelta(days=3))
    turn = await service.review.next(ANN)
    while turn.key is not None:  # the flashcard remembered, the MC question missed
        word = "A" if turn.message.choices[0] == "A" else "good"
        turn = await service.review.grade(ANN, turn.key, word, reviewed=turn.reviewed)

    message = await service.standings.stats(ANN)
    [picture] = message.attachments
    assert picture.filename == "study-stats.png"
    with Image.open(io.BytesIO(picture.content)) as image:
        assert image.format == "PNG" and image.width >= 800 and image.height >= 300
    chart = await service.standings.study_chart(
        1, 1, ZoneInfo("Asia/Tokyo"), "ann", await service.standings.review_summary(1, 1)
    )
    assert chart.today == date(2026, 3, 6)
    assert dict(chart.days) == {date(2026, 3, 2): 1, date(2026, 3, 3): 1, date(2026, 3, 6): 2}
    bars = {bar.tag: (bar.cards, bar.recalled, bar.reviewed) for bar in chart.tags}
    assert bars == {"autograd": (1, 1, 1), "": (1, 0, 1)}
    assert "True retention, last 30 days: 50% (1 of 2)" in message.plain_text()
    assert (await service.standings.stats(ANN, picture=False)).attachments == ()
