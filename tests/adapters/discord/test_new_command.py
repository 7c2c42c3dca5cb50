"""A command made up in the test is registered and answers on Discord through the one front
door: discord.py over loopback to the fake, no adapter file touched
(tests/adapters/test_dispatch.py)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.core.clock import SimulatedClock
from bot.settings import Settings
from tests.adapters.discord.conftest import embed_text, running
from tests.adapters.test_dispatch import new_commands
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember

pytestmark = pytest.mark.timeout(60)

__all__ = ["new_commands"]  # the fixture, used by name


def _synced(fake: FakeDiscord, name: str) -> dict[str, Any]:
    stores = [*fake.state.guild_commands.values(), fake.state.global_commands]
    found = [c for store in stores for c in store.values() if c["name"] == name]
    assert found, f"/{name} was never synced"
    return found[0]


def _shown(data: dict[str, Any]) -> str:
    return (data.get("content") or "") + embed_text(data)


async def test_discord_registers_and_answers_a_new_command_with_no_adapter_edit(
    new_commands: None,
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    settings: Settings,
    clock: SimulatedClock,
) -> None:
    async with running(fake, settings, clock, guild) as bot:
        echo, shout = _synced(fake, "echo"), _synced(fake, "shout")
        assert echo["description"] == "Say your words back, only to you"
        assert [o["name"] for o in shout["options"]] == ["words", "times"]
        assert shout["options"][1]["max_value"] == 3
        echoed = await (await bot.command(alice, "echo", {"words": "two  spaces"})).response()
        assert echoed.ephemeral
        assert "alice said: two  spaces" in _shown(echoed.data)
        loud = await (await bot.command(alice, "shout", {"words": "go", "times": 2})).response()
        assert not loud.ephemeral
        assert "GO / GO" in _shown(loud.data)
