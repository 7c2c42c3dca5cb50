"""Start-up: endpoints from settings, intents, command sync, and the errors an operator sees."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import discord
import pytest
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.adapters.discord import DiscordAdapter
from bot.adapters.discord.client import intents
from bot.adapters.discord.cogs import COGS
from bot.app import Wiring
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput
from bot.core.startup import StartupError
from bot.settings import Settings
from tests.adapters.discord.conftest import Studybot, make_settings, running
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember

pytestmark = pytest.mark.timeout(60)

EXPECTED_COMMANDS = [
    "accommodation",
    "answer",
    "exam",
    "graph",
    "help",
    "history",
    "leaderboard",
    "pack",
    "question",
    "quiz",
    "recap",
    "report",
    "reports",
    "review",
    "rewards",
    "round",
    "run",
    "schedule",
    "settings",
    "solutions",
    "solve",
    "stats",
    "suggestions",
    "write",
]


def _by_name(commands: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in commands}


def _options(command: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["name"]: o for o in command.get("options") or []}


async def test_connects_to_the_endpoints_from_settings_with_guild_intent_only(
    fake: FakeDiscord, studybot: Studybot
) -> None:
    assert fake.api_base == Route.BASE
    assert str(DiscordWebSocket.DEFAULT_GATEWAY) == fake.gateway_url
    [session] = fake.sessions
    assert session.identify is not None
    assert session.identify["intents"] == discord.Intents(guilds=True).value == intents().value
    assert not intents().message_content and not intents().members  # nothing privileged
    assert [c.path for c in fake.calls[:2]] == ["/users/@me", "/oauth2/applications/@me"]
    assert fake.calls_to("GET", "/gateway/bot") == []  # DISCORD_GATEWAY_URL was given


async def test_global_sync_payload_has_every_command_with_options_and_autocomplete(
    fake: FakeDiscord, studybot: Studybot
) -> None:
    [put] = fake.calls_to("PUT", "/applications/{app}/commands")
    assert fake.calls_to("PUT", "/applications/{app}/guilds/{guild}/commands") == []
    slash = _by_name([c for c in put.json if c.get("type", 1) == 1])
    assert sorted(slash) == EXPECTED_COMMANDS
    menus = sorted(c["name"] for c in put.json if c.get("type") == 3)
    assert menus == ["Run snippet", "Show autograd graph"]
    for command in put.json:
        assert command["contexts"] == [0]  # servers only, never DMs
        assert command["integration_types"] == [0]  # installed to servers, not to users
        if command.get("type", 1) == 1:
            assert 1 <= len(command["description"]) <= 100

    quiz = _options(slash["quiz"])
    assert quiz["pack"]["type"] == 3
    assert quiz["pack"]["autocomplete"] is True
    assert not quiz["pack"]["required"]
    assert [c["value"] for c in quiz["difficulty"]["choices"]] == ["easy", "medium", "hard"]
    assert slash["quiz"]["description"].startswith("Post a question in this channel")

    window = _options(slash["leaderboard"])["window"]
    assert [c["value"] for c in window["choices"]] == ["week", "month", "all", "streaks"]
    assert not window["required"]
    suggestions = _options(slash["suggestions"])
    assert [c["value"] for c in suggestions["action"]["choices"]] == ["list", "approve", "reject"]
    assert suggestions["id"]["type"] == 4 and suggestions["id"]["min_value"] == 1  # INTEGER
    assert suggestions["reason"]["max_length"] == 500
    here = _options(slash["leaderboard"])["here"]
    assert here["type"] == 5 and not here["required"]  # BOOLEAN: this channel's own board
    member = _options(slash["stats"])["member"]
    assert member["type"] == 6  # USER
    assert not member["required"]
    settings = _options(slash["settings"])
    assert [c["value"] for c in settings["setting"]["choices"]] == [
        "timezone",
        "quiz-window",
        "points-easy",
        "points-medium",
        "points-hard",
        "round-questions",
        "round-seconds",
        "round-pause",
        "round-speed-bonus",
        "round-starters",
        "round-typed",
        "round-scoring",
        "share-solutions",
        "reward-notices",
        "analytics",
        "history",
    ]
    assert settings["value"]["autocomplete"] is True and not settings["value"]["required"]
    pack = _options(slash["pack"])
    assert sorted(pack) == ["disable", "enable", "list", "upload"]
    assert all(sub["type"] == 1 for sub in pack.values())  # subcommands
    for verb in ("enable", "disable"):
        [name] = pack[verb]["options"]
        assert (name["name"], name["type"], name["required"]) == ("name", 3, True)
        assert name["autocomplete"] is True
    [upload, force] = pack["upload"]["options"]
    assert (upload["name"], upload["type"], upload["required"]) == ("file", 11, True)  # ATTACHMENT
    assert (force["name"], force["type"], force["required"]) == ("force", 5, False)  # BOOLEAN
    assert "options" not in slash["run"] or slash["run"]["options"] == []
    assert "default_member_permissions" not in slash["quiz"] or (
        slash["quiz"]["default_member_permissions"] is None
    )


async def test_dev_guild_gets_a_guild_scoped_sync(
    fake: FakeDiscord, guild: FakeGuild, tmp_path: Path, packs_dir: Path, clock: SimulatedClock
) -> None:
    settings = make_settings(fake, tmp_path, packs_dir, DISCORD_DEV_GUILD=str(guild.id))
    async with running(fake, settings, clock, guild):
        [put] = fake.calls_to("PUT", f"/applications/{{app}}/guilds/{guild.id}/commands")
        assert sorted(c["name"] for c in put.json if c.get("type", 1) == 1) == EXPECTED_COMMANDS
        assert all(c["guild_id"] == str(guild.id) for c in put.response)
    assert fake.calls_to("PUT", "/applications/{app}/commands") == []


async def test_gateway_comes_from_the_api_when_only_the_api_base_is_set(
    fake: FakeDiscord, guild: FakeGuild, tmp_path: Path, packs_dir: Path, clock: SimulatedClock
) -> None:
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL("ws://127.0.0.1:9/not-here")
    settings = make_settings(fake, tmp_path, packs_dir, DISCORD_GATEWAY_URL=None)
    async with running(fake, settings, clock, guild):
        assert len(fake.calls_to("GET", "/gateway/bot")) == 1
        assert str(DiscordWebSocket.DEFAULT_GATEWAY) == fake.gateway_url


async def test_commands_work_again_after_a_restart_with_a_resync(
    fake: FakeDiscord, guild: FakeGuild, settings: Settings, clock: SimulatedClock
) -> None:
    async with running(fake, settings, clock, guild):
        pass
    async with running(fake, settings, clock, guild):
        pass
    first, second = fake.calls_to("PUT", "/applications/{app}/commands")
    assert {c["name"]: c["id"] for c in first.response} == {
        c["name"]: c["id"] for c in second.response
    }
    assert len(fake.gateway.history) == 2


async def test_wiring_builds_the_discord_adapter(
    fake: FakeDiscord, settings: Settings, clock: SimulatedClock
) -> None:
    wiring = Wiring()
    async with wiring.runtime(settings, clock=clock) as runtime:
        adapter = wiring.adapter(runtime)
        assert isinstance(adapter, DiscordAdapter)
        await adapter.stop()  # never started: stopping is still clean


async def test_missing_token_is_a_startup_error(
    fake: FakeDiscord, settings: Settings, clock: SimulatedClock
) -> None:
    settings = settings.model_copy(update={"discord_token": None})
    async with Wiring().runtime(settings, clock=clock) as runtime:
        with pytest.raises(StartupError, match="DISCORD_TOKEN is not set"):
            DiscordAdapter(runtime.services, runtime.settings)


async def test_rejected_token_is_one_readable_startup_error(
    fake: FakeDiscord,
    guild: FakeGuild,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = make_settings(fake, tmp_path, packs_dir, DISCORD_TOKEN="not-the-token")
    async with Wiring().runtime(settings, clock=clock) as runtime:
        adapter = DiscordAdapter(runtime.services, runtime.settings)
        with pytest.raises(StartupError, match="Discord rejected DISCORD_TOKEN") as raised:
            await adapter.run()
    assert "\n" not in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    assert all("not-the-token" not in r.getMessage() for r in caplog.records)
    assert fake.sessions == []


async def test_reconnects_keep_serving_without_setting_up_again(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, alice: FakeMember
) -> None:
    """setup_hook runs once per process; on_ready (again after a new session) starts nothing."""

    async def no_identify_delay(shard_id: int | None, *, initial: bool = False) -> None:
        return None  # discord.py sleeps 5 s before every IDENTIFY but the first

    studybot.bot.before_identify_hook = no_identify_delay  # type: ignore[method-assign]
    first = fake.sessions[0]
    await fake.request_reconnect()  # op 7: RESUME
    await fake.gateway.wait_for_session(5, where=lambda s: s.resumed)
    await fake.invalidate_session()  # op 9: IDENTIFY again, READY again, on_ready again
    await fake.gateway.wait_for_session(
        5, where=lambda s: s.identify is not None and s.session_id != first.session_id
    )
    for _ in range(200):
        if studybot.bot.is_ready():
            break
        await asyncio.sleep(0.01)
    reply = await (await fake.slash_command(guild, "general", alice, "help")).response()
    assert reply.ephemeral
    assert len(fake.calls_to("PUT", "/applications/{app}/commands")) == 1
    assert len(studybot.bot.cogs) == len(COGS)  # each added once, not again per reconnect


async def test_a_long_error_text_is_cut_to_fit_a_message(
    fake: FakeDiscord,
    studybot: Studybot,
    alice: FakeMember,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def wordy(*args: Any, **kwargs: Any) -> None:
        raise BadInput("no " * 1000)

    monkeypatch.setattr(studybot.service.standings, "leaderboard", wordy)
    response = await (
        await fake.slash_command(studybot.guild, None, alice, "leaderboard")
    ).response()
    assert response.ephemeral
    assert len(response.content) <= 2000  # the error's own bound (1,500), under Discord's
    assert response.content.endswith("…")
