"""The suggestion queue: a member's valid ``/write`` waits for an admin, who approves or
rejects it (``/suggestions``).

Before the queue a member's valid question was a dead end ("ask an admin to write it in").
Now it is kept, admins list the queue and decide each one by its number, and the author is
told either way: by DM where the platform can send one, else in the channel they wrote it
in. An approved question goes into the ``community`` pack through the same check and install
as an admin's own ``/write`` (:meth:`PackAdmin.check_written`), and every post of it credits
its author (:meth:`Posting.byline`). Admin rights are the platform's, read by the adapter into
``ChatContext.is_admin``, as for every admin command; authors are kept by their platform id.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.gateway import ChatGateway, DirectMessenger
from bot.core.messages import Message, Section, Tone, escape_markup, neutralise
from bot.core.models import ChatContext
from bot.core.requests import (
    SuggestionApprove,
    SuggestionReject,
    SuggestionsList,
    SuggestionsRequest,
    check_reason_length,
)
from bot.questions.written import WrittenQuestion
from bot.services.audit import AuditLog, audited
from bot.services.packs import PackAdmin
from bot.services.places import Places
from bot.storage.directory import Directory
from bot.storage.suggestions import Status, Suggestion, SuggestionStore
from bot.text import clean_text

__all__ = [
    "MAX_PENDING",
    "MIN_REASON",
    "Suggestion",
    "Suggestions",
    "suggestions_message",
]

MIN_REASON = 3
PROMPT_SHOWN = 100  # characters of a prompt in the queue and in notices
MAX_PENDING = 10
"""Suggestions one member may have waiting at once: the queue is for admins to read."""


class Suggestions:
    audit: AuditLog | None = None  # set by build_services: changes are recorded there

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        packs: PackAdmin,
        store: SuggestionStore,
        clock: Clock,
    ) -> None:
        self._places = places
        self._directory = directory
        self._packs = packs
        self._store = store
        self._clock = clock

    async def write(self, ctx: ChatContext, question: WrittenQuestion) -> Message:
        """``/write``: an admin's valid question is added at once; a member's valid one joins
        the queue; an invalid one gets the checker's report (what to fix), as before."""
        check = await self._packs.check_written(ctx, question)
        if ctx.is_admin or not check.valid:
            return check.report
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        if await self._store.pending_by(member.id) >= MAX_PENDING:
            raise BadInput(
                f"You have {MAX_PENDING} suggested questions waiting for an admin already: "
                "write the next one once they are decided."
            )
        number = await self._store.add(
            workspace.id,
            member.id,
            ctx.channel,
            json.dumps(dataclasses.asdict(question)),
            " ".join(question.prompt.split()),
            now,
        )
        queued = Section(
            body=f"It is **suggestion #{number}**: an admin will approve or reject it, and "
            "you will be told either way. Approved, it joins the `community` pack with your "
            "name on every post of it."
        )
        return replace(
            check.report,
            title=f"✍️ Suggestion #{number}: valid, waiting for an admin",
            sections=(*check.report.sections, queued),
            tone=Tone.SUCCESS,
        )

    async def pending(self, ctx: ChatContext) -> list[Suggestion]:
        """Admins: the workspace's suggestions waiting for a decision, oldest first."""
        _admins_only(ctx)
        workspace = await self._places.workspace(ctx)
        return await self._store.pending(workspace.id)

    async def command(
        self, ctx: ChatContext, request: SuggestionsRequest, gateway: ChatGateway
    ) -> Message:
        """``/suggestions [approve ID | reject ID REASON]``; ``gateway`` tells the author."""
        if isinstance(request, SuggestionsList):
            return suggestions_message(
                await self.pending(ctx),
                ctx.command("suggestions approve ID"),
                ctx.command("suggestions reject ID REASON"),
            )
        if isinstance(request, SuggestionApprove):
            return await self.approve(ctx, request.id, gateway)
        return await self.reject(ctx, request, gateway)

    @audited("suggestion approve")
    async def approve(self, ctx: ChatContext, number: int, gateway: ChatGateway) -> Message:
        """Add suggestion ``number`` to the ``community`` pack (checked again, as an admin's
        ``/write``) and tell its author. If it cannot be added now, it stays in the queue."""
        suggestion = await self._pending(ctx, number)
        if not await self._store.claim(suggestion.id, Status.APPROVED, ctx.member, self._now()):
            raise BadInput(f"Suggestion #{number} was decided meanwhile by another admin.")
        try:
            check = await self._packs.check_written(ctx, _question(suggestion))
        except BaseException:
            await self._store.release(suggestion.id)
            raise
        if not check.added:
            await self._store.release(suggestion.id)
            stays = Section(body=f"Suggestion #{number} stays in the queue.")
            return replace(check.report, sections=(*check.report.sections, stays))
        await self._store.added_as(suggestion.id, check.item_id)
        notice = Message(
            title="✅ Your question was approved",
            sections=(
                Section(
                    body=f"{_quoted(suggestion.prompt)} is now `{check.item_id}` in the "
                    "`community` pack, and every post of it says you suggested it. Thank you!"
                ),
            ),
            tone=Tone.SUCCESS,
        )
        how = await self._tell(ctx, suggestion, notice, gateway)
        told = Section(
            body=f"Suggestion #{number} by {_name(suggestion.author_name)} is `{check.item_id}` "
            f"now; {how}."
        )
        return replace(check.report, sections=(*check.report.sections, told))

    @audited("suggestion reject")
    async def reject(
        self, ctx: ChatContext, request: SuggestionReject, gateway: ChatGateway
    ) -> Message:
        """Turn suggestion ``request.id`` down and tell its author the reason."""
        reason = " ".join(clean_text(request.reason).split())
        if len(reason) < MIN_REASON:
            raise BadInput(
                "Say why, for its author: e.g. "
                f"{ctx.command(f'suggestions reject {request.id} the answer is ambiguous')}."
            )
        check_reason_length(reason)
        suggestion = await self._pending(ctx, request.id)
        claimed = await self._store.claim(
            suggestion.id, Status.REJECTED, ctx.member, self._now(), reason
        )
        if not claimed:
            raise BadInput(f"Suggestion #{request.id} was decided meanwhile by another admin.")
        notice = Message(
            title="Your question was not added",
            sections=(
                Section(body=f"An admin turned down {_quoted(suggestion.prompt)}."),
                Section(heading="Why", body=escape_markup(neutralise(reason))),
                Section(body=f"You can fix it and write it again with {ctx.command('write')}."),
            ),
            tone=Tone.WARNING,
        )
        how = await self._tell(ctx, suggestion, notice, gateway)
        return Message.note(
            f"Rejected suggestion #{request.id} by {_name(suggestion.author_name)}; {how}."
        )

    async def _pending(self, ctx: ChatContext, number: int) -> Suggestion:
        _admins_only(ctx)
        workspace = await self._places.workspace(ctx)
        suggestion = await self._store.get(workspace.id, number)
        if suggestion is None:
            raise NotFound(
                f"There is no suggestion #{number} here; {ctx.command('suggestions')} lists them."
            )
        if suggestion.status is not Status.PENDING:
            raise BadInput(f"Suggestion #{number} was already {suggestion.status.value}.")
        return suggestion

    async def _tell(
        self, ctx: ChatContext, suggestion: Suggestion, notice: Message, gateway: ChatGateway
    ) -> str:
        """Tell the author privately if the platform can; else in the channel they wrote in
        (the suggestion is of ``ctx``'s workspace). Returns how, for the admin's reply."""
        name = _name(suggestion.author_name)
        dm = gateway if isinstance(gateway, DirectMessenger) else None
        if dm is not None and await dm.send_dm(ctx.workspace, suggestion.author, notice):
            return f"{name} was told by direct message"
        public = replace(notice, title=f"{notice.title}, @{neutralise(suggestion.author_name)}")
        await gateway.send_post(suggestion.channel, public)
        return f"{name} takes no direct messages, so they were told in the channel they wrote it in"

    def _now(self) -> datetime:
        return self._clock.now()


