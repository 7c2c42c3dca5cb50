"""Role rewards: admins map a threshold to a role (``/rewards``); the bot gives the role to
members who reach it and takes it back from those who fall below.

The rule (who should hold what) is the core's (:func:`bot.core.rewards.reward_changes`);
here it is applied, through the platform's :class:`~bot.core.gateway.RoleManager`, and
announced once (a holder row is claimed before the role is given). It is looked at for the
members whose score just changed (an answer, a review, an exercise: :meth:`Rewards.scored`)
and for everyone once a local day begins (a streak that lapsed overnight), as a due source of
the one timer loop. A role the bot may not manage (above its own on Discord) is refused when
the reward is added (``studybot doctor`` names any that became so later: ``bot/doctor.py``).

A reward never hands out power. A role with power over the server or the bot (the core's
:class:`~bot.core.rewards.Power` s: Administrator, Manage Roles, the bot's admin role...) is
refused when the reward is added, shown as refused by the preview, and looked at again before
every grant, because someone may give the role a permission later: such a reward is then
suspended (stored, so every process stops), neither given nor taken, and the admins are told
once in its channel. It resumes by itself, with a notice, once a full look finds the role
harmless again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta

from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.gateway import ChatGateway, DirectMessenger, RoleManager, serves
from bot.core.messages import Message, Section, Tone, escape_markup, neutralise
from bot.core.models import ChatContext
from bot.core.requests import (
    RewardAdd,
    RewardRemove,
    RewardsList,
    RewardsPreview,
    RewardsRequest,
)
from bot.core.rewards import (
    MAX_REWARDS,
    Reward,
    RewardChange,
    Standing,
    power_problem,
    reward_changes,
)
from bot.core.scoring import current_streak
from bot.core.timer import soonest
from bot.core.wakeup import Wakeup
from bot.core.workspace_settings import next_local_midnight
from bot.log import get_logger
from bot.services.audit import AuditLog, audited
from bot.services.places import Places
from bot.storage.directory import Directory, WorkspaceRow
from bot.storage.rewards import RewardStore

__all__ = [
    "RewardSource",
    "Rewards",
    "notice_message",
    "preview_message",
    "resumed_message",
    "rewards_message",
    "suspended_message",
]

log = get_logger(__name__)
_NOW = datetime.min.replace(tzinfo=UTC)  # "due at once"
_RETRY = timedelta(minutes=1)


class Rewards:
    audit: AuditLog | None = None  # set by build_services: changes are recorded there

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        store: RewardStore,
        clock: Clock,
        wakeup: Wakeup,
    ) -> None:
        self._places = places
        self._directory = directory
        self._store = store
        self._clock = clock
        self._wakeup = wakeup
        self._pending: dict[int, set[int]] = {}  # workspace id -> members whose score changed
        self._looked: dict[int, date] = {}  # workspace id -> the local day all were looked at
        self._marks: tuple[int, int, int] | None = None  # RewardStore.marks() at the last look
        self._stale = False  # a reward was added: look at everyone there at once

    # --- what changes the standings ------------------------------------------------------------

    def scored(self, changed: Iterable[tuple[int, int]]) -> None:
        """``(workspace id, member id)`` pairs whose points, streak or reviews just changed
        (committed): their rewards are looked at next, at once."""
        any_new = False
        for workspace_id, member_id in changed:
            self._pending.setdefault(workspace_id, set()).add(member_id)
            any_new = True
        if any_new:
            self._wakeup.timing_changed()

    # --- commands ----------------------------------------------------------------------------

    async def command(
        self, ctx: ChatContext, request: RewardsRequest, gateway: ChatGateway
    ) -> Message:
        """``/rewards [list | add METRIC N ROLE | remove ID | preview]``."""
        if isinstance(request, RewardsList):
            return rewards_message(await self.rewards(ctx), ctx.command("rewards add"))
        _admins_only(ctx)
        if isinstance(request, RewardsPreview):
            refused = await self.refused(ctx, gateway)
            changes = [c for c in await self.preview(ctx) if c.reward.id not in refused]
            return preview_message(changes, refused)
        if isinstance(request, RewardAdd):
            return await self.add(ctx, request, gateway)
        return await self.remove(ctx, request, gateway)

    async def rewards(self, ctx: ChatContext) -> list[Reward]:
        """The workspace's rewards (data)."""
        workspace = await self._places.workspace(ctx)
        return await self._store.rewards(workspace.id)

    async def preview(self, ctx: ChatContext) -> list[RewardChange]:
        """Admins: who would gain or lose which reward now; nothing is changed (data)."""
        _admins_only(ctx)
        workspace = await self._places.workspace(ctx)
        return await self._changes(workspace, None)

    async def refused(self, ctx: ChatContext, gateway: ChatGateway) -> dict[int, str]:
        """Admins: the rewards that would not be given now, by id, and why: suspended ones,
        and those whose role carries power (data; nothing is changed, nothing suspended)."""
        _admins_only(ctx)
        workspace = await self._places.workspace(ctx)
        found: dict[int, str] = {}
        for reward in await self._store.rewards(workspace.id):
            problem = await self._power_problem(gateway, workspace.external_id, reward)
            if problem is not None:
                found[reward.id] = problem
            elif reward.suspended is not None:
                found[reward.id] = reward.suspended
        return found

    @audited("reward add")
    async def add(self, ctx: ChatContext, request: RewardAdd, gateway: ChatGateway) -> Message:
        workspace = await self._places.workspace(ctx)
        name = _role(request.role_name)
        if not isinstance(gateway, RoleManager):
            raise BadInput("This chat cannot give roles, so it cannot have role rewards.")
        reason = await gateway.can_manage_role(ctx.workspace, request.role)
        if reason is not None:
            raise Forbidden(f"I cannot give {name}: {reason}. The reward was not added.")
        powers = await gateway.role_powers(ctx.workspace, request.role)
        problem = power_problem(name, powers)
        if problem is not None:
            raise Forbidden(f"{_capital(problem)}. The reward was not added.")
        existing = await self._store.rewards(workspace.id)
        if len(existing) >= MAX_REWARDS:
            raise BadInput(
                f"This workspace has {MAX_REWARDS} rewards already: remove one first "
                f"({ctx.command('rewards remove ID')})."
            )
        number = await self._store.add(
            workspace.id,
            request.metric,
            request.threshold,
            request.role,
            request.role_name,
            channel=ctx.channel,
            by=ctx.member,
            now=self._clock.now(),
        )
        if number is None:
            taken = next((r for r in existing if r.role == request.role), None)
            which = f" (#{taken.id}: {taken.describe()})" if taken else ""
            raise BadInput(
                f"{name} is a reward already{which}; one role has one threshold. "
                f"Remove it first with {ctx.command('rewards remove ID')}."
            )
        self._look_at_everyone(workspace.id)
        needed = request.metric.amount(request.threshold)
        return Message.note(
            f"✅ Reward #{number}: {name} for {needed} or more. Members who reach it get the "
            "role; those who fall below lose it. "
            f"{ctx.command('rewards preview')} shows who would change.",
            tone=Tone.SUCCESS,
        )

    @audited("reward remove")
    async def remove(
        self, ctx: ChatContext, request: RewardRemove, gateway: ChatGateway
    ) -> Message:
        """The reward goes, and its role is taken back from those who held it."""
        workspace = await self._places.workspace(ctx)
        rewards = {r.id: r for r in await self._store.rewards(workspace.id)}
        reward = rewards.get(request.id)
        holders = await self._store.remove(workspace.id, request.id)
        if reward is None or holders is None:
            raise NotFound(
                f"There is no reward #{request.id} here; {ctx.command('rewards')} lists them."
            )
        taken = 0
        if isinstance(gateway, RoleManager):
            for member in holders:
                if await _safely_revoke(gateway, ctx.workspace, member, reward.role) is None:
                    taken += 1
        back = f"; the role was taken back from {_count(taken, 'member')}" if holders else ""
        return Message.note(f"🗑️ Reward #{request.id} ({_role(reward.role_name)}) removed{back}.")

    # --- applying ------------------------------------------------------------------------------

    def due_source(self, gateway: ChatGateway) -> RewardSource:
        """Role rewards as timed work of the one loop, given and taken through ``gateway``."""
        return RewardSource(self, gateway)

    async def apply_due(self, gateway: ChatGateway, now: datetime) -> datetime | None:
        """Look at the members whose score changed, and at everyone in a workspace whose
        local day has begun since it was last looked at; then when the next day begins."""
        pending, self._pending = self._pending, {}
        self._stale = False
        marks = await self._store.marks()
        if marks != self._marks:  # points imported, or a reward added, elsewhere
            self._looked.clear()
            self._marks = marks
        planned: datetime | None = None
        for workspace_id in await self._store.workspaces():
            workspace = await self._directory.workspace_by_id(workspace_id)
            if not serves(gateway, workspace.external_id):
                continue
            zone = workspace.zone_at(now)
            today = now.astimezone(zone).date()
            if self._looked.get(workspace_id) == today:
                members = sorted(pending.get(workspace_id, ()))
                changes = await self._changes(workspace, members) if members else []
            else:
                await self._resume_harmless(gateway, workspace)
                changes = await self._changes(workspace, None)
                self._looked[workspace_id] = today
            for change in changes:
                await self._apply(gateway, workspace, change)
            midnight = next_local_midnight(now, zone)
            planned = midnight if planned is None else min(planned, midnight)
        return planned

    async def _apply(
        self, gateway: ChatGateway, workspace: WorkspaceRow, change: RewardChange
    ) -> None:
        if not isinstance(gateway, RoleManager):
            return
        reward, member = change.reward, change.standing
        where = workspace.external_id
        if change.gain:
            problem = await self._power_problem(gateway, where, reward)
            if problem is not None:  # the role gained power since the reward was added
                await self._suspend(gateway, reward, problem)
                return
            if not await self._store.claim(reward.id, member.member_id, self._clock.now()):
                return  # another process gave it
            reason = await _safely(gateway.grant_role(where, member.member, reward.role))
            if reason is not None:
                await self._store.release(reward.id, member.member_id)
                log.warning(
                    "could not give reward %d (%s) to %s in %s: %s",
                    reward.id,
                    reward.role_name,
                    member.member,
                    where,
                    reason,
                )
                return
        else:
            if not await self._store.release(reward.id, member.member_id):
                return  # another process took it back
            reason = await _safely_revoke(gateway, where, member.member, reward.role)
            if reason is not None:
                log.warning(
                    "could not take reward %d (%s) back from %s in %s: %s",
                    reward.id,
                    reward.role_name,
                    member.member,
                    where,
                    reason,
                )
                return
        await self._announce(gateway, workspace, change)

    async def _power_problem(
        self, gateway: ChatGateway, workspace: str, reward: Reward
    ) -> str | None:
        """Why ``reward``'s role may not be handed out now (it carries power), or ``None``."""
        if not isinstance(gateway, RoleManager):
            return None
        powers = await gateway.role_powers(workspace, reward.role)
        return power_problem(_role(reward.role_name), powers)

    async def _suspend(self, gateway: ChatGateway, reward: Reward, problem: str) -> None:
        """Stop the reward everywhere; the admins are told once, in its channel."""
        if not await self._store.suspend(reward.id, problem):
            return  # suspended already (by this process or another)
        log.warning("reward %d (%s) suspended: %s", reward.id, reward.role_name, problem)
        await gateway.send_post(reward.channel, suspended_message(reward, problem))

    async def _resume_harmless(self, gateway: ChatGateway, workspace: WorkspaceRow) -> None:
        """Suspended rewards whose role carries no power any more are applied again (only a
        gateway that can read a role's powers may say so)."""
        if not isinstance(gateway, RoleManager):
            return
        for reward in await self._store.rewards(workspace.id):
            if reward.suspended is None:
                continue
            if await self._power_problem(gateway, workspace.external_id, reward) is not None:
                continue
            if await self._store.resume(reward.id):
                log.info("reward %d (%s) resumed", reward.id, reward.role_name)
                await gateway.send_post(reward.channel, resumed_message(reward))

    async def _announce(
        self, gateway: ChatGateway, workspace: WorkspaceRow, change: RewardChange
    ) -> None:
        """Once, by DM if ``reward-notices dm`` and the member takes DMs; else in the
        channel the reward was added in."""
        notice = notice_message(change)
        wanted = workspace.settings.reward_notices_by_dm
        dm = gateway if wanted and isinstance(gateway, DirectMessenger) else None
        if dm is not None and await dm.send_dm(
            workspace.external_id, change.standing.member, notice
        ):
            return
        await gateway.send_post(change.reward.channel, notice)

    async def _changes(
        self, workspace: WorkspaceRow, members: Sequence[int] | None
    ) -> list[RewardChange]:
        rewards = [r for r in await self._store.rewards(workspace.id) if r.suspended is None]
        if not rewards:
            return []
        now = self._clock.now()
        today = now.astimezone(workspace.zone_at(now)).date()
        standings = [
            Standing(
                member_id=n.member_id,
                member=n.member,
                name=n.name,
                points=n.points,
                streak=current_streak(n.streak, today),
                reviews=n.reviews,
            )
            for n in await self._store.numbers(workspace.id, members)
        ]
        return reward_changes(rewards, standings, await self._store.held(workspace.id))

    def _look_at_everyone(self, workspace_id: int) -> None:
        self._looked.pop(workspace_id, None)
        self._stale = True
        self._wakeup.timing_changed()

    def wants_a_look(self) -> bool:
        """Whether a score changed or a reward was added since the last look."""
        return bool(self._pending) or self._stale


