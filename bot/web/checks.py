"""What a page handler gets once a request passed the checks (shared by the page modules).

Every page runs the same checks first (a session, the form's token on a POST, the workspace
in the path and the right to change it). :func:`checked` runs them and hands the handler a
:class:`Seen`, or answers with the refusal itself, so no handler repeats them.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from bot.core.models import ChatContext
from bot.services.web_access import AdminSession, ChannelRow, WebAccess, WorkspacePlace

__all__ = ["Seen", "checked"]


@dataclass(frozen=True, slots=True)
class Seen:
    """A request that passed the checks: its session and (on workspace pages) its workspace."""

    session: AdminSession
    place: WorkspacePlace | None
    form: FormData | None

    @property
    def where(self) -> WorkspacePlace:
        """The workspace of a ``/w/{ws}/`` page (the checks found it, or answered 404)."""
        assert self.place is not None, "a workspace page's route has {ws}"
        return self.place

    @property
    def posted(self) -> FormData:
        """The form of a POST (the checks read it and its token)."""
        assert self.form is not None, "only a POST has a form"
        return self.form

    def context(self, channel: ChannelRow | None = None) -> ChatContext:
        """Who the page acts as: the signed-in admin, in this workspace (and ``channel``)."""
        return WebAccess.context(self.session, self.where, channel)


class _Checks(Protocol):
    async def _seen(self, request: Request) -> Seen | Response: ...


PagesT = TypeVar("PagesT", bound=_Checks)


def checked(
    handler: Callable[[PagesT, Request, Seen], Awaitable[Response]],
) -> Callable[[PagesT, Request], Awaitable[Response]]:
    """A page handler behind the checks: it runs only for a request that passed them."""

    @functools.wraps(handler)
    async def page(self: PagesT, request: Request) -> Response:
        seen = await self._seen(request)
        if isinstance(seen, Response):
            return seen
        return await handler(self, request, seen)

    return page
