"""What every page mixin may use: the page object's services and templates, its checks and
its renderer (:class:`bot.web.routes.Pages` provides them), so each page module stays on its
noun (packs, schedules, members, the audit log) and none imports another."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from bot.core.errors import BadInput, Forbidden, NotFound, StudyError
from bot.web.checks import Seen

if TYPE_CHECKING:
    from jinja2 import Environment

    from bot.services.bundle import Services

__all__ = ["PageParts", "status_of"]

_STATUS = {BadInput: 400, Forbidden: 403, NotFound: 404}


def status_of(exc: StudyError) -> int:
    """The HTTP status a service's refusal is answered with (any other kind: 400)."""
    return next((code for kind, code in _STATUS.items() if isinstance(exc, kind)), 400)


class PageParts:
    """The parts of :class:`~bot.web.routes.Pages` a page mixin calls."""

    _services: Services
    _env: Environment

    async def _seen(self, request: Request) -> Seen | Response:
        raise NotImplementedError

    def _page(self, name: str, status: int = 200, **values: Any) -> Response:
        raise NotImplementedError

    def _refused(self, seen: Seen, exc: StudyError) -> Response:
        """A service's refusal as the error page, with the status its kind says."""
        return self._page(
            "error.html",
            status=status_of(exc),
            session=seen.session,
            place=seen.where,
            error=str(exc),
        )

    async def _schedules_page(self, seen: Seen, *, notice: str | None = None) -> Response:
        raise NotImplementedError
