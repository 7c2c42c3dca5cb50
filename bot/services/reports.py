"""``/report``: a member flags a question as wrong; admins read and resolve (``/reports``).

A study bot must never teach a wrong fact, and the members who answer are the first to spot
one. A report names the question by its post number (or the channel's latest question) and
says what is wrong; admins see the open reports grouped by question, `pack list` counts them
per pack, and resolving a question's reports keeps them for the record. The open reports are
read as rows (:meth:`QuestionReports.open_reports`, admins only, as in chat) and rendered by
:func:`reports_message`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.messages import Message, Section, escape_markup, neutralise
from bot.core.models import ChatContext
from bot.core.requests import check_reason_length
from bot.services.audit import AuditLog, audited
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.storage.directory import Directory
from bot.storage.posts import PostStore
from bot.storage.reports import OpenReport, ReportStore
from bot.text import clean_text

if TYPE_CHECKING:
    from bot.services.item_analysis import ItemAnalysis
    from bot.storage.item_flags import HeldFlag

__all__ = ["OpenReport", "QuestionReports", "reports_message"]

MIN_REASON = 5


class QuestionReports:
    audit: AuditLog | None = None  # set by build_services: changes are recorded there
    # Set by build_services: /reports lists the flags item analysis holds on questions too.
    analysis: ItemAnalysis | None = None

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        catalogue: Catalogue,
        posts: PostStore,
        store: ReportStore,
        clock: Clock,
    ) -> None:
        self._places = places
        self._directory = directory
        self._catalogue = catalogue
        self._posts = posts
        self._store = store
        self._clock = clock

    @staticmethod
    def _reason(ctx: ChatContext, typed: str) -> str:
        reason = " ".join(clean_text(typed).split())
        if len(reason) < MIN_REASON:
            raise BadInput(
                f"Say what is wrong, e.g. {ctx.command('report 12 the answer should be B')}."
            )
        check_reason_length(reason)
        return reason

    async def report(self, ctx: ChatContext, post_id: int | None, reason: str) -> Message:
        """Report question ``post_id`` (default: this channel's latest) as wrong."""
        reason = self._reason(ctx, reason)
        workspace, channel = await self._places.channel(ctx)
        if post_id is None:
            post = await self._posts.latest(channel.id)
            if post is None:
                raise NotFound("There is no question in this channel to report.")
        else:
            found = await self._posts.get(post_id)
            if found is None or await self._places.channel_of(workspace, found) is None:
                raise NotFound(f"There is no question #{post_id} here.")
            post = found
        stored = await self._catalogue.posted(post)
        now = self._clock.now()
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        new = await self._store.add(
            workspace.id, stored.question_id, post.id, member.id, reason, now
        )
        verb = "reached the admins" if new else "was updated"
        return Message.note(
            f"🚩 Thank you: your report on #{post.id} (`{stored.item.id}` in "
            f"{self._catalogue.title(stored.pack)}) {verb}. An admin will look at it."
        )

    async def report_question(self, ctx: ChatContext, item_id: str, reason: str) -> Message:
        """Admins on the question's page: open a report on a live question by its id (no post
        needed: an admin reading the figures may find it wrong before it is asked again)."""
        if not ctx.is_admin or self.analysis is None:
            raise Forbidden("Only admins open reports from the Questions tab; use `report`.")
        reason = self._reason(ctx, reason)
        stats, _ = await self.analysis.question(ctx, item_id, waiting=False)
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        new = await self._store.add(
            workspace.id, stats.question.question_id, None, member.id, reason, now
        )
        verb = "Opened a report" if new else "Updated your open report"
        return Message.note(f"🚩 {verb} on `{item_id}`.")

    async def open_reports(self, ctx: ChatContext) -> list[OpenReport]:
        """Admins: the workspace's open reports, grouped by question (pack, then item id),
        oldest first within a question; chat (:meth:`listing`) and the admin page show these."""
        if not ctx.is_admin:
            raise Forbidden("Only admins can see the reports; report one with `report`.")
        workspace = await self._places.workspace(ctx)
        return await self._store.open_reports(workspace.id)

    async def listing(self, ctx: ChatContext) -> Message:
        """Admins: the open reports, grouped by question, then the flags held on questions."""
        reports = await self.open_reports(ctx)
        flags = await self.analysis.open_flags(ctx) if self.analysis is not None else []
        return reports_message(
            reports,
            ctx.command("reports resolve ITEM_ID"),
            flags,
            ctx.command("reports dismiss ITEM_ID"),
        )

    @audited("reports resolve")
    async def resolve(self, ctx: ChatContext, item_id: str) -> Message:
        """Admins: close a question's open reports and resolve its flags (it was fixed)."""
        if not ctx.is_admin:
            raise Forbidden("Only admins can resolve reports.")
        workspace = await self._places.workspace(ctx)
        closed = await self._store.resolve(
            workspace.id, item_id, ctx.member_name, self._clock.now()
        )
        flags = 0
        if self.analysis is not None:
            flags = await self.analysis.end_flags(ctx, item_id, "resolved")
        if not closed and not flags:
            raise NotFound(f"There are no open reports on `{item_id}`, and no open flags.")
        done = [_count(closed, "report"), _count(flags, "flag")]
        return Message.note(f"✅ Resolved {' and '.join(d for d in done if d)} on `{item_id}`.")

    async def dismiss(self, ctx: ChatContext, item_id: str) -> Message:
        """Admins: dismiss a question's flags; they stay dismissed until the question changes."""
        if not ctx.is_admin:
            raise Forbidden("Only admins can dismiss flags.")
        ended = 0
        if self.analysis is not None:
            ended = await self.analysis.end_flags(ctx, item_id, "dismissed")
        if not ended:
            raise NotFound(f"There are no open flags on `{item_id}`.")
        return Message.note(
            f"✅ Dismissed {_count(ended, 'flag')} on `{item_id}`; they stay dismissed until "
            "the question is changed."
        )

    async def counts_by_pack(self, ctx: ChatContext) -> dict[str, int]:
        workspace = await self._places.workspace(ctx)
        return await self._store.counts_by_pack(workspace.id)


def _count(n: int, word: str) -> str:
    return "" if not n else f"{n} {word}{'s' if n != 1 else ''}"


def reports_message(
    reports: Sequence[OpenReport],
    resolve: str,
    flags: Sequence[HeldFlag] = (),
    dismiss: str = "",
) -> Message:
    """``/reports``: the open reports grouped by question, then the flags on questions with
    their evidence; ``resolve`` and ``dismiss`` are how the platform writes those commands."""
    if not reports and not flags:
        return Message.note("No open reports. 🎉 No flagged questions either.")
    sections = _grouped(reports)
    for flag in flags:
        sections.append(
            Section(
                heading=f"⚠️ {flag.item_id} ({flag.pack}): {flag.heading}",
                body=escape_markup(flag.evidence),
            )
        )
    parts = (
        f"Open reports ({len(reports)})" if reports else "",
        f"Flagged questions ({len(flags)})" if flags else "",
    )
    title = " · ".join(p for p in parts if p)
    footer = f"Fix the item in its pack file, then {resolve} closes its reports and flags."
    if flags:
        footer += f" A flag whose figures mislead: {dismiss}."
    return Message(
        title=f"🚩 {title}",
        sections=tuple(sections),
        footer=footer,
        ephemeral=True,
    )


def _grouped(reports: Sequence[OpenReport]) -> list[Section]:
    sections: list[Section] = []
    current: tuple[str, str] | None = None
    lines: list[str] = []
    for report in reports:
        key = (report.pack, report.question)
        if key != current:
            if current is not None:
                sections.append(
                    Section(heading=f"{current[1]} ({current[0]})", body="\n".join(lines))
                )
            current, lines = key, []
        post = f"#{report.post_id} · " if report.post_id is not None else ""
        # Members wrote the reason and chose the name: shown as text, never as markup.
        who, why = (escape_markup(neutralise(t)) for t in (report.member_name, report.reason))
        lines.append(f"• {post}{who}, {report.reported_at:%Y-%m-%d}: {why}")
    if current is not None:
        sections.append(Section(heading=f"{current[1]} ({current[0]})", body="\n".join(lines)))
    return sections
