"""``/accommodation``: admins give a member extra time (and fewer choices); private.

Only admins and the member see an accommodation: every reply here is private, and nothing
public (a round's posts, its board) names who has one. The rules are
:mod:`bot.core.accommodations`; a live round reads them through :meth:`Accommodations.for_round`.
"""

from __future__ import annotations

from bot.core.accommodations import Accommodation, parse_factor
from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.messages import Message, escape_markup
from bot.core.models import ChatContext
from bot.core.requests import AccommodationClear, AccommodationRequest, AccommodationSet
from bot.services.audit import AuditLog, audited
from bot.services.places import Places
from bot.storage.accommodations import AccommodationStore
from bot.storage.directory import Directory, MemberRow, WorkspaceRow

__all__ = ["Accommodations"]


class Accommodations:
    audit: AuditLog | None = None  # set by build_services: a change is recorded (privately)

    def __init__(
        self, *, places: Places, directory: Directory, store: AccommodationStore, clock: Clock
    ) -> None:
        self._places = places
        self._directory = directory
        self._store = store
        self._clock = clock

    async def command(self, ctx: ChatContext, request: AccommodationRequest) -> Message:
        if isinstance(request, AccommodationSet):
            return (await self.set(ctx, request)).private()
        if isinstance(request, AccommodationClear):
            return (await self.clear(ctx, request.member)).private()
        return (await self.show(ctx)).private()

    async def _member(self, workspace: WorkspaceRow, typed: str) -> MemberRow:
        who = typed.strip().lstrip("@")
        found = await self._directory.find_member(workspace.id, who) if who else None
        if found is None:
            raise NotFound(f"No member called `{typed}` has answered here yet.")
        return found

    @audited("accommodation set")
    async def set(self, ctx: ChatContext, request: AccommodationSet) -> Message:
        if not ctx.is_admin:
            raise Forbidden("Only admins set accommodations.")
        factor = 1.0 if request.time is None else parse_factor(request.time)
        if factor == 1.0 and not request.fewer_choices:
            raise BadInput("Give extra time (--time 1.5) or --fewer-choices, or both.")
        workspace = await self._places.workspace(ctx)
        member = await self._member(workspace, request.member)
        given = Accommodation(factor, request.fewer_choices)
        await self._store.set(workspace.id, member.id, given, ctx.member_name, self._clock.now())
        return Message.note(
            f"♿ {escape_markup(member.display_name)}: {given.describe()}. Only admins and "
            "they see it. Extra time gives them their own deadline in live rounds (with the "
            "speed bonus scaled to it), on posted questions' answer windows, and on "
            "exercises' time limits."
        )

    @audited("accommodation clear")
    async def clear(self, ctx: ChatContext, typed: str) -> Message:
        if not ctx.is_admin:
            raise Forbidden("Only admins clear accommodations.")
        workspace = await self._places.workspace(ctx)
        member = await self._member(workspace, typed)
        if not await self._store.clear(workspace.id, member.id):
            raise NotFound(f"{member.display_name} has no accommodation.")
        return Message.note(f"♿ {escape_markup(member.display_name)}: no accommodation now.")

    async def show(self, ctx: ChatContext) -> Message:
        """Admins: everyone's; a member: their own (and nobody else's)."""
        workspace = await self._places.workspace(ctx)
        if ctx.is_admin:
            rows = await self._store.named(workspace.id)
            lines = [f"• {escape_markup(name)}: {a.describe()}" for name, a in rows]
            return Message.note("\n".join(lines) or "Nobody has an accommodation here.")
        member = await self._directory.member(
            workspace, ctx.member, ctx.member_name, self._clock.now()
        )
        own = (await self._store.of(workspace.id, [member.id])).get(member.id)
        if own is None:
            return Message.note("You have no accommodation here; an admin can set one.")
        return Message.note(f"♿ Your accommodation: {own.describe()}.")

    async def for_round(self, workspace_id: int) -> dict[int, Accommodation]:
        """Every accommodation with extra time, by member row id (a round's deadlines)."""
        found = await self._store.of(workspace_id)
        return {m: a for m, a in found.items() if a.time_factor > 1}
