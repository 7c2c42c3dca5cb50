"""The Questions tab: every question's statistics and flags, one question's detail, and the
CSV exports a teacher imports.

Sorting is done on the server through the column headers' links, so the table sorts without
a script and keeps its order in the address (a link can be shared, the back button works).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bot.core.errors import BadInput, NotFound, StudyError
from bot.core.item_analysis import ItemStats
from bot.core.privacy import MIN_GROUP
from bot.services.item_analysis import Period
from bot.web.checks import Seen, checked
from bot.web.page_parts import PageParts, status_of

__all__ = ["QuestionPages"]

#: The table's sortable columns: the key each sorts by (None sorts last either way).
COLUMNS: dict[str, Callable[[ItemStats], Any]] = {
    "item": lambda s: (s.question.pack, s.question.item_id),
    "kind": lambda s: s.question.kind,
    "answers": lambda s: s.answers,
    "facility": lambda s: s.facility,
    "discrimination": lambda s: s.discrimination,
    "time": lambda s: s.median_seconds,
    "reports": lambda s: s.reports,
    "flags": lambda s: len(s.flags),
}


def _sorted(stats: list[ItemStats], column: str, descending: bool) -> list[ItemStats]:
    key = COLUMNS[column]
    known = [s for s in stats if key(s) is not None]
    unknown = [s for s in stats if key(s) is None]
    return sorted(known, key=key, reverse=descending) + unknown


def _back_to(seen: Seen, item_id: str, done: str) -> Response:
    """After a form on a question's page: back to it, with what was done (post/redirect/get)."""
    where = f"/w/{seen.where.id}/questions/{quote(item_id)}?done={quote(done)}"
    return RedirectResponse(where, status_code=303)


class QuestionPages(PageParts):
    """The Questions tab's handlers (a mixin of :class:`bot.web.routes.Pages`)."""

    @staticmethod
    def _period(request: Request) -> Period:
        return Period(Period.parse_days(request.query_params.get("days")))

    @checked
    async def questions(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        column = request.query_params.get("sort", "flags")
        if column not in COLUMNS:
            column = "flags"
        descending = request.query_params.get("order", "desc") != "asc"
        stats: list[ItemStats] = []
        error, status, counted = None, 200, None
        try:
            period = self._period(request)
            stats = await self._services.analysis.statistics(ctx, period, waiting=False)
            counted = self._services.analysis.counted(seen.where.id, period)
        except StudyError as exc:
            error, status = str(exc), status_of(exc)
        return self._page(
            "questions.html",
            status=status,
            session=seen.session,
            place=seen.where,
            stats=_sorted(stats, column, descending),
            sort=column,
            descending=descending,
            days="" if error else request.query_params.get("days", ""),
            columns=COLUMNS,
            error=error,
            counted_at=None if counted is None else counted[0],
            recounting=counted is not None and counted[1],
        )

    @checked
    async def question_detail(self, request: Request, seen: Seen) -> Response:
        return await self._detail(request, seen, notice=request.query_params.get("done"))

    async def _detail(
        self,
        request: Request,
        seen: Seen,
        *,
        notice: str | None = None,
        error: str | None = None,
        typed: str = "",
        status: int = 200,
    ) -> Response:
        """One question's page; a refused report form comes back with its reason kept."""
        ctx = seen.context()
        item_id = str(request.path_params["item"])
        try:
            period = self._period(request)
            stats, item = await self._services.analysis.question(
                ctx, item_id, period, waiting=False
            )
        except StudyError as exc:
            return self._refused(seen, exc)
        counted_at, recounting = self._services.analysis.counted(seen.where.id, period)
        reports = [
            r
            for r in await self._services.reports.open_reports(ctx)
            if r.question == item_id and r.pack == stats.question.pack
        ]
        flags = [f for f in await self._services.analysis.held_flags(ctx) if f.item_id == item_id]
        return self._page(
            "question.html",
            status=status,
            session=seen.session,
            place=seen.where,
            stats=stats,
            item=item,
            reports=reports,
            flags=flags,
            notice=notice,
            error=error,
            typed=typed,
            counted_at=counted_at,
            recounting=recounting,
        )

    @checked
    async def report_question(self, request: Request, seen: Seen) -> Response:
        """The question page's report form: an admin opens a report on what they found."""
        item_id = str(request.path_params["item"])
        typed = str(seen.posted.get("reason", ""))
        try:
            reply = await self._services.reports.report_question(seen.context(), item_id, typed)
        except BadInput as exc:
            return await self._detail(request, seen, error=str(exc), typed=typed, status=400)
        except StudyError as exc:
            return self._refused(seen, exc)
        return _back_to(seen, item_id, reply.plain_text())

    @checked
    async def end_flags(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        item_id = str(request.path_params["item"])
        outcome = str(seen.posted.get("outcome", ""))
        try:
            if outcome == "resolved":
                reply = await self._services.reports.resolve(ctx, item_id)
            elif outcome == "dismissed":
                reply = await self._services.reports.dismiss(ctx, item_id)
            else:
                raise BadInput("Choose resolve or dismiss.")
        except StudyError as exc:
            return self._refused(seen, exc)
        return _back_to(seen, item_id, reply.plain_text())

    async def _mastery(self, request: Request, seen: Seen) -> Any:
        weeks = request.query_params.get("weeks", "8")
        if not weeks.isdigit():
            raise BadInput(f"weeks must be a whole number from 1 to 26, not `{weeks}`.")
        return await self._services.mastery.picture(seen.context(), int(weeks))

    @checked
    async def mastery(self, request: Request, seen: Seen) -> Response:
        """The group's mastery: the picture chat's ``/stats group`` attaches, with its words."""
        try:
            picture = await self._mastery(request, seen)
        except StudyError as exc:
            return self._refused(seen, exc)
        readiness = await self._services.exams.group_readiness(seen.context())
        return self._page(
            "mastery.html",
            session=seen.session,
            place=seen.where,
            picture=picture,
            weeks=request.query_params.get("weeks", "8"),
            readiness=readiness,
            min_group=MIN_GROUP,
        )

    @checked
    async def mastery_picture(self, request: Request, seen: Seen) -> Response:
        try:
            picture = await self._mastery(request, seen)
        except StudyError as exc:
            return Response(str(exc), status_code=status_of(exc))
        return Response(picture.png, media_type="image/png", headers={"Cache-Control": "no-store"})

    @checked
    async def export_csv(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        what = str(request.path_params["what"])
        try:
            period = self._period(request)
            if what == "gradebook":
                text = await self._services.analysis.gradebook_csv(ctx, period)
            elif what == "questions":
                text = await self._services.analysis.questions_csv(ctx, period)
            else:
                raise NotFound(f"There is no `{what}` export.")
        except StudyError as exc:
            return self._refused(seen, exc)
        return Response(
            text,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="studybot-{what}.csv"'},
        )
