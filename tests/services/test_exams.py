"""The exam date (issue 44): set by admins, counted down for everyone, readiness from FSRS on
the exam day, daily questions leaning toward its tags, and everything back to normal after the
day; on SQLite and PostgreSQL, with a simulated clock (2026-03-04 09:00 UTC at the start)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from bot.app import Built
from bot.core import srs
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.requests import ExamClear, ExamPrep, ExamSet, ExamShow
from bot.services.bundle import Services
from bot.storage.database import Database
from bot.storage.reviews import ReviewItem, ReviewStore
from tests.helpers import member, schedule_command
from tests.services.test_rounds import ANN, ROOT, Chat, running

ELSEWHERE = member("zoe", channel="other")


async def _text(service: Services, ctx: object, request: object) -> str:
    reply = await service.exams.command(ctx, request)  # type: ignore[arg-type]
    return reply.plain_text()


async def test_an_admin_sets_the_exam_everyone_counts_down_and_it_ends_by_itself(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    assert "No exam date is set here" in await _text(service, ANN, ExamShow())
    with pytest.raises(Forbidden, match="Only admins set the exam date"):
        await service.exams.command(ANN, ExamSet("2026-04-01"))
    for typed, reason in (
        ("2026-03-03", "2026-03-03 has passed: the exam date is today (2026-03-04) or later"),
        ("2036-03-04", "more than three years ahead: set a date up to 2029-03-06"),
        ("20/03/2026", "Write the exam date as YYYY-MM-DD"),
        ("2026-02-30", "is not a date on the calendar"),
    ):
        with pytest.raises(BadInput, match=re.escape(reason)):
            await service.exams.command(ROOT, ExamSet(typed))
    with pytest.raises(BadInput, match="No question has the tag `graphs`"):
        await service.exams.command(ROOT, ExamSet("2026-03-20", ("graphs",)))

    set_ = await _text(service, ROOT, ExamSet("2026-03-20", ("leaf", "retain-graph")))
    assert "📅 Exam on Fri 20 Mar 2026, in 16 days (leaf, retain-graph)" in set_
    assert "Set for everyone here" in set_
    shown = await service.exams.command(ANN, ExamShow())
    assert shown.ephemeral and "in 16 days" in shown.plain_text()
    assert "• leaf: not studied yet" in shown.plain_text()
    stats = (await service.standings.stats(ANN, picture=False)).plain_text()
    assert "📅 Exam on Fri 20 Mar 2026, in 16 days (leaf, retain-graph)" in stats
    workspace, channel = await service.places.channel(ROOT)
    start = clock.now() - timedelta(days=7)
    recap = await service.recaps.build(workspace, channel, start, clock.now(), prefix="/")
    assert "in 16 days" in recap.plain_text() and "`/exam` shows your readiness" in (
        recap.plain_text()
    )

    # A channel's own exam comes first there; elsewhere the workspace's still counts.
    here = await _text(service, ROOT, ExamSet("2026-03-05", channel=True))
    assert "Exam on Thu 5 Mar 2026, tomorrow" in here and "Set for #general" in here
    assert "tomorrow" in await _text(service, ANN, ExamShow())
    assert "in 16 days" in await _text(service, ELSEWHERE, ExamShow())
    replaced = await _text(service, ROOT, ExamSet("2026-03-06", channel=True))
    assert "(it was 2026-03-05)" in replaced

    # The days pass: the channel's exam is over, and then the workspace's.
    clock.set(datetime(2026, 3, 7, 9, tzinfo=UTC))
    assert "in 13 days" in await _text(service, ANN, ExamShow())
    clock.set(datetime(2026, 3, 21, 9, tzinfo=UTC))
    assert "No exam date is set here" in await _text(service, ANN, ExamShow())
    assert "📅" not in (await service.standings.stats(ANN, picture=False)).plain_text()
    cleared = await _text(service, ROOT, ExamClear())
    assert "The exam date is cleared" in cleared
    with pytest.raises(NotFound, match="no exam date to clear"):
        await service.exams.command(ROOT, ExamClear())


async def _question(db: Database, item: str) -> int:
    value = await db.fetchval("SELECT id FROM questions WHERE slug = ?", (item,))
    return int(str(value))


async def test_readiness_is_each_cards_fsrs_recall_on_the_exam_day(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    await service.review.next(ANN)  # ann is a member now
    row = await db.fetchone("SELECT workspace_id, id FROM members WHERE external_id = 'id-ann'")
    assert row is not None
    ws, ann = int(row[0]), int(row[1])
    reviews = ReviewStore(db)
    leaf, graph = await _question(db, "d-mc-2"), await _question(db, "d-mc-3")
    await reviews.record(ReviewItem(ws, ann, leaf, srs.Grade.EASY, clock.now()))
    await reviews.record(ReviewItem(ws, ann, graph, srs.Grade.AGAIN, clock.now()))
    settings = await reviews.settings(ws)

    async def predicted(day: datetime) -> tuple[int, int]:
        leaf_card, graph_card = await reviews.card(ann, leaf), await reviews.card(ann, graph)
        assert leaf_card is not None and graph_card is not None
        return (
            round(100 * srs.retrievability(leaf_card, day, settings)),
            round(100 * srs.retrievability(graph_card, day, settings)),
        )

    await service.exams.command(ROOT, ExamSet("2026-03-11", ("leaf", "retain-graph")))
    soon = await _text(service, ANN, ExamShow())
    near_leaf, near_graph = await predicted(datetime(2026, 3, 11, 9, tzinfo=UTC))
    assert f"• leaf: {near_leaf}% predicted on the day (1 card)" in soon
    assert f"• retain-graph: {near_graph}% predicted on the day (1 card)" in soon
    assert near_graph < near_leaf < 100  # a lapse forgets faster than an easy card
    assert "1 card is predicted under 90% on the day: `review` keeps them up" in soon

    await service.exams.command(ROOT, ExamSet("2026-06-01", ("leaf", "retain-graph")))
    later = await _text(service, ANN, ExamShow())
    far_leaf, _ = await predicted(datetime(2026, 6, 1, 9, tzinfo=UTC))
    assert f"• leaf: {far_leaf}% predicted on the day" in later and far_leaf < near_leaf
    assert "2 cards are predicted under 90%" in later

    # The group's readiness by tag (the admins' web page) is the same curve, set-based.
    found = await service.exams.group_readiness(ROOT)
    assert found is not None
    by_tag = {t.tag: round(100 * t.mean) for t in found.tags}
    assert found.exam.tags == ("leaf", "retain-graph") and found.desired == pytest.approx(0.9)
    assert found.line == "Exam on Mon 1 Jun 2026, in 89 days (leaf, retain-graph)"
    assert by_tag["leaf"] == far_leaf and set(by_tag) == {"leaf", "retain-graph"}
    with pytest.raises(Forbidden):
        await service.exams.group_readiness(ANN)


async def test_daily_questions_lean_toward_the_exams_tags_as_it_nears(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    workspace, channel = await service.places.channel(ROOT)
    every = await service.catalogue.candidates(channel.id)
    leaf = [
        c for c in every if "leaf" in (await service.catalogue.question(c.version_id)).item.tags
    ]
    assert leaf and len(every) > 3 * len(leaf)

    await service.exams.command(ROOT, ExamSet("2026-04-15", ("leaf",)))  # 42 days: too far
    far = [await service.exams.lean(workspace, channel.id, f"s:{n}", every) for n in range(50)]
    assert far == [None] * 50
    await service.exams.command(ROOT, ExamSet("2026-03-05", ("leaf",)))  # tomorrow
    draws = [await service.exams.lean(workspace, channel.id, f"s:{n}", every) for n in range(400)]
    leaning = [d for d in draws if d is not None]
    assert 0.62 < len(leaning) / len(draws) < 0.82  # 0.75 x 27/28 = 0.72 the day before
    assert all(d == leaf for d in leaning)  # only the exam's questions
    same = await service.exams.lean(workspace, channel.id, "s:7", every)
    assert same == draws[7]  # a seeded draw: every process and a retry decide alike

    # Through the scheduler: ten daily questions before an exam on `leaf` in ten days.
    await service.exams.command(ROOT, ExamSet("2026-03-15", ("leaf",)))
    reply = await schedule_command(service, ROOT, "add", ["10:00"])
    assert "10:00" in reply.message.plain_text()
    chat = Chat()
    async with running(built, clock, chat) as sched:
        await sched.advance(clock, clock.now().replace(hour=10, minute=5) + timedelta(days=9))
    posted = [m.question_id for m in chat.questions()]
    assert len(posted) == 10
    # Without the exam `d-mc-2` (the one leaf question) would be about 1 in 5 of them.
    assert posted.count("d-mc-2") >= 4, posted


async def test_exam_prep_brings_slipping_cards_forward_without_changing_their_schedule(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    """An opted-in member's /review, once nothing is due, serves the exam's cards predicted
    under 90% on the day, weakest first, each once a day; reviewing one leaves its FSRS state
    and history as they were. Opting out, or the day passing, ends it."""

    await service.review.next(ANN)  # ann is a member now
    row = await db.fetchone("SELECT workspace_id, id FROM members WHERE external_id = 'id-ann'")
    assert row is not None
    ws, ann = int(row[0]), int(row[1])
    reviews = ReviewStore(db)
    leaf, graph, other = (
        await _question(db, "d-mc-2"),
        await _question(db, "d-mc-3"),
        await _question(db, "d-mc-1"),
    )
    # Easy first reviews (due in about a week): graph a day before the others, so it is
    # the weaker on the exam day.
    await reviews.record(ReviewItem(ws, ann, graph, srs.Grade.EASY, clock.now()))
    clock.advance(timedelta(days=1))
    for card in (leaf, other):
        await reviews.record(ReviewItem(ws, ann, card, srs.Grade.EASY, clock.now()))
    await service.exams.command(ROOT, ExamSet("2026-06-01", ("leaf", "retain-graph")))
    assert (await service.review.next(ANN)).key is None  # not opted in: nothing due

    on = await _text(service, ANN, ExamPrep(True))
    assert "Exam prep is on" in on and "under 90% on the day of the exam (2026-06-01)" in on
    before = {q: await reviews.card(ann, q) for q in (leaf, graph)}
    logged = await db.fetchval("SELECT count(*) FROM reviews WHERE member_id = ?", (ann,))

    first = await service.review.next(ANN)
    assert first.key == graph  # reviewed a day earlier: the weakest on the day, first
    assert "📅 Exam prep: brought forward" in (first.message.footer or "")
    graded = await service.review.grade(ANN, graph, "A", reviewed=0, card_reviews=1)
    assert graded.feedback is not None
    assert "schedule is unchanged" in (graded.feedback.footer or "")
    assert graded.key == leaf  # then the next one
    await service.review.grade(ANN, leaf, "B", reviewed=1, card_reviews=1)
    # A second click on a prep card's grade (a double click, an old message) is the same
    # prep review: it does not become a real review of a card that is not due.
    twice = await service.review.grade(ANN, leaf, "A", reviewed=2, card_reviews=1)
    assert twice.feedback is not None and "schedule is unchanged" in (twice.feedback.footer or "")
    assert await reviews.card(ann, graph) == before[graph]  # FSRS state untouched
    assert await reviews.card(ann, leaf) == before[leaf]
    assert (
        await db.fetchval("SELECT count(*) FROM reviews WHERE member_id = ?", (ann,)) == logged
    )  # and its history
    done = await service.review.next(ANN)
    assert done.key is None  # each once a day; d-mc-1 (autograd) is not on the exam

    clock.advance(timedelta(days=1))
    again = await service.review.next(ANN)
    assert again.key in (leaf, graph) and again.key != other

    off = await _text(service, ANN, ExamPrep(False))
    assert "Exam prep is off" in off
    assert (await service.review.next(ANN)).key is None

    await _text(service, ANN, ExamPrep(True))
    clock.set(datetime(2026, 6, 2, 9, tzinfo=UTC))  # the exam is over: back to normal
    after = await service.review.next(ANN)
    assert after.key is None or "Exam prep" not in (after.message.footer or "")