def _admins_only(ctx: ChatContext) -> None:
    if not ctx.is_admin:
        raise Forbidden(
            "Only admins can see and decide suggested questions; write one with "
            f"{ctx.command('write')}."
        )


def _question(suggestion: Suggestion) -> WrittenQuestion:
    data = json.loads(suggestion.question)
    data["tags"] = tuple(data.get("tags") or ())
    return WrittenQuestion(**data)


def _cut(text: str) -> str:
    return text if len(text) <= PROMPT_SHOWN else text[: PROMPT_SHOWN - 1].rstrip() + "…"


def _quoted(prompt: str) -> str:
    """A member's prompt quoted in a message: shortened, unable to ping or format."""
    return f"“{escape_markup(neutralise(_cut(prompt)))}”"


def _name(name: str) -> str:
    return f"**{escape_markup(neutralise(name))}**"


def suggestions_message(pending: Sequence[Suggestion], approve: str, reject: str) -> Message:
    """``/suggestions``: the queue, oldest first; ``approve`` and ``reject`` are how the
    platform writes those commands."""
    if not pending:
        return Message.note("No suggested questions are waiting. ✍️")
    lines = [
        f"• **#{s.id}** · {_name(s.author_name)}, {s.created_at:%Y-%m-%d}: {_quoted(s.prompt)}"
        for s in pending
    ]
    return Message(
        title=f"✍️ Suggested questions waiting ({len(pending)})",
        sections=(Section(body="\n".join(lines)),),
        footer=f"{approve} adds one to the community pack; {reject} turns it down.",
        ephemeral=True,
    )
