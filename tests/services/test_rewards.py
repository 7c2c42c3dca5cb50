"""Role rewards on both engines: the preview lists who would gain or lose what and changes
nothing; applying gives each role once and takes it back when the member falls below."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, Forbidden
from bot.core.messages import Message
from bot.core.requests import (
    RewardAdd,
    RewardRemove,
    RewardsList,
    RewardsPreview,
    SettingChange,
)
from bot.core.rewards import Metric, Power
from bot.core.workspace_settings import Setting
from bot.services.bundle import Services
from bot.storage.database import Database, open_database
from bot.storage.rewards import RewardStore
from bot.storage.scores import ScoreStore
from tests.helpers import member

ANN = member("ann")
ADMIN = member("root", admin=True)


class Roles:
    """A gateway that keeps roles; ``above``: roles it may not manage; ``powers``: what each
    role carries (a test may change it, as a server admin would)."""

    def __init__(self, above: frozenset[str] = frozenset()) -> None:
        self.held: dict[str, set[str]] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.posts: list[tuple[str, Message]] = []
        self.dms: list[tuple[str, Message]] = []
        self.above = above
        self.powers: dict[str, frozenset[Power]] = {}

    async def role_powers(self, workspace: str, role: str) -> frozenset[Power]:
        return self.powers.get(role, frozenset())

    async def send_post(self, channel: str, message: Message) -> str:
        self.posts.append((channel, message))
        return str(len(self.posts))

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        raise AssertionError("rewards never edit")

    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        self.dms.append((member, message))
        return True

    async def can_manage_role(self, workspace: str, role: str) -> str | None:
        return "it is above mine" if role in self.above else None

    async def grant_role(self, workspace: str, member: str, role: str) -> str | None:
        self.calls.append(("grant", member, role))
        self.held.setdefault(member, set()).add(role)
        return None

    async def revoke_role(self, workspace: str, member: str, role: str) -> str | None:
        self.calls.append(("revoke", member, role))
        self.held.get(member, set()).discard(role)
        return None


async def _answer(service: Services) -> None:
    post = await service.quiz.post_question(ADMIN, pack="mini", difficulty="medium")  # B right
    await service.quiz.answer(ANN, post.post.id, "B")


async def test_preview_then_apply_then_a_lapse_takes_the_streak_role_back(
    service: Services, clock: SimulatedClock
) -> None:
    chat = Roles()
    rewards = service.rewards
    await rewards.command(ADMIN, RewardAdd(Metric.STREAK, 1, "r-streak", "Streakers"), chat)
    await rewards.command(ADMIN, RewardAdd(Metric.POINTS, 10, "r-points", "Scholars"), chat)
    await _answer(service)

    preview = [(c.standing.name, c.reward.role_name, c.gain) for c in await rewards.preview(ADMIN)]
    assert preview == [("ann", "Streakers", True), ("ann", "Scholars", True)]
    assert chat.calls == []  # a dry run
    text = (await rewards.command(ADMIN, RewardsPreview(), chat)).plain_text()
    assert "ann would get Streakers (streak 1, threshold 1)" in text

    source = rewards.due_source(chat)
    await source.run_due(clock.now())
    await source.run_due(clock.now())  # nothing new: nothing twice
    assert chat.held == {"id-ann": {"r-streak", "r-points"}}
    assert len(chat.posts) == 2 and chat.posts[0][0] == "general"
    assert await rewards.preview(ADMIN) == []

    clock.advance(timedelta(days=2))  # a whole day missed
    lapsed = [(c.reward.role_name, c.gain, c.value) for c in await rewards.preview(ADMIN)]
    assert lapsed == [("Streakers", False, 0)]
    assert source.next_due() is not None and source.next_due() <= clock.now()  # midnight passed
    await source.run_due(clock.now())
    assert chat.held == {"id-ann": {"r-points"}}  # points do not lapse
    assert "ann no longer holds Streakers" in chat.posts[-1][1].plain_text()

    removed = await rewards.command(ADMIN, RewardRemove(2), chat)
    assert "taken back from 1 member" in removed.plain_text()
    assert chat.held == {"id-ann": set()}


async def test_points_imported_by_another_process_are_looked_at_without_waiting_for_midnight(
    service: Services, db: Database, db_target: str | Path, clock: SimulatedClock
) -> None:
    """``studybot scores import`` runs in its own process: the bot's next look (its loop asks
    every source after looking for other processes' changes) sees the new points, and sees
    them go when the import is undone."""
    chat = Roles()
    rewards = service.rewards
    await rewards.command(ADMIN, RewardAdd(Metric.POINTS, 100, "r-100", "Centurions"), chat)
    await _answer(service)
    source = rewards.due_source(chat)
    await source.run_due(clock.now())
    assert chat.held == {}  # ann has a few points, not 100
    ann = int(await db.fetchval("SELECT id FROM members WHERE external_id = 'id-ann'"))
    workspace = int(await db.fetchval("SELECT workspace_id FROM members WHERE id = ?", (ann,)))
    other = await open_database(db_target)  # `studybot scores import`, another process
    try:
        imported = await ScoreStore(other).import_points(
            workspace, [(ann, 200)], sha256="ab" * 32, source="old.csv", now=clock.now()
        )
    finally:
        await other.close()
    assert imported
    await source.run_due(clock.now())  # the same day: no midnight in between
    assert chat.held == {"id-ann": {"r-100"}}
    assert "ann reached 100 points (220 now)" in chat.posts[-1][1].plain_text()

    other = await open_database(db_target)  # `studybot scores undo-import 1`, another process
    try:
        assert await ScoreStore(other).undo_import(imported, now=clock.now()) == [(ann, 200)]
    finally:
        await other.close()
    await source.run_due(clock.now())  # looked at again, as after an import
    assert chat.held == {"id-ann": set()}
    assert "ann has 20 points, below the 100" in chat.posts[-1][1].plain_text()


async def test_reward_notices_by_dm(service: Services, clock: SimulatedClock) -> None:
    chat = Roles()
    await service.settings.command(ADMIN, SettingChange(Setting.REWARD_NOTICES, "dm"))
    await service.rewards.command(ADMIN, RewardAdd(Metric.REVIEWS, 1, "r-rev", "Readers"), chat)
    await _answer(service)
    await service.rewards.due_source(chat).run_due(clock.now())
    assert [(who, m.title) for who, m in chat.dms] == [("id-ann", "🏅 ann earned Readers")]
    assert chat.posts == []


async def test_refusals_say_why(service: Services) -> None:
    chat = Roles(above=frozenset({"r-mods"}))
    with pytest.raises(Forbidden, match=r"I cannot give \*\*Mods\*\*: it is above mine"):
        await service.rewards.command(ADMIN, RewardAdd(Metric.POINTS, 5, "r-mods", "Mods"), chat)
    with pytest.raises(Forbidden, match="Only admins"):
        await service.rewards.command(ANN, RewardAdd(Metric.POINTS, 5, "r-x", "X"), chat)
    await service.rewards.command(ADMIN, RewardAdd(Metric.POINTS, 5, "r-x", "X"), chat)
    with pytest.raises(BadInput, match=r"is a reward already \(#1: points ≥ 5\)"):
        await service.rewards.command(ADMIN, RewardAdd(Metric.STREAK, 3, "r-x", "X"), chat)


async def test_a_role_with_power_is_refused_when_added_and_named_in_the_preview(
    service: Services,
) -> None:
    chat = Roles()
    chat.powers["r-mods"] = frozenset({Power.MANAGE_ROLES, Power.BAN_MEMBERS})
    chat.powers["r-admins"] = frozenset({Power.BOT_ADMIN})
    with pytest.raises(Forbidden) as refused:
        await service.rewards.command(ADMIN, RewardAdd(Metric.POINTS, 1, "r-mods", "Mods"), chat)
    assert str(refused.value) == (
        "The role **Mods** has Manage Roles and Ban Members: a reward may not hand out power "
        "over the server or the bot (anyone who answers enough questions would get it). "
        "The reward was not added."
    )
    with pytest.raises(Forbidden, match=r"\*\*Staff\*\* is an admin role of this bot"):
        await service.rewards.command(ADMIN, RewardAdd(Metric.POINTS, 1, "r-admins", "Staff"), chat)
    assert await service.rewards.rewards(ADMIN) == []

    await service.rewards.command(ADMIN, RewardAdd(Metric.POINTS, 1, "r-x", "Regulars"), chat)
    await _answer(service)
    chat.powers["r-x"] = frozenset({Power.ADMINISTRATOR})  # given power after it was added
    text = (await service.rewards.command(ADMIN, RewardsPreview(), chat)).plain_text()
    assert "Reward #1 is not given: the role Regulars has Administrator" in text
    assert "ann would get" not in text
    assert chat.calls == [] and chat.posts == []  # a dry run: nothing given, nothing said


async def test_a_reward_whose_role_gains_power_is_suspended_once_then_resumes(
    service: Services, db_target: str | Path, clock: SimulatedClock
) -> None:
    chat = Roles()
    rewards = service.rewards
    await rewards.command(ADMIN, RewardAdd(Metric.POINTS, 1, "r-reg", "Regulars"), chat)
    chat.powers["r-reg"] = frozenset({Power.MANAGE_MESSAGES})  # someone edits the role
    await _answer(service)
    source = rewards.due_source(chat)
    await source.run_due(clock.now())
    await source.run_due(clock.now())
    assert chat.calls == []  # never given
    [(channel, notice)] = chat.posts  # the admins are told once, where the reward was added
    assert channel == "general"
    assert notice.title == "⛔ Reward #1 suspended: Regulars"
    assert "The role Regulars has Manage Messages" in notice.plain_text()
    listed = (await rewards.command(ADMIN, RewardsList(), chat)).plain_text()
    assert "suspended: the role Regulars has Manage Messages" in listed

    other = await open_database(db_target)  # another process sees the suspension too
    try:
        assert [r.suspended is not None for r in await RewardStore(other).rewards(1)] == [True]
    finally:
        await other.close()

    chat.powers["r-reg"] = frozenset()  # the power is taken off the role
    clock.advance(timedelta(days=1))  # the next daily look
    await source.run_due(clock.now())
    assert chat.held == {"id-ann": {"r-reg"}}
    resumed, earned = (m.plain_text() for _, m in chat.posts[1:])
    assert resumed.startswith("✅ Reward #1 (Regulars) resumed: its role no longer carries")
    assert earned.startswith("🏅 ann earned Regulars")


async def test_a_process_that_cannot_read_roles_never_resumes_a_suspended_reward(
    service: Services, clock: SimulatedClock
) -> None:
    """Only a gateway that reads a role's powers may find it harmless again; a process with
    a plain gateway (no roles) leaves the suspension as it is."""
    chat = Roles()
    await service.rewards.command(ADMIN, RewardAdd(Metric.POINTS, 1, "r-reg", "Regulars"), chat)
    chat.powers["r-reg"] = frozenset({Power.KICK_MEMBERS})
    await _answer(service)
    await service.rewards.due_source(chat).run_due(clock.now())
    plain = NoRoles()
    clock.advance(timedelta(days=1))
    await service.rewards.due_source(plain).run_due(clock.now())
    [reward] = await service.rewards.rewards(ADMIN)
    assert reward.suspended is not None and "Kick Members" in reward.suspended
    assert plain.posts == []


class NoRoles:
    """A gateway that posts but has no roles (no RoleManager)."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, Message]] = []

    async def send_post(self, channel: str, message: Message) -> str:
        self.posts.append((channel, message))
        return str(len(self.posts))

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        raise AssertionError("rewards never edit")