class RewardSource:
    """The due source of role rewards: at once when a score changed or a reward was added,
    else at the next local midnight of a workspace with rewards (a streak may have lapsed)."""

    name = "role rewards"

    def __init__(self, rewards: Rewards, gateway: ChatGateway) -> None:
        self._rewards = rewards
        self._gateway = gateway
        self._next: datetime | None = _NOW  # look at everyone at the start

    def next_due(self) -> datetime | None:
        return _NOW if self._rewards.wants_a_look() else self._next

    async def run_due(self, now: datetime) -> None:
        try:
            planned = await self._rewards.apply_due(self._gateway, now)
        except Exception:
            log.exception("role rewards failed; looking again in a minute")
            self._next = now + _RETRY
            return
        self._next = soonest(now, planned)


def _admins_only(ctx: ChatContext) -> None:
    if not ctx.is_admin:
        raise Forbidden(
            "Only admins can add, remove or preview role rewards; "
            f"{ctx.command('rewards')} lists them."
        )


async def _safely(call: Awaitable[str | None]) -> str | None:
    """A gateway call's answer; an exception becomes its reason (logged)."""
    try:
        result = await call
    except Exception as exc:
        log.exception("a role call failed")
        return f"the platform refused ({type(exc).__name__})"
    return None if result is None else str(result)


