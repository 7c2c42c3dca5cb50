"""``/round start|stop`` on Discord: the real discord.py client, the Discord fake, and the one
timer loop with the app's due sources (what ``studybot run`` starts beside the adapter).

A round's questions are channel posts with buttons, the reveal at each deadline edits the
post ("Who got it right"), and the board is a channel post at the end; the simulated clock
is moved by the scheduler's own ``advance``, stopping at every due step as a running bot would.
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import Wiring
from bot.core.clock import SimulatedClock
from bot.scheduler import Scheduler
from bot.services.rounds import READY
from bot.settings import Settings
from tests.adapters.discord.conftest import (
    CARDS,
    DRILL,
    Studybot,
    embed_text,
    public_messages,
    running,
)
from tests.conftest import ROUND_PACKS, TEST_PACKS
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember, FakeMessage

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def packs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", folder / "mini.yaml")
    (folder / "cards.yaml").write_text(CARDS)
    (folder / "drill.yaml").write_text(DRILL)
    shutil.copy(ROUND_PACKS / "duo.yaml", folder / "duo.yaml")
    return folder


@pytest.fixture
async def scheduler(studybot: Studybot) -> AsyncIterator[Scheduler]:
    """The process's one timer loop, built as ``studybot run`` builds it (rounds included)."""
    loop = Wiring().scheduler(studybot.runtime, studybot.adapter, concurrency=1)
    async with loop.running():
        yield loop


async def _round(
    studybot: Studybot, member: FakeMember, sub: str, options: dict[str, object] | None = None
) -> FakeMessage:
    ix = await studybot.fake.slash_command(
        studybot.guild, "general", member, "round", options or {}, subcommand=sub
    )
    return await ix.reply()


def _questions(fake: FakeDiscord, studybot: Studybot) -> list[FakeMessage]:
    """The round's questions in #general (a revealed one keeps its heading)."""
    channel = studybot.guild.channel("general")
    return [m for m in public_messages(fake, channel.id) if "🏁 Question" in embed_text(m)]


async def test_a_round_posts_questions_reveals_who_got_it_right_and_ends_with_the_board(
    fake: FakeDiscord,
    studybot: Studybot,
    scheduler: Scheduler,
    alice: FakeMember,
    bob: FakeMember,
) -> None:
    clock = studybot.clock
    announced = await _round(
        studybot, alice, "start", {"pack": "duo", "questions": 2, "seconds": 10}
    )
    assert not announced.ephemeral
    assert "A round of 2 questions starts now" in embed_text(announced)
    assert "10 s per question" in embed_text(announced)
    assert "Started by alice" in embed_text(announced)

    await scheduler.advance(clock, clock.now() + READY)  # a moment after the announcement
    [first] = _questions(fake, studybot)
    assert "🏁 Question 1 of 2" in embed_text(first)
    assert "10 s to answer" in embed_text(first)
    assert [b["label"] for b in first.buttons] == ["A", "B"]
    right = await (await fake.click(first, alice, label="A")).reply()
    assert right.ephemeral and "Correct" in embed_text(right)
    wrong = await (await fake.click(first, bob, label="B")).reply()
    assert wrong.ephemeral

    await scheduler.advance(clock, clock.now() + timedelta(seconds=11))
    assert first.edits == 1
    revealed = embed_text(first)
    assert "Who got it right" in revealed
    assert "alice +15" in revealed  # 10 points, +50 % for answering at once
    assert "bob" not in revealed.split("Who got it right")[1]
    assert first.components == []

    # The pause, then the second question; nobody answers it.
    await scheduler.advance(clock, clock.now() + timedelta(seconds=6))
    [second] = [m for m in _questions(fake, studybot) if "Question 2 of 2" in embed_text(m)]
    assert "🏁 Question 2 of 2" in embed_text(second)
    await scheduler.advance(clock, clock.now() + timedelta(seconds=15))
    assert second.edits == 1
    assert "Nobody this time." in embed_text(second)

    channel = studybot.guild.channel("general")
    [board] = [m for m in public_messages(fake, channel.id) if "Round board" in embed_text(m)]
    text = embed_text(board)
    assert "🥇 **alice** — 15 pts · 1/2 right" in text
    assert "2. **bob** — 0 pts · 0/2 right" in text  # no medal for no points; out of the 2 asked
    assert "2 of 2 questions · started by alice" in text
    assert board.id > second.id  # after the last reveal
    assert set(board.files) == {"round-board.png"}  # the board drawn, shown inline
    assert board.files["round-board.png"].startswith(b"\x89PNG\r\n\x1a\n")

    # The round is over: another can start.
    again = await _round(studybot, bob, "start", {"pack": "duo", "questions": 1})
    assert not again.ephemeral and "A round of 1 question" in embed_text(again)


