"""Sign in with Discord (OAuth2 with ``state`` and PKCE) and with Slack (OpenID Connect).

The flow: ``GET /signin/<provider>`` makes a fresh ``state`` (and a PKCE verifier for Discord,
a nonce for Slack), keeps them in a signed, HttpOnly cookie on ``/signin`` for 10 minutes, and
sends the browser to the provider. The provider sends it back to
``/signin/<provider>/callback?code=...&state=...``: the state must be the cookie's (else 400,
nothing happens), the code is exchanged once (a reused code fails at the provider), then who
the person is comes from the provider (Discord's ``/users/@me``; Slack's id_token, whose
signature is checked against Slack's JWKS, with its iss, aud, nonce and exp).

Which workspaces the session administers is decided from ids and permissions, never names:
on Discord the servers where the guilds list gives Manage Server or Administrator (or where the
bot sees one of ``DISCORD_ADMIN_ROLE``'s role ids on the member); on Slack the team of the
id_token when ``users.info`` says admin or owner, or the member is in ``SLACK_ADMIN_USERS``.
Only workspaces this database already knows count. Every write checks again
(:meth:`AdminRights.administers`), so rights revoked after sign-in stop writes at once.

Secrets (client secrets, codes, tokens) are never logged.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import authlib.deprecate  # noqa: F401  (its warning filter first, so ours below wins)
import httpx
from joserfc import jwt
from joserfc.errors import ClaimError, JoseError
from joserfc.jwk import KeySet
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from bot.log import get_logger
from bot.services.bundle import Services
from bot.services.web_access import AdminSession, Person, WorkspacePlace
from bot.web import sessions

with warnings.catch_warnings():
    # Authlib 1.9 prefers its httpx2 package and warns (always) when it uses httpx instead,
    # which works the same; an operator starting the page should not read that.
    warnings.filterwarnings("ignore", message="The httpx module is deprecated")
    from authlib.integrations.httpx_client import AsyncOAuth2Client, OAuthError

__all__ = [
    "DISCORD_SCOPES",
    "FLOW_COOKIE",
    "SLACK_SCOPES",
    "AdminRights",
    "DiscordClient",
    "OAuthSettings",
    "SignInFlows",
    "SlackClient",
    "redirect_uri",
]

log = get_logger(__name__)

DISCORD_SCOPES = "identify guilds"
SLACK_SCOPES = "openid profile"
FLOW_COOKIE = "studybot_oauth"
FLOW_SECONDS = 600
HTTP_TIMEOUT = 10.0
ADMINISTRATOR = 1 << 3
MANAGE_GUILD = 1 << 5

Check = Callable[[str, str], Awaitable[bool]]
"""(member id, workspace's external id) -> whether the member administers it, asked through
the bot (Discord: the member's roles and their permissions; Slack: ``users.info``)."""


@dataclass(frozen=True, slots=True)
class DiscordClient:
    client_id: str
    client_secret: str = field(repr=False)
    authorize_url: str  # https://discord.com/oauth2/authorize
    api_base: str  # https://discord.com/api/v10: /oauth2/token, /users/@me, /users/@me/guilds


@dataclass(frozen=True, slots=True)
class SlackClient:
    client_id: str
    client_secret: str = field(repr=False)
    issuer: str  # https://slack.com: /openid/connect/authorize and /openid/connect/keys
    api_url: str  # https://slack.com/api/: openid.connect.token


@dataclass(frozen=True, slots=True)
class OAuthSettings:
    """What the sign-in flows need; built by :mod:`bot.app` from the settings."""

    public_url: str
    discord: DiscordClient | None = None
    slack: SlackClient | None = None

    @property
    def providers(self) -> tuple[str, ...]:
        """The configured providers, as the sign-in page offers them."""
        named = (("discord", self.discord), ("slack", self.slack))
        return tuple(name for name, client in named if client is not None)

    def __repr__(self) -> str:  # never the client secrets
        return (
            f"OAuthSettings(public_url={self.public_url!r}, discord={self.discord is not None}, "
            f"slack={self.slack is not None})"
        )


def redirect_uri(public_url: str, provider: str) -> str:
    """Where a provider sends the browser back: register exactly this URI with it."""
    return f"{public_url.rstrip('/')}/signin/{provider}/callback"


#: How long a "yes, still an admin" stands for pages that only read; a write always asks.
READ_FRESH = 300.0  # seconds


@dataclass(frozen=True, slots=True)
class AdminRights:
    """Asks the platform, through the bot, whether someone administers a workspace now.

    Console sessions (the one-time link ``studybot web`` prints) administer what the link
    named: trivially true. A platform without a check (its bot token unset) fails closed.

    Every change is checked as it is made. Pages that only read are checked too, but an answer
    stands for :data:`READ_FRESH` seconds, so browsing costs the platform one call per person
    and workspace every few minutes: someone whose rights were taken away stops seeing the
    pages within that time, not at the end of their 12-hour session.
    """

    discord: Check | None = None
    slack: Check | None = None
    now: Callable[[], float] = time.monotonic
    _confirmed: dict[tuple[str, str, str], float] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    async def administers(self, person: Person, workspace: str) -> bool:
        if person.platform == "console":
            return True
        check = {"discord": self.discord, "slack": self.slack}.get(person.platform)
        if check is None:
            return False
        try:
            return await check(person.member, workspace)
        except (httpx.HTTPError, OSError, ValueError, KeyError, TypeError) as exc:
            log.warning(
                "web: could not check %s's rights in %s %s (%s); refused",
                person.member,
                person.platform,
                workspace,
                type(exc).__name__,
            )
            return False

    async def recheck(self, session: AdminSession, place: WorkspacePlace, *, writing: bool) -> bool:
        """The check :class:`bot.web.routes.Pages` runs on every page of ``place``: asked
        afresh before a change (``writing``), and at most every :data:`READ_FRESH` seconds
        for a page that only reads."""
        person = session.person
        key = (person.platform, person.member, place.external_id)
        confirmed = self._confirmed.get(key)
        now = self.now()
        if not writing and confirmed is not None and now - confirmed < READ_FRESH:
            return True
        if not await self.administers(person, place.external_id):
            self._confirmed.pop(key, None)
            return False
        if len(self._confirmed) >= _CONFIRMED_MAX:
            self._confirmed.clear()  # a bound, not a policy: the next pages just ask again
        self._confirmed[key] = now
        return True


_CONFIRMED_MAX = 10_000


class FlowFailed(Exception):
    """A sign-in that cannot go on; the message is shown (no secret in it)."""


def _sign(secret: bytes, payload: bytes) -> str:
    mac = hmac.new(secret, b"oauth-flow:" + payload, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def _pack(secret: bytes, flow: Mapping[str, str | int]) -> str:
    payload = base64.urlsafe_b64encode(json.dumps(flow).encode()).decode().rstrip("=")
    return f"{payload}.{_sign(secret, payload.encode())}"


def _unpack(secret: bytes, value: str) -> dict[str, Any] | None:
    payload, _, signature = value.rpartition(".")
    if not payload or len(value) > 2000:
        return None
    if not hmac.compare_digest(signature, _sign(secret, payload.encode())):
        return None
    try:
        flow = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, TypeError):
        return None
    return flow if isinstance(flow, dict) else None


class SignInFlows:
    """The ``/signin/discord`` and ``/signin/slack`` routes and their callbacks."""

    def __init__(
        self,
        services: Services,
        settings: OAuthSettings,
        rights: AdminRights,
        secret: bytes,
        page: Callable[..., Response],
        now: Callable[[], float] = time.time,
        limiter: sessions.SignInLimiter | None = None,
    ) -> None:
        self._services = services
        self._settings = settings
        self._rights = rights
        self._secret = secret
        self._page = page
        self._now = now
        self._limiter = limiter or sessions.SignInLimiter()

    def routes(self) -> list[Route]:
        routes = []
        for provider in self._settings.providers:
            routes.append(Route(f"/signin/{provider}", self.start, methods=["GET"]))
            routes.append(Route(f"/signin/{provider}/callback", self.callback, methods=["GET"]))
        return routes

    # --- to the provider --------------------------------------------------------------------

    async def start(self, request: Request) -> Response:
        provider = request.url.path.rsplit("/", 1)[-1]
        state = secrets.token_urlsafe(32)
        flow: dict[str, str | int] = {"p": provider, "s": state, "t": int(self._now())}
        if provider == "discord":
            discord = self._settings.discord
            assert discord is not None
            flow["v"] = secrets.token_urlsafe(48)  # the PKCE verifier (43 to 128 characters)
            client = AsyncOAuth2Client(
                discord.client_id,
                scope=DISCORD_SCOPES,
                redirect_uri=redirect_uri(self._settings.public_url, "discord"),
                code_challenge_method="S256",
            )
            url, _ = client.create_authorization_url(
                discord.authorize_url, state=state, code_verifier=str(flow["v"])
            )
        else:
            slack = self._settings.slack
            assert slack is not None
            flow["n"] = secrets.token_urlsafe(32)
            client = AsyncOAuth2Client(
                slack.client_id,
                scope=SLACK_SCOPES,
                redirect_uri=redirect_uri(self._settings.public_url, "slack"),
            )
            url, _ = client.create_authorization_url(
                f"{slack.issuer.rstrip('/')}/openid/connect/authorize",
                state=state,
                nonce=str(flow["n"]),
            )
        await client.aclose()
        response = RedirectResponse(url, status_code=303)
        response.headers["Cache-Control"] = "no-store"
        response.set_cookie(
            FLOW_COOKIE,
            _pack(self._secret, flow),
            max_age=FLOW_SECONDS,
            path="/signin",
            httponly=True,
            samesite="lax",  # sent on the provider's top-level redirect back, not on a POST
            secure=request.url.scheme == "https",
        )
        return response

    # --- back from the provider -------------------------------------------------------------

    async def callback(self, request: Request) -> Response:
        provider = request.url.path.split("/")[2]
        client = request.client.host if request.client else "unknown"
        if not self._limiter.allow(client):  # the same limit as the one-time links'
            log.warning("web: sign-in attempts from %s over the limit", client)
            return self._page("error.html", status=429, error=_TOO_MANY)
        flow = _unpack(self._secret, request.cookies.get(FLOW_COOKIE, ""))
        state = request.query_params.get("state", "")
        code = request.query_params.get("code", "")
        if (
            flow is None
            or flow.get("p") != provider
            or not isinstance(flow.get("s"), str)
            or not hmac.compare_digest(str(flow["s"]), state)
            or int(flow.get("t", 0)) + FLOW_SECONDS < self._now()
        ):
            log.warning("web: a %s sign-in came back with a wrong or stale state", provider)
            return self._failed(request, _BAD_STATE)
        if not code or len(code) > 500:
            return self._failed(request, _DECLINED)
        try:
            if provider == "discord":
                person, workspaces = await self._discord(code, str(flow.get("v", "")))
            else:
                person, workspaces = await self._slack(code, str(flow.get("n", "")))
        except FlowFailed as exc:
            log.warning("web: a %s sign-in failed: %s", provider, exc)
            return self._failed(request, str(exc))
        token, session = await self._services.web.open_session(person, workspaces)
        log.info(
            "web: %s %s signed in, administering %d workspace(s)",
            provider,
            person.member,
            len(session.workspaces),
        )
        response = RedirectResponse("/", status_code=303)
        sessions.set_cookie(response, request, self._secret, token)
        response.delete_cookie(FLOW_COOKIE, path="/signin")
        return response

    def _failed(self, request: Request, error: str) -> Response:
        response = self._page("error.html", status=400, error=error)
        response.delete_cookie(FLOW_COOKIE, path="/signin")
        return response

    async def _discord(self, code: str, verifier: str) -> tuple[Person, list[int]]:
        discord = self._settings.discord
        assert discord is not None
        api = discord.api_base.rstrip("/")
        async with AsyncOAuth2Client(
            discord.client_id,
            discord.client_secret,
            token_endpoint_auth_method=_SECRET_IN_BODY,
            scope=DISCORD_SCOPES,
            redirect_uri=redirect_uri(self._settings.public_url, "discord"),
            timeout=HTTP_TIMEOUT,
        ) as client:
            try:
                await client.fetch_token(f"{api}/oauth2/token", code=code, code_verifier=verifier)
                me = await client.get(f"{api}/users/@me")
                guilds = await client.get(f"{api}/users/@me/guilds")
                me.raise_for_status()
                guilds.raise_for_status()
                user, listed = me.json(), guilds.json()
            except (OAuthError, httpx.HTTPError, ValueError) as exc:
                raise FlowFailed(_PROVIDER_REFUSED.format("Discord", _reason(exc))) from None
        if not isinstance(user, dict) or "id" not in user or not isinstance(listed, list):
            raise FlowFailed(_PROVIDER_REFUSED.format("Discord", "unexpected answer"))
        member = str(user["id"])
        name = str(user.get("global_name") or user.get("username") or member)
        person = Person("discord", member, name)
        managed: set[str] = set()
        for guild in listed:
            if not isinstance(guild, dict) or "id" not in guild:
                continue
            try:
                permissions = int(guild.get("permissions") or 0)
            except ValueError:
                permissions = 0
            if guild.get("owner") is True or permissions & (ADMINISTRATOR | MANAGE_GUILD):
                managed.add(str(guild["id"]))
        mine = [str(g["id"]) for g in listed if isinstance(g, dict) and "id" in g]
        known = await self._services.web.workspaces_on("discord", mine)
        workspaces = []
        for external, workspace_id in known.items():
            # The admin role (by id) is seen only through the bot: the guilds list has no roles.
            if external in managed or await self._rights.administers(person, external):
                workspaces.append(workspace_id)
        return person, workspaces

    async def _slack(self, code: str, nonce: str) -> tuple[Person, list[int]]:
        slack = self._settings.slack
        assert slack is not None
        issuer = slack.issuer.rstrip("/")
        async with AsyncOAuth2Client(
            slack.client_id,
            slack.client_secret,
            token_endpoint_auth_method=_SECRET_IN_BODY,
            redirect_uri=redirect_uri(self._settings.public_url, "slack"),
            timeout=HTTP_TIMEOUT,
        ) as client:
            try:
                token = await client.fetch_token(
                    f"{slack.api_url.rstrip('/')}/openid.connect.token", code=code
                )
                keys = await client.request(
                    "GET", f"{issuer}/openid/connect/keys", withhold_token=True
                )
                keys.raise_for_status()
                key_set = KeySet.import_key_set(keys.json())
            except (OAuthError, httpx.HTTPError, ValueError, JoseError) as exc:
                raise FlowFailed(_PROVIDER_REFUSED.format("Slack", _reason(exc))) from None
        id_token = token.get("id_token")
        if not token.get("ok", True) or not isinstance(id_token, str):
            raise FlowFailed(_PROVIDER_REFUSED.format("Slack", "no id_token"))
        try:
            decoded = jwt.decode(id_token, key_set, algorithms=["RS256"])
            jwt.JWTClaimsRegistry(
                now=lambda: int(self._now()),
                leeway=60,
                iss={"essential": True, "value": issuer},
                aud={"essential": True, "value": slack.client_id},
                nonce={"essential": True, "value": nonce},
                exp={"essential": True},
                sub={"essential": True},
            ).validate(decoded.claims)
        except (JoseError, ValueError) as exc:
            raise FlowFailed(_BAD_ID_TOKEN.format(_reason(exc))) from None
        claims = decoded.claims
        member = str(claims.get("https://slack.com/user_id") or claims["sub"])
        team = str(claims.get("https://slack.com/team_id") or "")
        person = Person("slack", member, str(claims.get("name") or member))
        known = await self._services.web.workspaces_on("slack", [team] if team else [])
        workspaces = [
            workspace_id
            for external, workspace_id in known.items()
            if await self._rights.administers(person, external)
        ]
        return person, workspaces


def _reason(exc: Exception) -> str:
    """A short, secret-free reason: the error's kind (an OAuth error's code)."""
    if isinstance(exc, OAuthError):
        return str(exc.error or "refused")[:80]
    if isinstance(exc, ClaimError):
        return f"{exc.error}: {exc.claim}"[:80]
    if isinstance(exc, JoseError):
        return str(exc.error or type(exc).__name__)[:80]
    return type(exc).__name__


_BAD_STATE = (
    "This sign-in did not start in this browser, or took more than 10 minutes. "
    "Go back to the sign-in page and try again."
)
_TOO_MANY = "Too many sign-in attempts from here. Wait a few minutes, then try again."
_DECLINED = "The sign-in was cancelled. Go back to the sign-in page and try again."
_PROVIDER_REFUSED = "{} refused this sign-in ({}). Go back to the sign-in page and try again."
_SECRET_IN_BODY = "client_secret_post"  # noqa: S105 (a method's name, not a secret)
_BAD_ID_TOKEN = "Slack's answer could not be verified ({}). Go back to the sign-in page."  # noqa: S105
