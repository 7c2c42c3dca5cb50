"""The Audit log page: who changed what, newest first, in the page's own words."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from bot.web.checks import Seen, checked
from bot.web.page_parts import PageParts

__all__ = ["AuditPage"]


class AuditPage(PageParts):
    """The Audit log's handler (a mixin of :class:`bot.web.routes.Pages`)."""

    # --- the audit log ------------------------------------------------------------------------

    @checked
    async def audit(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        entries = await self._services.audit.recent(ctx)
        return self._page("audit.html", session=seen.session, place=seen.where, entries=entries)
