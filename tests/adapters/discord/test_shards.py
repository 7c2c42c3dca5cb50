"""Two bot processes with shard ranges against one Discord: each serves only its own servers.

The fake gives a client that IDENTIFYs as shard ``[id, count]`` only the guilds with
``(guild_id >> 22) % count == id``, and sends each interaction only to the shard of its guild,
as Discord does. Two adapters in one test are two ``studybot run --shards N --shard-count 2``
processes sharing one database; a question asked in a guild must be answered by the process
that runs that guild's shard, and ``serves`` must say the same as the gateway does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import discord
import pytest
from discord.ext import commands

from bot.adapters.discord.adapter import discord_shards
from bot.adapters.discord.client import ShardedStudyBot
from bot.core.clock import SimulatedClock
from bot.core.startup import StartupError
from tests.adapters.discord.conftest import Studybot, embed_text, make_settings, running
from tests.fakes.discord_api import FakeDiscord, FakeGuild

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def even(fake: FakeDiscord) -> FakeGuild:
    """A server on shard 0 of 2."""
    return fake.add_guild("Even Hall", channels=["general", "questions"], shard=(0, 2))


@pytest.fixture
def odd(fake: FakeDiscord) -> FakeGuild:
    """A server on shard 1 of 2."""
    return fake.add_guild("Odd Hall", channels=["general", "questions"], shard=(1, 2))


def record_interactions(studybot: Studybot) -> list[int | None]:
    """The guild of every interaction this process's client receives, in order."""
    seen: list[int | None] = []

    async def on_interaction(interaction: discord.Interaction[Any]) -> None:
        seen.append(interaction.guild_id)

    studybot.bot.add_listener(on_interaction, "on_interaction")
    return seen


async def test_each_process_sees_and_serves_only_the_guilds_of_its_shards(
    fake: FakeDiscord,
    even: FakeGuild,
    odd: FakeGuild,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
) -> None:
    first_settings = make_settings(
        fake, tmp_path, packs_dir, DISCORD_SHARDS="0-0", DISCORD_SHARD_COUNT="2"
    )
    second_settings = make_settings(
        fake, tmp_path, packs_dir, DISCORD_SHARDS="1-1", DISCORD_SHARD_COUNT="2"
    )
    async with (
        running(fake, first_settings, clock, even) as first,
        running(fake, second_settings, clock, odd) as second,
    ):
        assert isinstance(first.bot, commands.AutoShardedBot)
        assert [g.id for g in first.bot.guilds] == [even.id]
        assert [g.id for g in second.bot.guilds] == [odd.id]
        assert sorted(s.shard for s in fake.sessions if s.shard) == [(0, 2), (1, 2)]

        for studybot, mine, other in ((first, even, odd), (second, odd, even)):
            assert studybot.adapter.serves(str(mine.id))
            assert not studybot.adapter.serves(str(other.id))
            assert not studybot.adapter.serves("not-a-guild")


async def test_a_command_and_a_click_reach_the_process_of_their_guild(
    fake: FakeDiscord,
    even: FakeGuild,
    odd: FakeGuild,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
) -> None:
    alice = fake.add_member(even, 1001, "alice")
    bob = fake.add_member(odd, 1002, "bob")
    settings = [
        make_settings(fake, tmp_path, packs_dir, DISCORD_SHARDS=str(n), DISCORD_SHARD_COUNT="2")
        for n in (0, 1)
    ]
    async with (
        running(fake, settings[0], clock, even) as first,
        running(fake, settings[1], clock, odd) as second,
    ):
        at_first, at_second = record_interactions(first), record_interactions(second)

        in_odd = await second.quiz(bob, difficulty="medium")  # /quiz in the odd guild
        assert in_odd.channel_id == odd.channel("questions").id
        assert in_odd.custom_ids  # the question, with its answer buttons
        in_even = await first.quiz(alice, difficulty="medium")
        assert in_even.channel_id == even.channel("questions").id

        right = await (await fake.click(in_odd, bob, label="B")).response()
        assert right.ephemeral
        assert "Correct! +" in embed_text(right.data)
        wrong = await (await fake.click(in_even, alice, label="A")).response()
        assert wrong.ephemeral
        assert "Correct! +" not in embed_text(wrong.data)

        assert at_first == [even.id, even.id]  # the /quiz and the click, nothing of odd's
        assert at_second == [odd.id, odd.id]


async def test_a_shard_count_alone_runs_every_shard_in_one_process(
    fake: FakeDiscord,
    even: FakeGuild,
    odd: FakeGuild,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def no_identify_delay(self: Any, shard_id: int | None, *, initial: bool = False) -> None:
        return None  # discord.py waits 5 s between its shards' IDENTIFYs (Discord's limit)

    monkeypatch.setattr(ShardedStudyBot, "before_identify_hook", no_identify_delay)
    bob = fake.add_member(odd, 1002, "bob")
    settings = make_settings(fake, tmp_path, packs_dir, DISCORD_SHARD_COUNT="2")
    async with running(fake, settings, clock, odd) as studybot:
        assert {g.id for g in studybot.bot.guilds} == {even.id, odd.id}
        assert sorted(s.shard for s in fake.sessions if s.shard) == [(0, 2), (1, 2)]
        assert studybot.adapter.serves(str(even.id))
        assert studybot.adapter.serves(str(odd.id))
        question = await studybot.quiz(bob, difficulty="medium")
        assert question.channel_id == odd.channel("questions").id


async def test_without_shards_the_bot_is_one_plain_client_serving_everything(
    fake: FakeDiscord,
    even: FakeGuild,
    odd: FakeGuild,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
) -> None:
    settings = make_settings(fake, tmp_path, packs_dir)
    async with running(fake, settings, clock, even) as studybot:
        assert not isinstance(studybot.bot, discord.AutoShardedClient)
        assert {g.id for g in studybot.bot.guilds} == {even.id, odd.id}
        [session] = fake.sessions
        assert session.identify is not None
        assert "shard" not in session.identify
        assert all(studybot.adapter.serves(w) for w in (str(even.id), str(odd.id), "x"))
    assert fake.calls_to("GET", "/gateway/bot") == []


@pytest.mark.parametrize(
    ("shards", "count", "message"),
    [
        (
            "0-2",
            "2",
            "invalid settings: DISCORD_SHARDS: shard 2 is out of range: with a shard count of 2 "
            "the shards are 0 to 1",
        ),
        (
            "0-1",
            None,
            "invalid settings: DISCORD_SHARDS needs DISCORD_SHARD_COUNT, the number of shards "
            "across all processes (the same in each), e.g. DISCORD_SHARDS=0-3 with "
            "DISCORD_SHARD_COUNT=8",
        ),
        (
            "first",
            "2",
            "invalid settings: DISCORD_SHARDS: expected shard ids, e.g. 0-3, 0,2,5 or 3; "
            "got 'first'",
        ),
    ],
)
def test_bad_shard_settings_are_one_startup_line(
    fake: FakeDiscord, tmp_path: Path, packs_dir: Path, shards: str, count: str | None, message: str
) -> None:
    extra = {"DISCORD_SHARDS": shards} | ({"DISCORD_SHARD_COUNT": count} if count else {})
    settings = make_settings(fake, tmp_path, packs_dir, **extra)
    with pytest.raises(StartupError) as raised:
        discord_shards(settings)
    assert str(raised.value) == message
