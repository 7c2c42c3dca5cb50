"""Local fake OAuth providers for the admin page's sign-in: Discord (OAuth2 with PKCE, the
user and guilds endpoints, and the bot's member/guild REST) and Slack (OpenID Connect: an RS256
id_token, its JWKS, and ``users.info`` for the bot), on a free 127.0.0.1 port (aiohttp).

The "browser" part is short-circuited: ``/oauth2/authorize`` (Discord) and
``/openid/connect/authorize`` (Slack) sign the person set in ``signed_in`` in at once and
redirect to the ``redirect_uri`` with a code, as the real consent screens do after "Authorize".
Codes are single-use; each is bound to its client, redirect URI, and PKCE challenge or nonce.
Every request is recorded in ``calls`` (method, path).

    async with FakeProviders() as fake:
        fake.discord_user("1001", "alice", guilds={"900": MANAGE_GUILD})
        fake.signed_in = "1001"
        ...  # point DISCORD_API_BASE at fake.discord_api, DISCORD_OAUTH_URL at
             # fake.discord_authorize, SLACK_OIDC_URL at fake.base, SLACK_API_URL at fake.slack_api
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

__all__ = ["ADMINISTRATOR", "MANAGE_GUILD", "FakeProviders"]

ADMINISTRATOR = 1 << 3
MANAGE_GUILD = 1 << 5
DISCORD_CLIENT = ("discord-client-id", "discord-client-secret")
SLACK_CLIENT = ("slack-client-id", "slack-client-secret")
BOT_TOKEN = "bot-token"


@dataclass
class DiscordUser:
    id: str
    name: str
    roles: dict[str, list[str]] = field(default_factory=dict)  # guild id -> role ids (member)


@dataclass
class SlackUser:
    id: str
    name: str
    team: str
    admin: bool = False


@dataclass
class Grant:
    provider: str
    user: str
    redirect_uri: str
    challenge: str = ""
    nonce: str = ""
    used: bool = False


class FakeProviders:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.discord_users: dict[str, DiscordUser] = {}
        self.guild_roles: dict[str, dict[str, int]] = {}  # guild -> role id -> permissions
        self.guild_owner: dict[str, str] = {}
        self.slack_users: dict[str, SlackUser] = {}
        self.signed_in = ""
        self.wrong_nonce = False  # Slack signs an id_token with another nonce
        self.foreign_key = False  # Slack signs with a key its JWKS does not publish
        self._grants: dict[str, Grant] = {}
        self._tokens: dict[str, str] = {}  # access token -> user id
        self._key = RSAKey.generate_key(2048, parameters={"kid": "fake-1"})
        self._runner: web.AppRunner | None = None
        self.base = ""

    # --- set-up -------------------------------------------------------------------------------

    def discord_user(self, user_id: str, name: str, roles: dict[str, list[str]]) -> DiscordUser:
        """A Discord user, a member of each guild in ``roles`` with those role ids (the
        guilds list's permissions are computed from the roles' permissions, as Discord does)."""
        user = DiscordUser(user_id, name, {g: list(r) for g, r in roles.items()})
        self.discord_users[user_id] = user
        return user

    def permissions(self, user: DiscordUser, guild: str) -> int:
        if self.guild_owner.get(guild) == user.id:
            return ADMINISTRATOR | MANAGE_GUILD
        perms = self.guild_roles.get(guild, {})
        found = 0
        for role in user.roles.get(guild, []):
            found |= perms.get(role, 0)
        return found

    def slack_user(self, user_id: str, name: str, team: str, *, admin: bool = False) -> SlackUser:
        user = SlackUser(user_id, name, team, admin)
        self.slack_users[user_id] = user
        return user

    @property
    def discord_api(self) -> str:
        return f"{self.base}/api/v10"

    @property
    def discord_authorize(self) -> str:
        return f"{self.base}/oauth2/authorize"

    @property
    def slack_api(self) -> str:
        return f"{self.base}/api/"

    # --- running ------------------------------------------------------------------------------

    async def __aenter__(self) -> FakeProviders:
        app = web.Application(middlewares=[self._record])
        app.router.add_get("/oauth2/authorize", self._discord_authorize)
        app.router.add_post("/api/v10/oauth2/token", self._discord_token)
        app.router.add_get("/api/v10/users/@me", self._discord_me)
        app.router.add_get("/api/v10/users/@me/guilds", self._discord_guilds)
        app.router.add_get("/api/v10/guilds/{guild}/members/{user}", self._discord_member)
        app.router.add_get("/api/v10/guilds/{guild}", self._discord_guild)
        app.router.add_get("/openid/connect/authorize", self._slack_authorize)
        app.router.add_get("/openid/connect/keys", self._slack_keys)
        app.router.add_post("/api/openid.connect.token", self._slack_token)
        app.router.add_post("/api/users.info", self._slack_users_info)
        app.router.add_get("/api/users.info", self._slack_users_info)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.calls.append((request.method, request.path))
        return await handler(request)

    def _grant(self, grant: Grant, redirect: str, state: str) -> web.Response:
        code = secrets.token_urlsafe(16)
        self._grants[code] = grant
        raise web.HTTPFound(f"{redirect}?{urlencode({'code': code, 'state': state})}")

    def _redeem(self, form: Any, provider: str, client: tuple[str, str]) -> Grant | None:
        grant = self._grants.get(str(form.get("code", "")))
        if (
            grant is None
            or grant.used
            or grant.provider != provider
            or form.get("client_id") != client[0]
            or form.get("client_secret") != client[1]
            or form.get("redirect_uri") != grant.redirect_uri
        ):
            return None
        grant.used = True  # single use, even if the rest fails
        return grant

    def _bearer(self, request: web.Request) -> str | None:
        header = request.headers.get("Authorization", "")
        return self._tokens.get(header.removeprefix("Bearer ")) if header else None

    # --- Discord ------------------------------------------------------------------------------

    async def _discord_authorize(self, request: web.Request) -> web.Response:
        q = request.query
        if (
            q.get("client_id") != DISCORD_CLIENT[0]
            or q.get("response_type") != "code"
            or set(q.get("scope", "").split()) != {"identify", "guilds"}
            or q.get("code_challenge_method") != "S256"
            or not q.get("code_challenge")
        ):
            return web.json_response({"error": "invalid_request"}, status=400)
        grant = Grant("discord", self.signed_in, q["redirect_uri"], challenge=q["code_challenge"])
        return self._grant(grant, q["redirect_uri"], q.get("state", ""))

    async def _discord_token(self, request: web.Request) -> web.Response:
        form = await request.post()
        grant = self._redeem(form, "discord", DISCORD_CLIENT)
        verifier = str(form.get("code_verifier", ""))
        digest = hashlib.sha256(verifier.encode()).digest()
        challenge = base64.urlsafe_b64encode(digest).decode().rstrip("=")
        if grant is None or challenge != grant.challenge:
            return web.json_response({"error": "invalid_grant"}, status=400)
        token = secrets.token_urlsafe(16)
        self._tokens[token] = grant.user
        return web.json_response(
            {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": 604800,
                "scope": "identify guilds",
            }
        )

    async def _discord_me(self, request: web.Request) -> web.Response:
        user_id = self._bearer(request)
        if user_id is None:
            return web.json_response({"message": "401: Unauthorized"}, status=401)
        user = self.discord_users[user_id]
        return web.json_response({"id": user.id, "username": user.name, "global_name": None})

    async def _discord_guilds(self, request: web.Request) -> web.Response:
        user_id = self._bearer(request)
        if user_id is None:
            return web.json_response({"message": "401: Unauthorized"}, status=401)
        user = self.discord_users[user_id]
        return web.json_response(
            [
                {
                    "id": g,
                    "name": f"guild {g}",
                    "owner": self.guild_owner.get(g) == user.id,
                    "permissions": str(self.permissions(user, g)),
                }
                for g in user.roles
            ]
        )

    def _bot(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {BOT_TOKEN}"

    async def _discord_member(self, request: web.Request) -> web.Response:
        if not self._bot(request):
            return web.json_response({"message": "401: Unauthorized"}, status=401)
        guild, user_id = request.match_info["guild"], request.match_info["user"]
        user = self.discord_users.get(user_id)
        if user is None or guild not in user.roles:
            return web.json_response({"message": "Unknown Member", "code": 10007}, status=404)
        return web.json_response({"user": {"id": user_id}, "roles": user.roles.get(guild, [])})

    async def _discord_guild(self, request: web.Request) -> web.Response:
        if not self._bot(request):
            return web.json_response({"message": "401: Unauthorized"}, status=401)
        guild = request.match_info["guild"]
        roles = [{"id": guild, "name": "@everyone", "permissions": "0"}]
        roles += [
            {"id": r, "name": "Study Admins", "permissions": str(p)}
            for r, p in self.guild_roles.get(guild, {}).items()
        ]
        return web.json_response(
            {"id": guild, "owner_id": self.guild_owner.get(guild, "1"), "roles": roles}
        )

    # --- Slack --------------------------------------------------------------------------------

    async def _slack_authorize(self, request: web.Request) -> web.Response:
        q = request.query
        if (
            q.get("client_id") != SLACK_CLIENT[0]
            or q.get("response_type") != "code"
            or "openid" not in q.get("scope", "").split()
            or not q.get("nonce")
        ):
            return web.json_response({"ok": False, "error": "invalid_request"}, status=400)
        grant = Grant("slack", self.signed_in, q["redirect_uri"], nonce=q["nonce"])
        return self._grant(grant, q["redirect_uri"], q.get("state", ""))

    async def _slack_keys(self, request: web.Request) -> web.Response:
        return web.json_response(KeySet([self._key]).as_dict(private=False))

    async def _slack_token(self, request: web.Request) -> web.Response:
        form = await request.post()
        grant = self._redeem(form, "slack", SLACK_CLIENT)
        if grant is None:
            return web.json_response({"ok": False, "error": "invalid_code"})
        user = self.slack_users[grant.user]
        now = int(time.time())
        claims = {
            "iss": self.base,
            "sub": user.id,
            "aud": SLACK_CLIENT[0],
            "exp": now + 300,
            "iat": now,
            "auth_time": now,
            "nonce": "not-" + grant.nonce if self.wrong_nonce else grant.nonce,
            "https://slack.com/user_id": user.id,
            "https://slack.com/team_id": user.team,
            "name": user.name,
        }
        key = RSAKey.generate_key(2048) if self.foreign_key else self._key
        id_token = jwt.encode({"alg": "RS256", "kid": "fake-1"}, claims, key)
        access = secrets.token_urlsafe(16)
        self._tokens[access] = user.id
        return web.json_response(
            {"ok": True, "access_token": access, "token_type": "Bearer", "id_token": id_token}
        )

    async def _slack_users_info(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            return web.json_response({"ok": False, "error": "invalid_auth"})
        form = await request.post() if request.method == "POST" else {}
        user = self.slack_users.get(str(form.get("user") or request.query.get("user", "")))
        if user is None:
            return web.json_response({"ok": False, "error": "user_not_found"})
        return web.json_response(
            {
                "ok": True,
                "user": {
                    "id": user.id,
                    "team_id": user.team,
                    "name": user.name,
                    "is_admin": user.admin,
                    "is_owner": False,
                    "is_primary_owner": False,
                },
            }
        )
