"""The admin web page's Starlette application: routes, and the headers every response carries.

Built by :func:`bot.app.Wiring.web` with the services bundle; it holds no state of its own but
the sign-in rate limit (sessions live in the database).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from importlib import resources

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.services.bundle import Services
from bot.web.oauth import AdminRights, OAuthSettings, SignInFlows
from bot.web.routes import Pages
from bot.web.sessions import SignInLimiter
from bot.web.templates import environment

__all__ = ["CONTENT_SECURITY_POLICY", "create_app"]

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
"""No script at all, styles only from the page's own stylesheet, forms only to itself."""
_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),  # a sign-in link's token never leaves in a Referer
)


class SecurityHeaders:
    """Adds the Content-Security-Policy and its companions to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *_HEADERS]
            await send(message)

        await self._app(scope, receive, send_with_headers)


def _stylesheet() -> bytes:
    return resources.files("bot.web").joinpath("static/style.css").read_bytes()


def create_app(
    services: Services,
    *,
    secret: bytes | None = None,
    limiter: SignInLimiter | None = None,
    hosts: Sequence[str] = ("*",),
    oauth: OAuthSettings | None = None,
    rights: AdminRights | None = None,
) -> ASGIApp:
    """The page over ``services``. ``secret`` signs session cookies (a random one per process
    when None: sessions then end when the process does). ``hosts`` are the Host headers
    answered: on loopback, only loopback names, so a web page elsewhere cannot reach this one
    through a DNS name it points at 127.0.0.1 (DNS rebinding). ``oauth`` adds Sign in with
    Discord / Slack; ``rights`` is asked again before every write (:mod:`bot.web.oauth`)."""
    secret = secret or secrets.token_bytes(32)
    rights = rights or AdminRights()
    limiter = limiter or SignInLimiter()
    pages = Pages(
        services,
        environment(),
        secret,
        limiter,
        recheck=rights.recheck,
        providers=oauth.providers if oauth is not None else (),
    )
    flows = None
    if oauth is not None:
        flows = SignInFlows(services, oauth, rights, secret, pages.plain_page, limiter=limiter)
    css = _stylesheet()

    async def stylesheet(request: Request) -> Response:
        return Response(css, media_type="text/css", headers={"Cache-Control": "max-age=3600"})

    ws = "/w/{ws:int}"
    routes = [
        Route("/", pages.home),
        Route("/static/style.css", stylesheet),
        Route("/signin", pages.signin_form, methods=["GET"]),
        Route("/signin", pages.signin, methods=["POST"]),
        Route("/signout", pages.signout, methods=["POST"]),
        Route(f"{ws}/schedules", pages.schedules, methods=["GET"]),
        Route(f"{ws}/schedules", pages.add_schedule, methods=["POST"]),
        Route(ws + "/schedules/{sid:int}/edit", pages.edit_schedule, methods=["GET", "POST"]),
        Route(ws + "/schedules/{sid:int}/{verb:str}", pages.change_schedule, methods=["POST"]),
        Route(f"{ws}/reports", pages.reports, methods=["GET"]),
        Route(f"{ws}/reports/resolve", pages.resolve_report, methods=["POST"]),
        Route(f"{ws}/boards", pages.boards, methods=["GET"]),
        Route(f"{ws}/settings", pages.settings, methods=["GET"]),
        Route(f"{ws}/settings", pages.save_settings, methods=["POST"]),
        Route(f"{ws}/packs", pages.packs, methods=["GET"]),
        Route(f"{ws}/packs/toggle", pages.toggle_pack, methods=["POST"]),
        Route(f"{ws}/packs/upload", pages.upload_pack, methods=["POST"]),
        Route(f"{ws}/packs/retire", pages.retire_question, methods=["POST"]),
        Route(ws + "/packs/community/{item:str}", pages.edit_question, methods=["GET", "POST"]),
        Route(f"{ws}/members", pages.members, methods=["GET"]),
        Route(ws + "/members/{mid:int}/stats.png", pages.member_picture, methods=["GET"]),
        Route(f"{ws}/audit", pages.audit, methods=["GET"]),
        Route(f"{ws}/questions", pages.questions, methods=["GET"]),
        Route(f"{ws}/mastery", pages.mastery, methods=["GET"]),
        Route(f"{ws}/mastery.png", pages.mastery_picture, methods=["GET"]),
        Route(ws + "/questions/{item:str}", pages.question_detail, methods=["GET"]),
        Route(ws + "/questions/{item:str}/flags", pages.end_flags, methods=["POST"]),
        Route(ws + "/questions/{item:str}/report", pages.report_question, methods=["POST"]),
        Route(ws + "/export/{what:str}.csv", pages.export_csv, methods=["GET"]),
        *(flows.routes() if flows is not None else ()),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))]
    return SecurityHeaders(Starlette(routes=routes, middleware=middleware))
