"""What every page mixin may use: the page object's services and templates, its checks and
its renderer (:class:`bot.web.routes.Pages` provides them), so each page module stays on its
noun (packs, schedules, members, the audit log) and none imports another."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from bot.web.checks import Seen

if TYPE_CHECKING:
    from jinja2 import Environment

    from bot.services.bundle import Services

__all__ = ["PageParts"]


class PageParts:
    """The parts of :class:`~bot.web.routes.Pages` a page mixin calls."""

    _services: Services
    _env: Environment

    async def _seen(self, request: Request) -> Seen | Response:
        raise NotImplementedError

    def _page(self, name: str, status: int = 200, **values: Any) -> Response:
        raise NotImplementedError

    async def _schedules_page(self, seen: Seen, *, notice: str | None = None) -> Response:
        raise NotImplementedError