async def test_only_the_starter_or_an_admin_stops_a_round_and_one_runs_at_a_time(
    fake: FakeDiscord,
    studybot: Studybot,
    scheduler: Scheduler,
    alice: FakeMember,
    bob: FakeMember,
    admin: FakeMember,
) -> None:
    await _round(studybot, alice, "start", {"pack": "duo", "questions": 2})
    await scheduler.advance(studybot.clock, studybot.clock.now() + READY)

    twice = await _round(studybot, bob, "start", {"difficulty": "easy"})
    assert twice.ephemeral
    assert "A round is already running here; `/round stop` ends it" in twice.content + embed_text(
        twice
    )

    refused = await _round(studybot, bob, "stop")
    assert refused.ephemeral
    assert "Only whoever started the round, or an admin, can stop it." in (
        refused.content + embed_text(refused)
    )

    board = await _round(studybot, admin, "stop")
    assert not board.ephemeral
    text = embed_text(board)
    assert "Round board" in text and "Nobody answered this round." in text
    assert "Stopped by grace after 1 of 2 questions." in text

    # Nothing more comes from the stopped round, however long the clock runs.
    channel = studybot.guild.channel("general")
    posted = len(public_messages(fake, channel.id))
    await scheduler.advance(studybot.clock, studybot.clock.now() + timedelta(minutes=5))
    assert len(public_messages(fake, channel.id)) == posted
    nothing = await _round(studybot, alice, "stop")
    assert nothing.ephemeral and "No round is running here." in (
        nothing.content + embed_text(nothing)
    )


