"""Per-channel boards: `leaderboard ... here` counts only the questions of this channel."""

from __future__ import annotations

from datetime import timedelta

from bot.core.clock import SimulatedClock
from bot.services.bundle import Services
from tests.helpers import member

ANN, BOB = member("ann"), member("bob")
ANN_RANDOM, BOB_RANDOM = member("ann", channel="random"), member("bob", channel="random")


async def test_a_channel_board_beside_the_workspace_board(
    service: Services, clock: SimulatedClock
) -> None:
    general = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")  # 20 pts, B
    await service.quiz.answer(ANN, general.post.id, "B")
    random_q = await service.quiz.post_question(BOB_RANDOM, pack="mini", difficulty="medium")
    await service.quiz.answer(BOB_RANDOM, random_q.post.id, "B")
    await service.quiz.answer(ANN_RANDOM, random_q.post.id, "A")  # wrong: no points here

    workspace = (await service.standings.leaderboard(ANN, "week")).plain_text()
    assert "🏆 Leaderboard — this week" in workspace
    assert "ann — 20 pts" in workspace and "bob — 20 pts" in workspace

    here = (await service.standings.leaderboard(ANN, "week", here=True)).plain_text()
    assert here.startswith("🏆 Leaderboard in #general — this week")
    assert "🥇 ann — 20 pts (1 answer)" in here and "bob" not in here
    other = (await service.standings.leaderboard(BOB_RANDOM, "all", here=True)).plain_text()
    assert "in #random — all time" in other
    assert "🥇 bob — 20 pts (1 answer)" in other and "ann — " not in other
    assert "ann, you have no points" not in other  # bob is asking

    # Next week: the channel's weekly board starts empty; all time keeps the points.
    clock.advance(timedelta(days=7))
    assert (
        "No points yet"
        in (await service.standings.leaderboard(ANN, "week", here=True)).plain_text()
    )
    assert (
        "ann — 20 pts" in (await service.standings.leaderboard(ANN, "all", here=True)).plain_text()
    )

    # A streak bonus earned by an answer in this channel counts on its board too.
    clock.advance(timedelta(days=1))
    day2 = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    await service.quiz.answer(ANN, day2.post.id, "B")
    clock.advance(timedelta(days=1))
    day3 = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    feedback = (await service.quiz.answer(ANN, day3.post.id, "B")).plain_text()
    assert "+2" in feedback  # day 2 of a streak
    week = (await service.standings.leaderboard(ANN, "week", here=True)).plain_text()
    assert "ann — 42 pts (2 answers)" in week
