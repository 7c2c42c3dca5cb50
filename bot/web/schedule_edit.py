"""Editing one schedule on the web: its fields pre-filled, saved with ``schedule add``'s rules."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from bot.core.errors import StudyError
from bot.core.schedule_spec import ScheduleForm, ScheduleSpec
from bot.core.workspace_settings import describe_window
from bot.web.checks import Seen, checked
from bot.web.page_parts import PageParts
from bot.web.wording import web_error

__all__ = ["SCHEDULE_FIELDS", "ScheduleEdit"]


class ScheduleEdit(PageParts):
    """The schedule edit form's handler (a mixin of :class:`bot.web.routes.Pages`)."""

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
