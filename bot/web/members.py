"""The Members page: the boards per channel, and each member's /stats picture."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.core.errors import StudyError
from bot.core.models import Window
from bot.web.checks import Seen, checked
from bot.web.page_parts import PageParts

__all__ = ["MemberPages"]


class MemberPages(PageParts):
    """The Members page's handlers (a mixin of :class:`bot.web.routes.Pages`)."""

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
