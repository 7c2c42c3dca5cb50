"""Admin rights come from role ids, never from a role's name (issue 27, finding 11).

A member who may create roles made one called "study admins" and was treated as a bot admin
while ``DISCORD_ADMIN_ROLE=Study Admins``. Now a name in the setting stops the bot at start,
naming the ids of the roles that carry it; and a role's name grants nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.adapters.discord.adapter import DiscordAdapter
from bot.app import Wiring
from bot.core.clock import SimulatedClock
from bot.core.startup import StartupError
from bot.doctor import Status, settings_checks
from tests.adapters.discord.conftest import (
    ADMIN_ROLE,
    ADMIN_ROLE_ID,
    Studybot,
    embed_text,
    make_settings,
)
from tests.fakes.discord_api import FakeDiscord, FakeGuild

pytestmark = pytest.mark.timeout(60)


async def _admin(studybot: Studybot, member: object) -> bool:
    reply = await (await studybot.command(member, "help")).response()  # type: ignore[arg-type]
    return "**Admins**" in embed_text(reply.data)


async def test_a_role_named_like_the_admin_role_grants_nothing(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot
) -> None:
    impostor_role = fake.add_role(guild, ADMIN_ROLE.lower(), permissions=0)
    impostor = fake.add_member(guild, 1020, "mallory", roles=[impostor_role])
    holder = fake.add_member(guild, 1021, "otto", roles=[guild.role(ADMIN_ROLE)])
    assert guild.role(ADMIN_ROLE).id == ADMIN_ROLE_ID
    assert await _admin(studybot, holder)
    assert not await _admin(studybot, impostor)


async def test_a_name_in_the_setting_is_refused_at_start_with_the_ids(
    fake: FakeDiscord, guild: FakeGuild, tmp_path: Path, packs_dir: Path, clock: SimulatedClock
) -> None:
    second = fake.add_role(guild, "quizmaster", permissions=0)  # the same name, another case
    settings = make_settings(fake, tmp_path, packs_dir, DISCORD_ADMIN_ROLE="Quizmaster")
    async with Wiring().runtime(settings, clock=clock) as runtime:
        adapter = DiscordAdapter(runtime.services, runtime.settings, guild_ready_timeout=0.05)
        with pytest.raises(StartupError) as refused:
            await asyncio.wait_for(adapter.run(), 20)
    message = str(refused.value)
    assert "DISCORD_ADMIN_ROLE takes role ids, never names" in message
    assert str(ADMIN_ROLE_ID) in message and str(second.id) in message
    assert "Copy Role ID" in message


def test_doctor_fails_a_name_and_accepts_ids(
    fake: FakeDiscord, tmp_path: Path, packs_dir: Path
) -> None:
    named = make_settings(fake, tmp_path, packs_dir, DISCORD_ADMIN_ROLE="Study Admins")
    [check] = [c for c in settings_checks(named) if c.name == "DISCORD_ADMIN_ROLE"]
    assert check.status is Status.FAIL
    assert "'Study Admins' is not a role id" in check.detail and "Copy Role ID" in check.detail
    ids = make_settings(
        fake, tmp_path, packs_dir, DISCORD_ADMIN_ROLE=f"{ADMIN_ROLE_ID}, <@&{ADMIN_ROLE_ID + 1}>"
    )
    [check] = [c for c in settings_checks(ids) if c.name == "DISCORD_ADMIN_ROLE"]
    assert check.status is Status.OK and check.detail == "2 role id(s)"
