"""More admin pages: packs (list, on and off per channel, upload), members (boards per channel
and each member's /stats picture) and the audit log.

A mixin of :class:`bot.web.routes.Pages`: the same checks (session, form token, workspace)
through ``_seen``, the same services as chat, the same rendering.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response

from bot.core.errors import StudyError
from bot.core.models import Window
from bot.core.schedule_spec import ScheduleForm, ScheduleSpec
from bot.core.workspace_settings import describe_window
from bot.questions.written import WrittenQuestion, written_from_item
from bot.web.seen import Seen, checked
from bot.web.wording import pack_switched, web_error

if TYPE_CHECKING:
    from jinja2 import Environment

    from bot.services.bundle import Services

__all__ = ["SCHEDULE_FIELDS", "MorePages"]

_UPLOAD_LIMIT = 1024 * 1024  # read at most this much of an upload (the pack limit is smaller)


class MorePages:
    _services: Services
    _env: Environment

    async def _seen(self, request: Request) -> Seen | Response:
        raise NotImplementedError

    def _page(self, name: str, status: int = 200, **values: Any) -> Response:
        raise NotImplementedError

    async def _schedules_page(self, seen: Seen, *, notice: str | None = None) -> Response:
        raise NotImplementedError

    # --- packs --------------------------------------------------------------------------------

    @checked
    async def packs(self, request: Request, seen: Seen) -> Response:
        return await self._packs_page(seen)

    async def _packs_page(
        self,
        seen: Seen,
        *,
        status: int = 200,
        notice: str | None = None,
        error: str | None = None,
        report: str | None = None,
    ) -> Response:
        place = seen.where
        channels = []
        summaries: dict[str, Any] = {}
        for channel in place.channels:
            ctx = seen.context(channel)
            states = await self._services.packs.states(ctx)
            for summary, _ in states:
                summaries[summary.slug] = summary
            channels.append((channel, {summary.slug: on for summary, on in states}))
        reports = await self._services.reports.counts_by_pack(seen.context())
        return self._page(
            "packs.html",
            status=status,
            session=seen.session,
            place=place,
            community=await self._services.packs.community(seen.context()),
            packs=sorted(summaries.values(), key=lambda s: s.slug),
            channels=channels,
            reports=reports,
            notice=notice,
            error=error,
            report=report,
        )

    @checked
    async def toggle_pack(self, request: Request, seen: Seen) -> Response:
        wanted = str(seen.posted.get("channel") or "")
        channel = seen.where.channel(wanted)
        if channel is None:
            return await self._packs_page(seen, status=400, error="Choose a channel.")
        ctx = seen.context(channel)
        name = str(seen.posted.get("pack") or "")[:64]
        enabled = seen.posted.get("enabled") == "on"
        try:
            reply = await self._services.packs.set_enabled(ctx, name, enabled)
        except StudyError as exc:
            return await self._packs_page(seen, status=400, error=web_error(exc))
        return await self._packs_page(seen, notice=pack_switched(reply.plain_text()))

    @checked
    async def upload_pack(self, request: Request, seen: Seen) -> Response:
        """A YAML pack or a CSV: the same linter and sandbox check as an upload in chat; the
        problems are shown at file:line, and a valid pack is installed."""
        upload = seen.posted.get("file")
        if not isinstance(upload, UploadFile) or not upload.filename:
            return await self._packs_page(seen, status=400, error="Choose a pack file to upload.")
        ctx = seen.context()
        packs = self._services.packs
        table = upload.filename.lower().endswith((".csv", ".tsv"))
        try:
            if not table:
                packs.check_file(upload.filename, upload.size)
            raw = await upload.read(_UPLOAD_LIMIT + 1)
            if table:
                reply = await packs.check_table_upload(ctx, upload.filename, raw)
            else:
                packs.check_file(upload.filename, len(raw))
                reply = await packs.check_upload(ctx, upload.filename, raw)
        except StudyError as exc:
            return await self._packs_page(seen, status=400, error=str(exc))
        finally:
            await upload.close()
        return await self._packs_page(seen, report=reply.plain_text())

    @checked
    async def retire_question(self, request: Request, seen: Seen) -> Response:
        """Retire a community question (from the packs page, or from a report on it)."""
        ctx = seen.context()
        item_id = str(seen.posted.get("item") or "")[:64]
        try:
            reply = await self._services.packs.retire_community(ctx, item_id)
            if seen.posted.get("resolve") == "yes":
                resolved = await self._services.reports.resolve(ctx, item_id)
                reply = replace(reply, sections=(*reply.sections, *resolved.sections))
        except StudyError as exc:
            return await self._packs_page(seen, status=400, error=str(exc))
        return await self._packs_page(seen, report=reply.plain_text())

    @checked
    async def edit_question(self, request: Request, seen: Seen) -> Response:
        """A community question in the /write form, pre-filled; saving checks it as /write."""
        item_id = str(request.path_params["item"])[:64]
        mine = await self._services.packs.community(seen.context())
        item = next((i for i in mine if i.id == item_id), None)
        if item is None:
            return self._page("error.html", status=404, session=seen.session, error=_NO_QUESTION)
        typed = _fields(written_from_item(item))
        if seen.form is None:
            return self._edit_page(seen, item_id, typed)
        typed = {name: str(seen.form.get(name) or "")[:4000] for name in _FIELDS}
        question = WrittenQuestion(
            prompt=typed["prompt"],
            choices=typed["choices"],
            answer=typed["answer"],
            explanation=typed["explanation"],
            code=typed["code"],
            expected=typed["expected"],
            difficulty=typed["difficulty"] if typed["difficulty"] in _LEVELS else "medium",
            tags=tuple(typed["tags"].replace(",", " ").split()),
        )
        ctx = seen.context()
        try:
            reply = await self._services.packs.edit_community(ctx, item_id, question)
        except StudyError as exc:
            return self._edit_page(seen, item_id, typed, status=400, error=str(exc))
        return self._edit_page(seen, item_id, typed, report=reply.plain_text())

    def _edit_page(
        self,
        seen: Seen,
        item_id: str,
        typed: dict[str, str],
        *,
        status: int = 200,
        error: str | None = None,
        report: str | None = None,
    ) -> Response:
        return self._page(
            "question_edit.html",
            status=status,
            session=seen.session,
            place=seen.where,
            item_id=item_id,
            typed=typed,
            error=error,
            report=report,
        )

    # --- editing a schedule -------------------------------------------------------------------

    @checked
    async def edit_schedule(self, request: Request, seen: Seen) -> Response:
        """A schedule's fields, pre-filled; saving applies ``schedule add``'s rules to them."""
        source = seen.form if seen.form is not None else request.query_params
        channel = seen.where.channel(str(source.get("channel") or ""))
        if channel is None:
            return self._page("error.html", status=404, session=seen.session, error=_NO_SCHEDULE)
        ctx = seen.context(channel)
        schedule_id = int(request.path_params["sid"])
        listed = await self._services.schedules.channel_schedules(ctx)
        entry = next((e for e in listed.schedules if e.id == schedule_id), None)
        if entry is None or entry.schedule is None:
            return self._page("error.html", status=404, session=seen.session, error=_NO_SCHEDULE)
        if seen.form is None:
            typed = _spec_fields(entry.schedule.spec)
            return self._schedule_form(seen, channel, schedule_id, typed)
        typed = {name: str(seen.form.get(name) or "")[:200] for name in SCHEDULE_FIELDS}
        form = ScheduleForm.from_fields(typed)
        try:
            reply = await self._services.schedules.edit(ctx, schedule_id, form)
        except StudyError as exc:
            return self._schedule_form(
                seen, channel, schedule_id, typed, status=400, error=web_error(exc)
            )
        return await self._schedules_page(seen, notice=reply.message.plain_text())

    def _schedule_form(
        self,
        seen: Seen,
        channel: Any,
        schedule_id: int,
        typed: dict[str, str],
        *,
        status: int = 200,
        error: str | None = None,
    ) -> Response:
        return self._page(
            "schedule_edit.html",
            status=status,
            session=seen.session,
            place=seen.where,
            channel=channel,
            schedule_id=schedule_id,
            typed=typed,
            error=error,
        )

    # --- members ------------------------------------------------------------------------------

    @checked
    async def members(self, request: Request, seen: Seen) -> Response:
        place = seen.where
        ctx = seen.context()
        everyone = await self._services.standings.board(ctx, Window.ALL)
        per_channel = []
        for channel in place.channels:
            here = seen.context(channel)
            board = await self._services.standings.channel_board(here, Window.ALL)
            per_channel.append((channel, board))
        return self._page(
            "members.html",
            session=seen.session,
            place=place,
            everyone=everyone,
            per_channel=per_channel,
        )

    @checked
    async def member_picture(self, request: Request, seen: Seen) -> Response:
        """A member's /stats picture, the same PNG chat attaches."""
        ctx = seen.context()
        member_id = int(request.path_params["mid"])
        try:
            message = await self._services.standings.stats(ctx, member_id=member_id)
        except StudyError as exc:
            return self._page("error.html", status=404, session=seen.session, error=str(exc))
        pictures = [a for a in message.attachments if a.is_image]
        if not pictures:
            return self._page(
                "error.html",
                status=404,
                session=seen.session,
                error="This member has no review cards yet, so there is no picture.",
            )
        return Response(
            pictures[0].content, media_type="image/png", headers={"Cache-Control": "no-store"}
        )

    # --- the audit log ------------------------------------------------------------------------

    @checked
    async def audit(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        entries = await self._services.audit.recent(ctx)
        return self._page("audit.html", session=seen.session, place=seen.where, entries=entries)


_FIELDS = ("prompt", "choices", "answer", "explanation", "code", "expected", "difficulty", "tags")
_LEVELS = ("easy", "medium", "hard")
_NO_QUESTION = "There is no such question in the community pack."


def _fields(question: WrittenQuestion) -> dict[str, str]:
    return {
        "prompt": question.prompt,
        "choices": question.choices,
        "answer": question.answer,
        "explanation": question.explanation,
        "code": question.code,
        "expected": question.expected,
        "difficulty": question.difficulty,
        "tags": ", ".join(question.tags),
    }


#: A schedule's fields on the page's add and edit forms (as :meth:`ScheduleForm.from_fields`
#: reads them), and the ones :func:`_spec_fields` fills in.
SCHEDULE_FIELDS = (
    "time",
    "timezone",
    "days",
    "cron",
    "pack",
    "difficulty",
    "tags",
    "kinds",
    "window",
    "mention",
)
_NO_SCHEDULE = "There is no such schedule in that channel."


def _spec_fields(spec: ScheduleSpec) -> dict[str, str]:
    """A stored schedule as the form's fields, to edit it."""
    window = spec.window
    return {
        "time": f"{spec.time:%H:%M}" if spec.time is not None else "",
        "timezone": spec.timezone,
        "days": "" if spec.days.cron is not None else spec.days.text,
        "cron": spec.days.text if spec.days.cron is not None else "",
        "pack": spec.pack or "",
        "difficulty": spec.difficulty or "",
        "tags": ", ".join(spec.tags),
        "kinds": ", ".join(spec.kinds),
        "window": describe_window(window) if window is not None else "",  # as listed: 2h
        "mention": spec.mention or "",
    }