async def test_round_options_are_synced_and_pack_is_autocompleted(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    [put] = fake.calls_to("PUT", "/applications/{app}/commands")
    [group] = [c for c in put.json if c["name"] == "round"]
    subs = {o["name"]: o for o in group["options"]}
    assert sorted(subs) == ["skip", "start", "stop"]
    start = {o["name"]: o for o in subs["start"]["options"]}
    assert list(start) == [
        "pack", "questions", "seconds", "difficulty", "tag", "teams", "talk", "scoring",
        "team_roles",
    ]  # fmt: skip
    assert (start["teams"]["min_value"], start["teams"]["max_value"]) == (2, 8)
    assert [c["value"] for c in start["scoring"]["choices"]] == ["speed", "accuracy"]
    assert (start["questions"]["min_value"], start["questions"]["max_value"]) == (1, 50)
    assert (start["seconds"]["min_value"], start["seconds"]["max_value"]) == (5, 300)
    assert start["pack"]["autocomplete"] is True

    ix = await fake.autocomplete(
        studybot.guild,
        "general",
        alice,
        "round",
        {"pack": "du"},
        focused="pack",
        subcommand="start",
    )
    choices = (await ix.response()).choices
    assert [c["value"] for c in choices] == ["duo"]


async def test_an_accuracy_round_and_a_skip_vote_on_discord(
    fake: FakeDiscord,
    studybot: Studybot,
    scheduler: Scheduler,
    alice: FakeMember,
    bob: FakeMember,
    admin: FakeMember,
) -> None:
    clock = studybot.clock
    announced = await _round(
        studybot,
        alice,
        "start",
        {"pack": "duo", "questions": 2, "seconds": 10, "scoring": "accuracy"},
    )
    assert "Accuracy first" in embed_text(announced) and "`/round skip`" in embed_text(announced)
    await scheduler.advance(clock, clock.now() + READY)
    [first] = _questions(fake, studybot)
    await (await fake.click(first, alice, label="A")).reply()
    await (await fake.click(first, bob, label="B")).reply()
    await scheduler.advance(clock, clock.now() + timedelta(seconds=11))
    assert "alice +10" in embed_text(first)  # accuracy first: no speed bonus
    await scheduler.advance(clock, clock.now() + timedelta(seconds=6))
    [second] = [m for m in _questions(fake, studybot) if "Question 2 of 2" in embed_text(m)]

    outsider = await _round(studybot, admin, "skip")
    assert outsider.ephemeral and "Only players vote to skip" in outsider.content
    vote = await _round(studybot, alice, "skip")
    assert vote.ephemeral and "1 of the 2 needed" in vote.content + embed_text(vote)
    skipped = await _round(studybot, bob, "skip")
    assert not skipped.ephemeral and "Question 2 is skipped" in embed_text(skipped)
    await scheduler.advance(clock, clock.now() + timedelta(seconds=1))
    assert second.edits == 1 and "scores nothing" in embed_text(second)
    assert second.components == []  # no more answers
    await scheduler.advance(clock, clock.now() + timedelta(seconds=30))
    channel = studybot.guild.channel("general")
    [board] = [m for m in public_messages(fake, channel.id) if "Round board" in embed_text(m)]
    assert "**alice** — 10 pts · 1/1 right" in embed_text(board)  # the skipped one not counted


async def test_a_team_round_on_discord_ends_with_the_team_board_beside_the_players(
    fake: FakeDiscord,
    studybot: Studybot,
    scheduler: Scheduler,
    alice: FakeMember,
    bob: FakeMember,
) -> None:
    clock = studybot.clock
    announced = await _round(
        studybot, alice, "start", {"pack": "duo", "questions": 1, "seconds": 10, "teams": 2}
    )
    assert "2 teams" in embed_text(announced)
    await scheduler.advance(clock, clock.now() + READY)
    [first] = _questions(fake, studybot)
    await (await fake.click(first, alice, label="A")).reply()
    await (await fake.click(first, bob, label="B")).reply()
    await scheduler.advance(clock, clock.now() + timedelta(seconds=12))
    assert "alice (🔴)" in embed_text(first)
    channel = studybot.guild.channel("general")
    [board] = [m for m in public_messages(fake, channel.id) if "Round board" in embed_text(m)]
    text = embed_text(board)
    assert "🥇 **🔴 Red** — 15.0 pts a player · 1 player · 1/1 right" in text
    assert "🥈 **🔵 Blue** — 0.0 pts a player · 1 player · 0/1 right" in text
    assert set(board.files) == {"team-board.png", "round-board.png"}


async def test_teams_from_roles_on_discord_place_each_player_by_the_roles_they_hold(
    fake: FakeDiscord,
    guild: FakeGuild,
    settings: Settings,
    clock: SimulatedClock,
) -> None:
    """`team_roles` takes role mentions (what Discord sends for a role picked while typing)
    or names; a player's team is read from their roles, and a member with none of them is
    refused."""
    red = fake.add_role(guild, "Table Red")
    blue = fake.add_role(guild, "Table Blue")
    alice = fake.add_member(guild, 1001, "alice", roles=[blue])
    bob = fake.add_member(guild, 1002, "bob", roles=[blue])
    carl = fake.add_member(guild, 1004, "carl", roles=[red])
    dora = fake.add_member(guild, 1005, "dora")
    async with running(fake, settings, clock, guild) as studybot:
        loop = Wiring().scheduler(studybot.runtime, studybot.adapter, concurrency=1)
        async with loop.running():
            unknown = await _round(studybot, alice, "start", {"team_roles": "<@&1> @Table Red"})
            assert "There is no role `<@&1>` here" in embed_text(unknown) + unknown.content
            both = await _round(studybot, alice, "start", {"teams": 2, "team_roles": "@x @y"})
            assert "not both" in embed_text(both) + both.content
            announced = await _round(
                studybot,
                alice,
                "start",
                {"pack": "duo", "questions": 1, "seconds": 10,
                 "team_roles": f"<@&{red.id}>, <@&{blue.id}>"},
            )  # fmt: skip
            assert "2 teams** (🔴 @Table Red, 🔵 @Table Blue)" in embed_text(announced)
            await loop.advance(clock, clock.now() + READY)
            [first] = _questions(fake, studybot)
            for member, label in ((alice, "A"), (bob, "B"), (carl, "A")):
                await (await fake.click(first, member, label=label)).reply()
            refused = await (await fake.click(first, dora, label="A")).reply()
            assert "you hold none of them (@Table Red or @Table Blue)" in (
                refused.content + embed_text(refused)
            )
            await loop.advance(clock, clock.now() + timedelta(seconds=12))
            assert "carl (🔴)" in embed_text(first) and "alice (🔵)" in embed_text(first)
            assert "dora" not in embed_text(first)
            channel = studybot.guild.channel("general")
            [board] = [
                m for m in public_messages(fake, channel.id) if "Round board" in embed_text(m)
            ]
            text = embed_text(board)
            assert "**🔴 @Table Red** — 15.0 pts a player · 1 player · 1/1 right" in text
            assert "**🔵 @Table Blue** — 7.5 pts a player · 2 players · 1/2 right" in text
