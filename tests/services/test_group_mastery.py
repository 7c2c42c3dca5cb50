"""Group mastery for admins: the tags the group is weak in, who has cards due, and nothing
said about fewer than five members.

Six members answer two tagged questions (``leaf``: one of six right; ``retain-graph``: all
right) on Wednesday; on Thursday evening three answer an untagged one. On Friday an admin
asks for the picture: ``leaf`` is the weakest tag, the untagged week is withheld (three
members), and everyone's first cards are overdue while the late member's one is merely due.
"""

from __future__ import annotations

import io
from datetime import date, timedelta

import pytest
from PIL import Image

from bot.app import Built
from bot.core import srs
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden
from bot.services.group_mastery import GroupMastery
from bot.services.groupchart import draw_group_chart
from bot.storage.database import Database
from bot.storage.group_mastery import GroupMasteryStore, TagRecall
from bot.storage.reviews import ReviewStore
from bot.storage.timefmt import from_db, to_db
from tests.helpers import member

ADMIN = member("root", admin=True)
GROUP = [member(f"m{i}") for i in range(1, 7)]
LATE = member("zed")
WEEK = date(2026, 3, 2)  # the Monday of the tests' start (Wednesday 4 March 2026)


def _mastery(db: Database, built: Built, clock: SimulatedClock) -> GroupMastery:
    return GroupMastery(built.services.places, GroupMasteryStore(db), ReviewStore(db), clock)


async def _answers(built: Built, clock: SimulatedClock) -> None:
    quiz = built.services.quiz
    leaf = await quiz.post_question(ADMIN, question="d-mc-2")  # A is right
    graph = await quiz.post_question(ADMIN, question="d-mc-3")  # A is right
    for i, ctx in enumerate(GROUP):
        await quiz.answer(ctx, leaf.post.id, "A" if i == 0 else "B")
        await quiz.answer(ctx, graph.post.id, "A")
    clock.advance(timedelta(hours=36))  # Thursday 21:00, the same UTC week
    untagged = await quiz.post_question(ADMIN, question="d-mc-1")  # B is right
    for ctx, letter in ((GROUP[0], "B"), (GROUP[1], "B"), (LATE, "A")):
        await quiz.answer(ctx, untagged.post.id, letter)
    await quiz.flushed()
    clock.advance(timedelta(hours=12))  # Friday 09:00


async def test_weakest_tags_withheld_cells_and_due_members(
    db: Database, built: Built, clock: SimulatedClock
) -> None:
    await _answers(built, clock)
    picture = await _mastery(db, built, clock).picture(ADMIN, weeks=4)

    text = picture.message.plain_text()
    assert picture.message.title == "Group mastery"
    # leaf: 1 of 6 right; retain-graph: 6 of 6; the untagged question has only 3 members.
    assert "Weakest tags: leaf 17% (1 of 6 right), retain-graph 100% (6 of 6 right)" in text
    assert "(untagged)" not in text.split("Weakest tags:")[1].split("\n")[0]
    # Everyone has cards from Wednesday (due minutes after): overdue by Friday. zed's card
    # from Thursday evening is due, not a day overdue.
    assert "7 members have cards due, 6 overdue." in text
    assert "Withheld: 1 tag-week cell and 1 tag in all, answered by fewer than 5 members" in text

    chart = picture.chart
    assert list(chart.weeks) == [WEEK - timedelta(weeks=w) for w in (3, 2, 1, 0)]
    assert chart.tags[:2] == ["leaf", "retain-graph"]  # most answered first
    assert chart.cells[("leaf", WEEK)].share == pytest.approx(1 / 6)
    assert chart.cells[("", WEEK)].withheld  # 3 members: no number anywhere
    assert chart.cells[("", WEEK)].share is None
    assert "67%" not in draw_group_chart(chart, fmt="svg").decode()
    assert "(untagged) (week of Mar 2)" in picture.alt
    assert "Weakest tags: leaf 17%" in picture.alt
    assert "7 members have cards due, 6 overdue" in picture.alt
    assert picture.message.attachments[0].description == picture.alt
    assert picture.message.attachments[0].content == picture.png
    assert picture.message.ephemeral  # the group's figures go to the admin who asked

    bars = {bar.tag: bar for bar in chart.recall}
    assert bars["leaf"].cards == 6 and bars["leaf"].recall is not None
    assert bars[""].recall is None  # three members' cards: withheld too
    assert bars["leaf"].recall == pytest.approx(await _python_recall(db, "leaf", clock))

    image = Image.open(io.BytesIO(picture.png))
    assert image.format == "PNG"
    assert 900 <= image.width <= 1100 and 400 <= image.height <= 1400, image.size
    colours = image.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 50  # not blank
    image.save("/tmp/group-mastery.png")


