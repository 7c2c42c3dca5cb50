"""Data before messages: the read methods an admin page calls return the facts chat shows.

Boards, a member's report, schedules with their next times, a channel's history and the open
reports, asked of the feature services directly (``service.standings``, ``.schedules``,
``.history``, ``.reports``), with the same permission checks as the chat commands.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.models import Window
from bot.services.bundle import Services
from bot.services.reports import OpenReport
from tests.helpers import member, schedule_command

ANN, BOB = member("ann"), member("bob")
ADMIN = member("root", admin=True)
ANN_RANDOM, BOB_RANDOM = member("ann", channel="random"), member("bob", channel="random")
BERLIN = ZoneInfo("Europe/Berlin")


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


# --- boards ----------------------------------------------------------------------------------


async def test_the_workspace_board_and_a_channels_board_are_rows(
    service: Services, clock: SimulatedClock
) -> None:
    general = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")  # 20 pts, B
    await service.quiz.answer(ANN, general.post.id, "B")
    in_random = await service.quiz.post_question(BOB_RANDOM, pack="mini", difficulty="medium")
    await service.quiz.answer(BOB_RANDOM, in_random.post.id, "B")
    await service.quiz.answer(ANN_RANDOM, in_random.post.id, "A")  # wrong: no points

    board = await service.standings.board(ANN, "week")
    assert board.window is Window.WEEK and board.channel is None
    assert board.since == utc(2026, 3, 2)  # Monday, the week's start in UTC
    assert [(r.rank, r.display_name, r.points, r.answers) for r in board.rows] == [
        (1, "ann", 20, 2),  # a tie: one rank, then by name
        (1, "bob", 20, 1),
    ]
    assert board.caller is not None and board.caller.display_name == "ann"

    here = await service.standings.channel_board(ANN, Window.WEEK)
    assert here.channel == "general"
    assert [(r.rank, r.display_name, r.points, r.answers) for r in here.rows] == [(1, "ann", 20, 1)]
    there = await service.standings.channel_board(BOB_RANDOM)
    assert there.channel == "random"
    assert [(r.display_name, r.points) for r in there.rows] == [("bob", 20)]
    assert there.caller is not None and there.caller.display_name == "bob"

    clock.advance(timedelta(days=7))  # a new week: nobody has points in it yet
    empty = await service.standings.board(BOB, Window.WEEK)
    assert empty.rows == () and empty.caller is None
    everything = await service.standings.board(BOB, "all")
    assert everything.since is None and len(everything.rows) == 2
    with pytest.raises(BadInput, match="week, month or all"):
        await service.standings.board(ANN, "year")
    with pytest.raises(BadInput, match="week, month or all"):
        await service.standings.channel_board(ANN, "year")


async def test_a_caller_below_the_top_ten_comes_with_their_own_row(
    service: Services,
) -> None:
    medium = await service.quiz.post_question(ADMIN, pack="mini", difficulty="medium")  # 20 pts, B
    for i in range(10):
        await service.quiz.answer(member(f"m{i:02}"), medium.post.id, "B")
    easy = await service.quiz.post_question(ADMIN, pack="mini", difficulty="easy", tags=("leaf",))
    zed = member("zed")
    await service.quiz.answer(zed, easy.post.id, "A")  # right, fewer points
    board = await service.standings.board(zed, "all")
    assert [r.display_name for r in board.rows] == [f"m{i:02}" for i in range(10)]
    assert {r.rank for r in board.rows} == {1}
    assert board.caller is not None
    assert (board.caller.rank, board.caller.display_name) == (11, "zed")
    assert 0 < board.caller.points < 20


# --- a member's report -------------------------------------------------------------------------


async def test_a_members_report_has_points_accuracy_streak_rank_and_cards(
    service: Services, clock: SimulatedClock
) -> None:
    fresh = await service.standings.member_report(ANN)
    assert fresh.own and fresh.accuracy is None
    assert (fresh.stats.answered, fresh.stats.points_all, fresh.stats.current_streak) == (0, 0, 0)
    assert fresh.reviews is not None and fresh.reviews.cards == 0

    draft = await service.quiz.post_question(ADMIN, pack="mini", difficulty="medium")  # 20 pts, B
    await service.quiz.answer(ANN, draft.post.id, "B")
    await service.quiz.answer(BOB, draft.post.id, "A")
    card = await service.quiz.post_question(
        ADMIN, pack="mini", difficulty="easy", tags=("autograd",)
    )
    await service.quiz.answer(ANN, card.post.id, "forgot")
    clock.advance(timedelta(days=1))

    mine = await service.standings.member_report(ANN)
    stats = mine.stats
    assert mine.own and stats.display_name == "ann"
    assert (stats.points_all, stats.points_week, stats.answered, stats.correct) == (20, 20, 2, 1)
    assert mine.accuracy == 0.5
    assert (stats.current_streak, stats.best_streak, stats.last_day) == (1, 1, date(2026, 3, 4))
    assert stats.rank_all == 1
    assert mine.timezone == ZoneInfo("UTC")
    reviews = mine.reviews
    assert reviews is not None
    assert (reviews.cards, reviews.due) == (2, 2)  # both due a day on (one forgotten, one new)
    assert sorted(tag for tag, _, _ in reviews.tags) == ["", "autograd"]
    assert all(count == 1 and 0 < mastery <= 1 for _, count, mastery in reviews.tags)

    theirs = await service.standings.member_report(ANN, "@bob")
    assert not theirs.own and theirs.stats.display_name == "bob"
    assert (theirs.stats.answered, theirs.stats.correct, theirs.accuracy) == (1, 0, 0.0)
    with pytest.raises(NotFound, match="No member called `nobody`"):
        await service.standings.member_report(ANN, "nobody")


# --- schedules ---------------------------------------------------------------------------------


async def test_schedules_come_with_their_next_times_in_their_own_zone(
    service: Services, clock: SimulatedClock
) -> None:
    clock.set(utc(2026, 3, 27, 12))
    empty = await service.schedules.channel_schedules(ANN)
    assert empty.channel == "general" and empty.schedules == ()

    await schedule_command(service, ADMIN, "add", ["02:30", "Europe/Berlin"])
    await schedule_command(service, ADMIN, "add", ["10:00", "UTC", "weekdays"])
    await schedule_command(service, ADMIN, "pause", ["2"])

    listed = await service.schedules.channel_schedules(ANN, 3)
    assert listed.channel == "general"
    berlin, weekdays = listed.schedules
    assert (berlin.id, berlin.channel, berlin.paused) == (1, "general", False)
    assert berlin.times == (
        datetime(2026, 3, 28, 2, 30, tzinfo=BERLIN),
        datetime(2026, 3, 29, 3, 30, tzinfo=BERLIN),  # clocks skip 02:30
        datetime(2026, 3, 30, 2, 30, tzinfo=BERLIN),
    )
    assert [t.tzinfo for t in berlin.times] == [BERLIN] * 3
    assert [f"{t:%H:%M %Z}" for t in berlin.times] == ["02:30 CET", "03:30 CEST", "02:30 CEST"]
    assert berlin.texts[1] == "Sun 2026-03-29 03:30 CEST (shifted: clocks skip 02:30 on 2026-03-29)"
    assert berlin.schedule is not None and berlin.schedule.spec.timezone == "Europe/Berlin"
    # A paused schedule shows the times it posts once resumed.
    assert weekdays.paused
    assert weekdays.times == (utc(2026, 3, 30, 10), utc(2026, 3, 31, 10), utc(2026, 4, 1, 10))

    one = await service.schedules.upcoming(BOB, 1, 2)
    assert one.id == 1 and one.times == berlin.times[:2] and one.texts == berlin.texts[:2]
    assert len((await service.schedules.upcoming(BOB, 1)).times) == 5  # the default
    # Everyone may read them; the same rules as `schedule preview` apply.
    with pytest.raises(BadInput, match="from 1 to 25"):
        await service.schedules.upcoming(BOB, 1, 26)
    with pytest.raises(BadInput, match="from 1 to 25"):
        await service.schedules.channel_schedules(BOB, 0)
    with pytest.raises(BadInput, match="posts in #general, not in this channel"):
        await service.schedules.upcoming(BOB_RANDOM, 1)
    assert (await service.schedules.upcoming(BOB_RANDOM, 1, channel="general")).id == 1
    with pytest.raises(NotFound, match="no schedule #1 here"):
        await service.schedules.upcoming(member("eve", workspace="ws2"), 1)


# --- a channel's history -----------------------------------------------------------------------


async def test_a_channels_history_is_its_questions_newest_first_open_ones_without_counts(
    service: Services, clock: SimulatedClock
) -> None:
    assert (await service.history.channel_history(ANN)).questions == ()
    first = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")  # answer: B
    await service.quiz.answer(ANN, first.post.id, "B")
    await service.quiz.answer(BOB, first.post.id, "A")
    await service.quiz.reveal(ADMIN, first.post.id)
    clock.advance(timedelta(hours=1))
    second = await service.quiz.post_question(ANN, pack="mini", difficulty="hard")
    await service.quiz.answer(BOB, second.post.id, "A")
    await service.quiz.post_question(ANN_RANDOM, pack="mini")  # another channel's

    history = await service.history.channel_history(ANN)
    assert history.channel == "general" and history.timezone == ZoneInfo("UTC")
    newest, oldest = history.questions
    assert (newest.post.id, oldest.post.id) == (second.post.id, first.post.id)
    assert newest.post.is_open and newest.counts == {}  # nothing tells how it is going
    assert (newest.answered, newest.right) == (0, None)
    assert (oldest.pack, oldest.pack_title, oldest.item.id) == ("mini", "Mini pack", "d-mc-1")
    assert dict(oldest.counts) == {"A": 1, "B": 1}
    assert (oldest.answered, oldest.right) == (2, 1)
    assert oldest.post.posted_at == utc(2026, 3, 4, 9)
    assert [q.post.id for q in (await service.history.channel_history(ANN, 1)).questions] == [
        second.post.id
    ]
    with pytest.raises(BadInput, match="Show 1 to 20 questions"):
        await service.history.channel_history(ANN, 21)


# --- open reports ------------------------------------------------------------------------------


async def test_open_reports_are_rows_and_for_admins_only(service: Services) -> None:
    assert await service.reports.open_reports(ADMIN) == []
    draft = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    await service.reports.report(ANN, draft.post.id, "the answer should be A")
    await service.reports.report(BOB, None, "the explanation is vague")
    with pytest.raises(Forbidden, match="Only admins can see the reports"):
        await service.reports.open_reports(ANN)
    reports = await service.reports.open_reports(ADMIN)
    assert reports == [
        OpenReport("d-mc-1", "mini", draft.post.id, "ann", "the answer should be A", reports[0].reported_at),
        OpenReport("d-mc-1", "mini", draft.post.id, "bob", "the explanation is vague", reports[1].reported_at),
    ]  # fmt: skip
    assert {r.reported_at for r in reports} == {utc(2026, 3, 4, 9)}
    assert await service.reports.open_reports(member("root", admin=True, workspace="ws2")) == []
    await service.reports.resolve(ADMIN, "d-mc-1")
    assert await service.reports.open_reports(ADMIN) == []
