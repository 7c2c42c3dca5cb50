"""The Packs page: each pack on or off per channel, uploads, and the community questions
(edit, retire), with chat's rules and words."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response

from bot.core.errors import StudyError
from bot.questions.written import WrittenQuestion, written_from_item
from bot.web.checks import Seen, checked
from bot.web.page_parts import PageParts
from bot.web.wording import pack_switched, web_error

__all__ = ["PackPages"]

_UPLOAD_LIMIT = 1024 * 1024  # read at most this much of an upload (the pack limit is smaller)


class PackPages(PageParts):
    """The Packs page's handlers (a mixin of :class:`bot.web.routes.Pages`)."""

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
