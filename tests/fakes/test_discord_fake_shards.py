"""Contract tests for the fake's sharding: what Discord sends a client that IDENTIFYs as a shard.

Discord gives shard ``[id, count]`` only the guilds with ``(guild_id >> 22) % count == id``, in
READY, as GUILD_CREATE and for every later event; events outside any guild go to shard 0.
The clients here are discord.py's own ``AutoShardedClient``, so the fake is checked against the
library that studybot's sharded processes use.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import discord
import pytest

from tests.fakes.discord_api import (
    FakeDiscord,
    FakeGuild,
    assert_discord_quiet,
    use_discord_endpoints,
)

pytestmark = pytest.mark.timeout(60)


class ShardClient(discord.AutoShardedClient):
    """A bare sharded client: no 5 s wait between its shards' IDENTIFYs (that is for Discord's
    rate limit, which the fake does not have)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(intents=discord.Intents.default(), guild_ready_timeout=0.05, **options)
        self.joined: list[int] = []

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return None

    async def on_guild_join(self, guild: discord.Guild) -> None:
        self.joined.append(guild.id)


@pytest.fixture
async def fake(caplog: pytest.LogCaptureFixture) -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(shard_count=2) as fake:
        with use_discord_endpoints(fake.api_base, fake.gateway_url):
            yield fake
    assert_discord_quiet(fake, caplog.records)


@pytest.fixture
def guilds(fake: FakeDiscord) -> tuple[FakeGuild, FakeGuild]:
    """One guild on each of two shards."""
    return fake.add_guild("Even", shard=(0, 2)), fake.add_guild("Odd", shard=(1, 2))


def test_add_guild_picks_an_id_on_the_shard_asked_for(fake: FakeDiscord) -> None:
    for shard in (0, 1, 2, 3, 4, 4, 0):
        guild = fake.add_guild(f"g{shard}", shard=(shard, 5))
        assert (guild.id >> 22) % 5 == shard
    assert len(fake.guilds) == 7  # distinct ids


async def test_each_shard_gets_only_its_guilds(
    fake: FakeDiscord, guilds: tuple[FakeGuild, FakeGuild]
) -> None:
    even, odd = guilds
    first, second = (
        ShardClient(shard_ids=[0], shard_count=2),
        ShardClient(shard_ids=[1], shard_count=2),
    )
    async with fake.running(first), fake.running(second):
        assert [g.id for g in first.guilds] == [even.id]
        assert [g.id for g in second.guilds] == [odd.id]
        assert sorted(s.shard for s in fake.sessions if s.shard) == [(0, 2), (1, 2)]
        for session in fake.sessions:
            ready = next(f for f in session.sent if f["t"] == "READY")
            created = [f["d"]["id"] for f in session.sent if f["t"] == "GUILD_CREATE"]
            assert [g["id"] for g in ready["d"]["guilds"]] == created
            assert created == [str(even.id) if session.shard == (0, 2) else str(odd.id)]

        # A guild added later reaches only the shard that holds it.
        late = fake.add_guild("Late", shard=(1, 2))
        assert await fake.join_guild(late) == 1
        await second.wait_for("guild_join", timeout=5)
        assert second.joined == [late.id]
        assert first.joined == []
        # An event outside any guild goes to shard 0 only.
        assert await fake.dispatch("USER_UPDATE", fake.bot_user.to_payload()) == 1


async def test_gateway_bot_reports_the_shard_count(
    fake: FakeDiscord, guilds: tuple[FakeGuild, FakeGuild]
) -> None:
    """Without a count, AutoShardedClient asks /gateway/bot and runs that many shards."""
    client = ShardClient()
    async with fake.running(client):
        assert client.shard_count == 2
        assert sorted(s.shard for s in fake.sessions if s.shard) == [(0, 2), (1, 2)]
        assert {g.id for g in client.guilds} == {g.id for g in guilds}
    assert len(fake.calls_to("GET", "/gateway/bot")) >= 1


async def test_an_impossible_shard_is_closed_with_4010(fake: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as http, http.ws_connect(fake.gateway_url) as ws:
        hello = await ws.receive_json()
        assert hello["op"] == 10
        identify = {"token": fake.token, "intents": 1, "properties": {}, "shard": [2, 2]}
        await ws.send_str(json.dumps({"op": 2, "d": identify}))
        closed = await ws.receive()
        assert closed.type is aiohttp.WSMsgType.CLOSE
        assert closed.data == 4010


async def test_without_a_shard_a_session_gets_every_guild(
    fake: FakeDiscord, guilds: tuple[FakeGuild, FakeGuild]
) -> None:
    client = discord.Client(intents=discord.Intents.default(), guild_ready_timeout=0.05)
    async with fake.running(client):
        assert {g.id for g in client.guilds} == {g.id for g in guilds}
        [session] = fake.sessions
        assert session.shard is None
        assert "shard" not in session.identify  # type: ignore[operator]
