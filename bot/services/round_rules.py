"""A live round's rules for its questions, as the quiz service asks them (:class:`PostRules`).

A round's question scores by speed (the bonus shrinks to the deadline) less a share per hint
taken, says that a missed card waits until tomorrow, refuses a late answer in the round's
words, and shows its place in the round and who got it right when revealed. The round itself
(starting, stepping, the board) is :mod:`bot.services.rounds`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from bot.core.accommodations import own_deadline
from bot.core.errors import BadInput, PostClosed
from bot.core.gateway import RoleReader
from bot.core.messages import Message, Section, escape_markup
from bot.core.models import ChatContext, Post
from bot.core.rounds import TEAM_NAMES, pick_team, role_team, round_points
from bot.core.wakeup import Wakeup
from bot.services.post_rules import MemberId, PostRules
from bot.storage.accommodations import AccommodationStore
from bot.storage.rounds import Round, RoundStore

__all__ = ["RoundRules"]

_KEPT = 64  # rounds remembered as started (a process runs a few at a time)
_TOO_LATE = "Too late: the time for this question is up, and your answer does not count."


async def accommodated_players(
    rounds: RoundStore, store: AccommodationStore, found: Round, post_id: int
) -> set[int]:
    """The members with extra time a round's question waits for: those who played an earlier
    question of the round (for its first question: every one of the workspace's)."""
    extra = {m for m, a in (await store.of(found.workspace_id)).items() if a.time_factor > 1}
    earlier = [p for p in await rounds.post_ids(found.id) if p < post_id]
    if not earlier or not extra:
        return extra
    return extra & await rounds.answerers(earlier)


def _team_mark(team: int | None) -> str:
    """`` (🔴)`` after a team player's name; nothing outside a team round."""
    return "" if team is None else f" ({TEAM_NAMES[team].split()[0]})"


class RoundRules(PostRules):
    """What a round's question changes in answering, hinting and revealing."""

    def __init__(
        self,
        rounds: RoundStore,
        accommodations: AccommodationStore | None = None,
        wakeup: Wakeup | None = None,
    ) -> None:
        self._rounds = rounds
        self._accommodations = accommodations  # extra time: a member's own deadline
        self._wakeup = wakeup  # a question closed early re-plans the timer
        # Round id -> the round as started: its rules (speed, teams) never change.
        self._started: dict[int, Round | None] = {}
        self._raced: set[int] = set()  # typed round questions whose bonus is taken
        self._joined: set[tuple[int, int]] = set()  # (round, member) placed on a team
        self._roles: RoleReader | None = None  # whose roles make teams: the chat's gateway

    def connect(self, gateway: object) -> None:
        """Read members' roles through the chat gateway (known only once an adapter is made):
        a round whose teams are roles places each player by them."""
        if isinstance(gateway, RoleReader):
            self._roles = gateway

    async def _round(self, round_id: int) -> Round | None:
        if round_id not in self._started:
            if len(self._started) > _KEPT:
                self._started.clear()
            self._started[round_id] = await self._rounds.get(round_id)
        return self._started[round_id]

    async def admit(self, ctx: ChatContext, post: Post, member: MemberId, now: datetime) -> None:
        """A team round places the answering member on a team with their first answer (the
        smallest team, then the weakest: see :func:`bot.core.rounds.pick_team`); when the
        teams are roles, on the team of the first listed role they hold, and a member who
        holds none of them is refused (nothing is stored)."""
        if post.round_id is None:
            return
        found = await self._round(post.round_id)
        if found is None or not found.teams:
            return
        member_id = await member()
        key = (found.id, member_id)
        if key in self._joined:
            return
        pick = pick_team
        if found.team_roles:
            if member_id in await self._rounds.teams_of(found.id):  # placed (another process)
                self._joined.add(key)
                return
            team = await self._role_team(ctx, found)
            pick = lambda sizes, strengths: team  # noqa: E731 (the role decides)
        step, _ = await self._rounds.position(found.id, post.id)
        mastery = await self._rounds.mastery(found.workspace_id, member_id, found.tags)
        await self._rounds.join_team(found, member_id, mastery, now, pick, first_question=step == 1)
        if len(self._joined) > _KEPT * 256:
            self._joined.clear()
        self._joined.add(key)

    async def _role_team(self, ctx: ChatContext, found: Round) -> int:
        """The team of the first of the round's roles the member holds (refused: none)."""
        ids = [role for role, _ in found.team_roles]
        held = (
            frozenset()
            if self._roles is None
            else await self._roles.roles_held(ctx.workspace, ctx.member, ids)
        )
        team = role_team(held, ids)
        if team is None:
            names = " or ".join(name for _, name in found.team_roles)
            raise BadInput(
                f"This round's teams are roles, and you hold none of them ({names}): "
                "ask an admin to give you one, then answer."
            )
        return team

    async def points(
        self, post: Post, base: int, now: datetime, member: MemberId, *, race: bool = False
    ) -> int | None:
        """What a correct answer scores now: the speed bonus shrinks to the deadline, and each
        hint taken costs a share. A typed question races, as in Red's trivia: only the first
        right answer earns the speed bonus; later right answers score the base points."""
        if post.round_id is None or post.closes_at is None:
            return None
        found = await self._round(post.round_id)
        speed = found is None or found.spec.speed_counts
        deadline = post.closes_at
        if found is not None and self._accommodations is not None:
            extra = await self._accommodations.of(found.workspace_id)
            given = extra.get(await member()) if extra else None
            factor = 1.0 if given is None else given.time_factor
            deadline = own_deadline(post.posted_at, found.spec.window, factor)
            if now >= deadline:  # past their own deadline, though others' runs on
                raise PostClosed(_TOO_LATE)
        if speed and race:  # the first right answer claims the bonus, here and in the store
            if post.id in self._raced or await self._rounds.points_of(post.id):
                speed = False
            self._raced.add(post.id)
        return round_points(
            base,
            asked_at=post.posted_at,
            deadline=deadline,
            answered_at=now,
            hints=await self._rounds.hints(post.id, await member()),
            speed_bonus=speed,
        )

    async def after_answer(self, post: Post, member: MemberId, now: datetime) -> None:
        """A question kept open for accommodated players closes once all of them have
        answered (at its usual deadline at the soonest): nobody waits for time nobody needs."""
        if post.round_id is None or post.closes_at is None or self._accommodations is None:
            return
        found = await self._round(post.round_id)
        if found is None or post.closes_at <= post.posted_at + found.spec.window:
            return  # not extended
        waiting = await accommodated_players(self._rounds, self._accommodations, found, post.id)
        if not waiting <= await self._rounds.answerers([post.id]):
            return
        closes = max(now, post.posted_at + found.spec.window)
        gap = max(found.spec.gap, timedelta(seconds=1))
        moved = await self._rounds.close_early(found, post.id, closes, closes + gap)
        if moved and self._wakeup is not None:
            self._wakeup.timing_changed()

    def answered(self, ctx: ChatContext, post: Post, correct: bool, reply: Message) -> Message:
        if post.round_id is None or correct:
            return reply
        # The round holds a missed card until the next local day (Rounds._queue_missed), as
        # its board says: not "in 1 minute", which FSRS alone would give.
        return replace(
            reply, footer=f"This card joins your {ctx.command('review')} queue from tomorrow."
        )

    async def hint_taken(self, post: Post, member: MemberId, reply: Message) -> Message:
        if post.round_id is None or not post.is_open:
            return reply
        await self._rounds.take_hint(post.id, await member())
        cost = "In a round, each hint costs a quarter of this question's points."
        return replace(reply, footer=f"{reply.footer} · {cost}" if reply.footer else cost)

    async def closing(self, post_ids: Sequence[int]) -> None:
        self._raced.difference_update(post_ids)  # a closed question takes no more answers

    def closed_text(self, post: Post) -> str | None:
        if post.round_id is None:
            return None
        return _TOO_LATE

    async def revealed(self, post: Post, reveal: Message) -> Message:
        if post.round_id is None:
            return reveal
        step, total = await self._rounds.position(post.round_id, post.id)
        heading = f"🏁 Question {step} of {total}"  # still the round's, once revealed
        title = f"{heading} · {reveal.title}" if reveal.title else heading
        if await self._rounds.skipped(post.id):
            note = "The players voted to skip it: this question scores nothing."
            section = Section(heading="⏭ Skipped", body=note)
            return replace(reveal, title=title, sections=(*reveal.sections, section))
        right = await self._rounds.points_of(post.id)
        found = await self._round(post.round_id)
        teams = await self._rounds.teams_of(post.round_id) if found and found.teams else {}
        shown = " · ".join(
            f"{escape_markup(name)}{_team_mark(teams.get(member))} +{points}"
            for name, points, member in right
        )
        # The count first, then the names best (fastest) first: with hundreds, a platform
        # shows the first that fit and the count says how many there are in all.
        who = f"Who got it right ({len(right)})" if right else "Who got it right"
        section = Section(heading=who, body=shown or "Nobody this time.")
        return replace(reveal, title=title, sections=(*reveal.sections, section))
