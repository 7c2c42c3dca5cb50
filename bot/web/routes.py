"""The pages: sign-in, home, schedules, reports, boards and settings.

Every page first finds the live session (none: the sign-in help, 401), every POST then checks
the form token (wrong or missing: 403, nothing changed), and every workspace page checks that
the session administers the workspace in its address (any other: 404, as if it did not exist).
Then the page calls the same service as chat, as the signed-in person acting as an admin there,
and renders what it returns; a service's :class:`StudyError` is shown as chat words it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from jinja2 import Environment
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from bot.core.errors import BadInput, StudyError
from bot.core.models import ChatContext, Window
from bot.core.requests import SettingChange
from bot.core.schedule_spec import ScheduleForm
from bot.core.workspace_settings import Setting
from bot.log import get_logger
from bot.services.bundle import Services
from bot.services.web_access import AdminSession, WorkspacePlace
from bot.web import csrf, sessions
from bot.web.audit import AuditPage
from bot.web.checks import Seen, checked
from bot.web.members import MemberPages
from bot.web.packs import PackPages
from bot.web.page_parts import status_of
from bot.web.questions import QuestionPages
from bot.web.schedule_edit import SCHEDULE_FIELDS, ScheduleEdit
from bot.web.templates import render
from bot.web.wording import web_error

__all__ = ["WEB_SETTINGS", "Pages"]

log = get_logger(__name__)

WEB_SETTINGS = tuple(s for s in Setting if s is not Setting.SHARE_SOLUTIONS)
"""Every workspace setting chat's ``/settings`` changes; ``share-solutions`` is each member's
own choice, not the workspace's, so it stays with the member in chat."""
FORM_FIELDS: tuple[str, ...] = ("channel", *SCHEDULE_FIELDS)  # the add form: where, then what
NEXT_TIMES = 5


class Recheck(Protocol):
    """Whether the session's person still administers the workspace: asked on every page of
    it, afresh before a POST changes anything (OAuth sessions: through the bot; see
    :mod:`bot.web.oauth`)."""

    def __call__(
        self, session: AdminSession, place: WorkspacePlace, *, writing: bool
    ) -> Awaitable[bool]: ...


