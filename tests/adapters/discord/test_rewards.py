"""Role rewards on Discord: a role given at a streak and taken back when the streak lapses,
through the member role REST calls; a role above the bot's own is refused with the reason, and
so is a role with power (Manage Roles, the bot's admin role), when added and at each grant."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import discord
import pytest

from bot.core.clock import SimulatedClock
from bot.core.rewards import Metric
from bot.doctor import Status, rewards_checks
from bot.settings import Settings
from bot.storage.database import open_database
from bot.storage.directory import Directory
from bot.storage.rewards import RewardStore
from tests.adapters.discord.conftest import (
    ADMIN_ROLE,
    embed_text,
    public_messages,
    running,
)
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember

pytestmark = pytest.mark.timeout(60)


def _bot_role_at(guild: FakeGuild, position: int) -> None:
    """The bot's own (managed) role moved up the hierarchy, with Manage Roles."""
    [mine] = [r for r in guild.roles.values() if r.managed]
    mine.position = position
    mine.permissions |= discord.Permissions(manage_roles=True).value


async def test_a_role_is_given_at_a_streak_taken_back_when_it_lapses_and_one_above_refused(
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    admin: FakeMember,
    settings: Settings,
    clock: SimulatedClock,
) -> None:
    _bot_role_at(guild, 10)
    regulars = fake.add_role(guild, "Regulars", position=4)
    mods = fake.add_role(guild, "Moderators", position=11)
    async with running(fake, settings, clock, guild) as studybot:
        refused = await studybot.command(
            admin, "rewards", {"metric": "streak", "threshold": 1, "role": mods}, subcommand="add"
        )
        said = (await refused.response()).content + embed_text((await refused.response()).data)
        assert "I cannot give **@Moderators**" in said
        assert "not below my highest role" in said and "The reward was not added" in said

        added = await studybot.command(
            admin, "rewards", {"metric": "streak", "threshold": 1, "role": regulars},
            subcommand="add",
        )  # fmt: skip
        reply = await added.response()
        assert "Reward #1: **@Regulars** for 1 streak day or more" in (
            reply.content + embed_text(reply.data)
        )
        member_only = await studybot.command(alice, "rewards", {}, subcommand="preview")
        assert "Only admins" in (await member_only.response()).content + embed_text(
            (await member_only.response()).data
        )

        question = await studybot.quiz(alice, difficulty="medium")
        await (await fake.click(question, alice, label="B")).response()
        source = studybot.service.rewards.due_source(studybot.adapter)
        await source.run_due(clock.now())
        assert regulars.id in guild.members[alice.id].roles
        assert mods.id not in guild.members[alice.id].roles

        clock.advance(timedelta(days=2))  # a whole day missed: the streak lapsed
        await source.run_due(clock.now())
        assert regulars.id not in guild.members[alice.id].roles
        general = guild.channel("general").id
        notices = [embed_text(m) for m in public_messages(fake, general)]
        assert sum("alice earned @Regulars" in n for n in notices) == 1
        assert sum("alice no longer holds @Regulars" in n for n in notices) == 1
        changes = [c for c in fake.calls if "/roles/" in str(c) and "/members/" in str(c)]
        assert len(changes) == 2  # one PUT, one DELETE; the role above was never touched


async def test_doctor_names_a_reward_whose_role_was_moved_above_the_bots(
    fake: FakeDiscord, guild: FakeGuild, settings: Settings, clock: SimulatedClock
) -> None:
    _bot_role_at(guild, 10)
    regulars = fake.add_role(guild, "Regulars", position=4)
    mods = fake.add_role(guild, "Moderators", position=11)  # moved up after it was added
    db = await open_database(Path(settings.db_path))
    try:
        workspace = await Directory(db, "UTC").workspace(
            "discord", str(guild.id), None, clock.now()
        )
        store = RewardStore(db)
        for role in (regulars, mods):
            await store.add(
                workspace.id, Metric.POINTS, 100, str(role.id), f"@{role.name}",
                channel="1", by="1", now=clock.now(),
            )  # fmt: skip
    finally:
        await db.close()
    [check] = await rewards_checks(settings)
    assert check.status is Status.FAIL
    assert check.detail.startswith("reward #2 (@Moderators")
    assert "not below my highest role" in check.detail