async def _safely_revoke(
    gateway: RoleManager, workspace: str, member: str, role: str
) -> str | None:
    return await _safely(gateway.revoke_role(workspace, member, role))


def _role(name: str) -> str:
    return f"**{escape_markup(neutralise(name))}**"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _name(name: str) -> str:
    return f"**{escape_markup(neutralise(name))}**"


def notice_message(change: RewardChange) -> Message:
    """What a member (and the channel, per ``reward-notices``) is told, once."""
    reward, member = change.reward, change.standing
    metric = reward.metric
    if change.gain:
        return Message(
            title=f"🏅 {neutralise(member.name)} earned {neutralise(reward.role_name)}",
            sections=(
                Section(
                    body=f"{_name(member.name)} reached {metric.amount(reward.threshold)} "
                    f"({change.value} now) and was given the role {_role(reward.role_name)}."
                ),
            ),
            tone=Tone.SUCCESS,
        )
    return Message(
        title=f"{neutralise(member.name)} no longer holds {neutralise(reward.role_name)}",
        sections=(
            Section(
                body=f"{_name(member.name)} has {metric.amount(change.value)}, below the "
                f"{reward.threshold} the role {_role(reward.role_name)} asks for, so it was "
                "taken back. Reach it again to get it back."
            ),
        ),
        tone=Tone.INFO,
    )