class Pages(PackPages, ScheduleEdit, MemberPages, AuditPage, QuestionPages):
    """The page handlers, over the services, the templates and the cookie secret (packs,
    members and the audit log are in their own modules: :mod:`bot.web.packs`,
    :mod:`bot.web.schedule_edit`, :mod:`bot.web.members`, :mod:`bot.web.audit`)."""

    def __init__(
        self,
        services: Services,
        env: Environment,
        secret: bytes,
        limiter: sessions.SignInLimiter,
        *,
        recheck: Recheck | None = None,
        providers: Sequence[str] = (),
    ) -> None:
        self._services = services
        self._env = env
        self._secret = secret
        self._limiter = limiter
        self._recheck = recheck
        self._providers = tuple(providers)

    # --- the checks every page passes ---------------------------------------------------------

    async def _seen(self, request: Request) -> Seen | Response:
        session = await sessions.current(request, self._services, self._secret)
        if session is None:
            return self._page("signed_out.html", status=401)
        form = None
        if request.method == "POST":
            form = await request.form()
            if not csrf.valid(form, session.csrf):
                log.warning("web: a form without its token was refused (%s)", request.url.path)
                return self._page("error.html", status=403, session=None, error=_NO_FORM_KEY)
        place = None
        if "ws" in request.path_params:
            place = await self._services.web.place(session, int(request.path_params["ws"]))
            if place is None:
                return self._page("error.html", status=404, session=session, error=_NO_PAGE)
            recheck = self._recheck
            writing = form is not None
            if recheck is not None and not await recheck(session, place, writing=writing):
                log.warning(
                    "web: %s no longer administers workspace %d; a %s was refused",
                    session.person.member,
                    place.id,
                    "change" if writing else "page",
                )
                return self._page("error.html", status=403, session=session, error=_NOT_ADMIN)
        return Seen(session, place, form)

    def plain_page(self, name: str, status: int = 200, **values: Any) -> Response:
        """A page outside the checks (the OAuth flows' errors), with the usual values."""
        return self._page(name, status, **values)

    def _page(self, name: str, status: int = 200, **values: Any) -> Response:
        values.setdefault("session", None)
        values.setdefault("providers", self._providers)
        values.setdefault("place", None)
        values.setdefault("csrf", values["session"].csrf if values["session"] else "")
        response = render(self._env, name, status, **values)
        response.headers["Cache-Control"] = "no-store"
        return response

    # --- signing in and out ------------------------------------------------------------------

    async def signin_form(self, request: Request) -> Response:
        token = request.query_params.get("token", "")[:100]
        state = await self._services.web.link_state(token) if token else "none"
        form_token = csrf.signin_token(request)
        response = self._page(
            "signin.html",
            link_token=token if state == "usable" else "",
            link_state=state,
            csrf=form_token,
        )
        csrf.remember_signin(response, request, form_token)
        return response

    async def signin(self, request: Request) -> Response:
        client = request.client.host if request.client else "unknown"
        if not self._limiter.allow(client):
            log.warning("web: sign-in attempts from %s over the limit", client)
            return self._page("error.html", status=429, error=_TOO_MANY)
        form = await request.form()
        if not csrf.valid_signin(request, form):
            return self._page("error.html", status=403, error=_NO_FORM_KEY)
        link_token = form.get("token")
        redeemed = None
        if isinstance(link_token, str) and 0 < len(link_token) <= 100:
            redeemed = await self._services.web.redeem(link_token)
        if redeemed is None:
            return self._page("error.html", status=400, error=_BAD_LINK)
        token, session = redeemed
        log.info("web: %s signed in", session.person.member)
        response = RedirectResponse("/", status_code=303)
        sessions.set_cookie(response, request, self._secret, token)
        response.delete_cookie(csrf.SIGNIN_COOKIE, path="/signin")
        return response

    @checked
    async def signout(self, request: Request, seen: Seen) -> Response:
        token = sessions.session_token(request, self._secret)
        if token is not None:
            await self._services.web.sign_out(token)
        response = self._page("signed_out.html", signed_out=True)
        sessions.clear_cookie(response, request)
        return response

    # --- home --------------------------------------------------------------------------------

    @checked
    async def home(self, request: Request, seen: Seen) -> Response:
        workspaces = []
        recheck = self._recheck
        for place in await self._services.web.places(seen.session):
            if recheck is not None and not await recheck(seen.session, place, writing=False):
                continue  # no longer theirs: not listed (its pages answer 403)
            channels = []
            for channel in place.channels:
                ctx = self._services.web.context(seen.session, place, channel)
                channels.append(await self._services.schedules.channel_schedules(ctx, NEXT_TIMES))
            workspaces.append((place, channels))
        return self._page("home.html", session=seen.session, workspaces=workspaces)

    # --- schedules ---------------------------------------------------------------------------

    @checked
    async def schedules(self, request: Request, seen: Seen) -> Response:
        return await self._schedules_page(seen)

    async def _schedules_page(
        self,
        seen: Seen,
        *,
        status: int = 200,
        notice: str | None = None,
        error: str | None = None,
        field: str | None = None,
        typed: dict[str, str] | None = None,
        draft: Any = None,
    ) -> Response:
        place = seen.where
        listed = []
        for channel in place.channels:
            ctx = seen.context(channel)
            listed.append(
                (channel, await self._services.schedules.channel_schedules(ctx, NEXT_TIMES))
            )
        return self._page(
            "schedules.html",
            status=status,
            session=seen.session,
            place=place,
            listed=listed,
            notice=notice,
            error=error,
            field=field,
            typed=typed or {},
            draft=draft,
        )

    @checked
    async def add_schedule(self, request: Request, seen: Seen) -> Response:
        typed = {name: _text(seen.posted, name) for name in FORM_FIELDS}
        channel = seen.where.channel(typed["channel"])
        if channel is None:
            return await self._schedules_page(
                seen, status=400, error="Choose a channel.", field="channel", typed=typed
            )
        ctx = seen.context(channel)
        form = ScheduleForm.from_fields(typed)
        try:
            if _text(seen.posted, "action") == "preview":
                draft = await self._services.schedules.draft_times(ctx, form, NEXT_TIMES)
                return await self._schedules_page(seen, typed=typed, draft=draft)
            reply = await self._services.schedules.add(ctx, form)
        except StudyError as exc:
            field = exc.field if isinstance(exc, BadInput) else None
            return await self._schedules_page(
                seen, status=status_of(exc), error=web_error(exc), field=field, typed=typed
            )
        return await self._schedules_page(seen, notice=reply.message.plain_text())

    @checked
    async def change_schedule(self, request: Request, seen: Seen) -> Response:
        verb = request.path_params["verb"]
        schedule_id = int(request.path_params["sid"])
        channel = seen.where.channel(_text(seen.posted, "channel"))
        if channel is None:
            return await self._schedules_page(seen, status=400, error="Choose a channel.")
        ctx = seen.context(channel)
        book = self._services.schedules
        act: dict[str, Callable[[ChatContext, int], Awaitable[Any]]] = {
            "pause": book.pause,
            "resume": book.resume,
            "remove": book.remove,
        }
        if verb not in act:
            return self._page("error.html", status=404, session=seen.session, error=_NO_PAGE)
        try:
            reply = await act[verb](ctx, schedule_id)
        except StudyError as exc:
            return await self._schedules_page(seen, status=status_of(exc), error=str(exc))
        return await self._schedules_page(seen, notice=reply.message.plain_text())

    # --- reports -----------------------------------------------------------------------------

    @checked
    async def reports(self, request: Request, seen: Seen) -> Response:
        return await self._reports_page(seen)

    async def _reports_page(
        self, seen: Seen, *, status: int = 200, notice: str | None = None, error: str | None = None
    ) -> Response:
        ctx = seen.context()
        found = await self._services.reports.open_reports(ctx)
        flags = await self._services.analysis.open_flags(ctx)
        return self._page(
            "reports.html",
            status=status,
            session=seen.session,
            place=seen.where,
            reports=found,
            flags=flags,
            notice=notice,
            error=error,
        )

    @checked
    async def resolve_report(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        try:
            reply = await self._services.reports.resolve(ctx, _text(seen.posted, "item"))
        except StudyError as exc:
            return await self._reports_page(seen, status=status_of(exc), error=str(exc))
        return await self._reports_page(seen, notice=reply.plain_text())

    # --- boards ------------------------------------------------------------------------------

    @checked
    async def boards(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        boards = [(w, await self._services.standings.board(ctx, w)) for w in Window]
        return self._page("boards.html", session=seen.session, place=seen.where, boards=boards)

    # --- settings ----------------------------------------------------------------------------

    @checked
    async def settings(self, request: Request, seen: Seen) -> Response:
        return await self._settings_page(seen)

    async def _settings_page(
        self,
        seen: Seen,
        *,
        status: int = 200,
        notices: tuple[str, ...] = (),
        errors: dict[str, str] | None = None,
        typed: dict[str, str] | None = None,
    ) -> Response:
        ctx = seen.context()
        return self._page(
            "settings.html",
            status=status,
            session=seen.session,
            place=seen.where,
            values=await self._services.settings.values(ctx, WEB_SETTINGS),
            changes=await self._services.settings.changes(ctx),
            notices=notices,
            errors=errors or {},
            typed=typed or {},
        )

    @checked
    async def save_settings(self, request: Request, seen: Seen) -> Response:
        ctx = seen.context()
        current = {v.setting: v.value for v in await self._services.settings.values(ctx)}
        notices: list[str] = []
        errors: dict[str, str] = {}
        typed: dict[str, str] = {}
        for setting in WEB_SETTINGS:
            value = _text(seen.posted, setting.value).strip()
            typed[setting.value] = value
            if not value or value == current.get(setting):
                continue  # unchanged: nothing is logged
            try:
                reply = await self._services.settings.command(ctx, SettingChange(setting, value))
            except StudyError as exc:
                errors[setting.value] = str(exc)
                continue
            notices.append(reply.plain_text())
        return await self._settings_page(
            seen,
            status=400 if errors else 200,
            notices=tuple(notices),
            errors=errors,
            typed=typed if errors else {},
        )


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value[:500] if isinstance(value, str) else ""


_NO_FORM_KEY = "This form was sent without its security token. Reload the page and try again."
_NO_PAGE = "There is no such page among the workspaces you administer."
_NOT_ADMIN = (
    "You no longer administer this workspace, so its pages are closed to you and nothing was "
    "changed. Sign out, and ask an admin there if this is wrong."
)
_TOO_MANY = "Too many sign-in attempts from here. Wait a few minutes, then use a new link."
_BAD_LINK = (
    "This sign-in link is unknown, already used or expired. Run `studybot web` again for a new one."
)