async def _python_recall(db: Database, tag: str, clock: SimulatedClock) -> float:
    """The mean of :func:`bot.core.srs.retrievability` over the tag's cards: what the store
    computes in SQL must agree with the core's FSRS."""
    rows = await db.fetchall(
        "SELECT c.state, c.step, c.stability, c.difficulty, c.due, c.last_review, c.reviews "
        "FROM cards c JOIN questions q ON q.id = c.question_id WHERE q.tags = ?",
        (f",{tag},",),
    )
    settings = srs.SrsSettings()
    cards = [
        srs.CardState(
            int(r[0]),
            None if r[1] is None else int(r[1]),
            None if r[2] is None else float(r[2]),
            None if r[3] is None else float(r[3]),
            from_db(str(r[4])),
            from_db(str(r[5])),
            int(r[6]),
        )
        for r in rows
    ]
    assert cards
    return sum(srs.retrievability(c, clock.now(), settings) for c in cards) / len(cards)


async def test_recall_in_sql_matches_the_core_over_many_days(
    db: Database, built: Built, clock: SimulatedClock
) -> None:
    """Whole days since the last review, as FSRS counts them: checked at several ages."""
    await _answers(built, clock)
    store = GroupMasteryStore(db)
    for days in (0, 1, 3, 10, 40):
        now = clock.now() + timedelta(days=days, hours=5)
        by_tag: dict[str, TagRecall] = {
            r.tag: r for r in await store.cards(1, now, srs.SrsSettings())
        }
        ws = await db.fetchval("SELECT id FROM workspaces WHERE external_id = 'ws1'")
        if ws != 1:  # the workspace's row id, whatever the engine numbered it
            by_tag = {r.tag: r for r in await store.cards(int(ws), now, srs.SrsSettings())}
        moved = SimulatedClock(now)
        assert by_tag["leaf"].mean == pytest.approx(await _python_recall(db, "leaf", moved))
        assert by_tag["leaf"].members == 6


async def test_members_only_see_their_own(
    db: Database, built: Built, clock: SimulatedClock
) -> None:
    await _answers(built, clock)
    with pytest.raises(Forbidden, match="Only admins can see the group's mastery"):
        await _mastery(db, built, clock).picture(GROUP[0])


@pytest.mark.parametrize("weeks", [0, 27, -1])
async def test_weeks_out_of_range(
    db: Database, built: Built, clock: SimulatedClock, weeks: int
) -> None:
    with pytest.raises(BadInput, match="from 1 to 26"):
        await _mastery(db, built, clock).picture(ADMIN, weeks=weeks)


async def test_a_small_group_is_withheld_whole(
    db: Database, built: Built, clock: SimulatedClock
) -> None:
    """Four members: no tag reaches five, so no share, no weakest tag and no recall bar."""
    quiz = built.services.quiz
    leaf = await quiz.post_question(ADMIN, question="d-mc-2")
    for ctx in GROUP[:4]:
        await quiz.answer(ctx, leaf.post.id, "B")
    await quiz.flushed()
    picture = await _mastery(db, built, clock).picture(ADMIN)
    text = picture.message.plain_text()
    assert "No tag has been answered by 5 members yet." in text
    assert "Withheld:" in text
    assert all(cell.share is None for cell in picture.chart.cells.values())
    assert all(bar.recall is None for bar in picture.chart.recall)
    drawn = draw_group_chart(picture.chart, fmt="svg").decode()
    assert "withheld: fewer than 5 members" in drawn


async def test_answers_before_the_period_and_other_workspaces_do_not_count(
    db: Database, built: Built, clock: SimulatedClock
) -> None:
    await _answers(built, clock)
    other = member("admin2", admin=True, workspace="ws2")
    quiz = built.services.quiz
    post = await quiz.post_question(other, question="d-mc-2")
    for i in range(6):
        await quiz.answer(member(f"o{i}", workspace="ws2"), post.post.id, "A")
    await quiz.flushed()
    # Two weeks on, a one-week picture has no answers at all; the cards are still there.
    clock.advance(timedelta(weeks=2))
    picture = await _mastery(db, built, clock).picture(ADMIN, weeks=1)
    assert picture.chart.cells == {}
    assert {bar.tag for bar in picture.chart.recall} >= {"leaf", "retain-graph"}
    mine = await _mastery(db, built, clock).picture(ADMIN, weeks=4)
    assert mine.chart.cells[("leaf", WEEK)].answers == 6  # not ws2's six
    assert to_db(clock.now()) > "2026-03-16"