def suspended_message(reward: Reward, problem: str) -> Message:
    """The admins are told, once, that a reward stopped: its role gained power."""
    return Message(
        title=f"⛔ Reward #{reward.id} suspended: {neutralise(reward.role_name)}",
        sections=(
            Section(
                body=f"{_capital(problem)}. Nobody is given the role or loses it through this "
                "reward until it is fixed: take that power off the role (the reward resumes "
                f"by itself at its next daily look), or remove reward #{reward.id}."
            ),
        ),
        tone=Tone.WARNING,
    )


def resumed_message(reward: Reward) -> Message:
    """A suspended reward's role carries no power any more: it is applied again."""
    return Message.note(
        f"✅ Reward #{reward.id} ({_role(reward.role_name)}) resumed: its role no longer "
        "carries power over the server or the bot.",
        tone=Tone.SUCCESS,
    )


def rewards_message(rewards: Sequence[Reward], add: str) -> Message:
    """``/rewards``: every reward, by number (a suspended one says why)."""
    if not rewards:
        return Message.note(f"No role rewards are set here. Admins add one with {add}.")
    lines = [
        f"• **#{r.id}** · {_role(r.role_name)} for {r.metric.amount(r.threshold)} or more"
        + ("" if r.suspended is None else f" · ⛔ suspended: {r.suspended}")
        for r in rewards
    ]
    return Message(
        title=f"🏅 Role rewards ({len(rewards)})",
        sections=(Section(body="\n".join(lines)),),
        footer="Reach a threshold to get its role; fall below it and the role is taken back.",
    )


def preview_message(
    changes: Sequence[RewardChange], refused: Mapping[int, str] | None = None
) -> Message:
    """``/rewards preview``: who would gain or lose which role now (nothing is changed), and
    the rewards that would not be given at all, with why."""
    refused = refused or {}
    stopped = [f"⛔ Reward #{n} is not given: {why}" for n, why in sorted(refused.items())]
    if not changes and not stopped:
        return Message.note("Nobody would gain or lose a role reward now.", tone=Tone.SUCCESS)
    lines = list(stopped)
    for c in changes:
        sign, verb = ("🟢", "would get") if c.gain else ("🔴", "would lose")
        lines.append(
            f"{sign} {_name(c.standing.name)} {verb} {_role(c.reward.role_name)} "
            f"({c.reward.metric.value} {c.value}, threshold {c.reward.threshold})"
        )
    return Message(
        title=f"🔍 Role rewards preview: {_count(len(changes), 'change')}",
        sections=(Section(body="\n".join(lines)),),
        footer="A dry run: nothing was changed. Changes apply after each answer and at midnight.",
        ephemeral=True,
    )