async def test_a_role_with_power_is_refused_and_one_that_gains_power_is_suspended(
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    admin: FakeMember,
    settings: Settings,
    clock: SimulatedClock,
) -> None:
    _bot_role_at(guild, 10)
    mods = fake.add_role(
        guild, "Mods", position=4, permissions=discord.Permissions(manage_roles=True)
    )
    regulars = fake.add_role(guild, "Regulars", position=5)
    guild.role(ADMIN_ROLE).position = 6  # DISCORD_ADMIN_ROLE: no permission, but admin rights
    async with running(fake, settings, clock, guild) as studybot:

        async def add(role: object) -> str:
            options = {"metric": "points", "threshold": 1, "role": role}
            ix = await studybot.command(admin, "rewards", options, subcommand="add")
            return (await ix.response()).content + embed_text((await ix.response()).data)

        said = await add(mods)
        assert "The role **@Mods** has Manage Roles: a reward may not hand out power" in said
        assert "The reward was not added" in said
        said = await add(guild.role(ADMIN_ROLE))
        assert f"**@{ADMIN_ROLE}** is an admin role of this bot" in said
        assert "Reward #1: **@Regulars**" in await add(regulars)

        # A server admin gives the reward's role Ban Members afterwards.
        await fake.edit_role(guild, regulars, permissions=discord.Permissions(ban_members=True))
        cached = studybot.bot.get_guild(guild.id)
        assert cached is not None
        for _ in range(200):
            role = cached.get_role(regulars.id)
            if role is not None and role.permissions.ban_members:
                break
            await asyncio.sleep(0.01)
        question = await studybot.quiz(alice, difficulty="medium")
        await (await fake.click(question, alice, label="B")).response()
        source = studybot.service.rewards.due_source(studybot.adapter)
        await source.run_due(clock.now())
        await source.run_due(clock.now())
        assert regulars.id not in guild.members[alice.id].roles
        notices = [embed_text(m) for m in public_messages(fake, guild.channel("general").id)]
        suspended = [n for n in notices if "Reward #1 suspended" in n]
        assert len(suspended) == 1  # told once
        assert "The role **@Regulars** has Ban Members" in suspended[0]
        assert not [c for c in fake.calls if "/roles/" in str(c) and "/members/" in str(c)]


async def test_doctor_names_a_reward_whose_role_has_power(
    fake: FakeDiscord, guild: FakeGuild, settings: Settings, clock: SimulatedClock
) -> None:
    _bot_role_at(guild, 10)
    regulars = fake.add_role(guild, "Regulars", position=4)
    admins = fake.add_role(
        guild, "Admins", position=5, permissions=discord.Permissions(administrator=True)
    )
    db = await open_database(Path(settings.db_path))
    try:
        workspace = await Directory(db, "UTC").workspace(
            "discord", str(guild.id), None, clock.now()
        )
        for role in (regulars, admins, guild.role(ADMIN_ROLE)):
            await RewardStore(db).add(
                workspace.id, Metric.POINTS, 100, str(role.id), f"@{role.name}",
                channel="1", by="1", now=clock.now(),
            )  # fmt: skip
    finally:
        await db.close()
    checks = await rewards_checks(settings)
    assert [c.status for c in checks] == [Status.FAIL, Status.FAIL]
    assert checks[0].detail.startswith("reward #2 (@Admins")
    assert "the role @Admins has Administrator: a reward may not" in checks[0].detail
    assert checks[1].detail.startswith(f"reward #3 (@{ADMIN_ROLE}")
    assert "is an admin role of this bot" in checks[1].detail
