"""Sign in with Discord and with Slack against local fake providers on loopback
(tests/fakes/oauth_providers.py): state and PKCE, single-use codes, the id_token's signature
and nonce, who administers what (ids and permissions, never names), and the check again before
every write."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

import httpx
import pytest

from bot.app import web_sign_in
from bot.core.models import ChatContext
from bot.services.bundle import Services
from bot.settings import Settings
from bot.web.app import create_app
from bot.web.oauth import FLOW_COOKIE, redirect_uri
from bot.web.sessions import COOKIE
from tests.fakes.oauth_providers import (
    BOT_TOKEN,
    DISCORD_CLIENT,
    MANAGE_GUILD,
    SLACK_CLIENT,
    FakeProviders,
)
from tests.web.conftest import SECRET, csrf_of

PUBLIC = "http://testserver"
ADMIN_ROLE = "555000000000000001"  # DISCORD_ADMIN_ROLE: a role id, with no permissions at all
MANAGER_ROLE = "555000000000000002"  # a role with Manage Server


def where(platform: str, workspace: str) -> ChatContext:
    return ChatContext(
        platform=platform,
        workspace=workspace,
        channel="C1",
        member="someone",
        member_name="someone",
        channel_name="general",
        workspace_name=workspace,
        command_prefix="/",
    )


@dataclass
class World:
    services: Services
    fake: FakeProviders
    app: httpx.ASGITransport
    managed: int  # Discord server 900: alice has Manage Server there
    by_role: int  # Discord server 902: alice has the configured admin role there
    plain: int  # Discord server 901: alice is a plain member
    team: int  # Slack team T1
    ticks: list[float] = field(default_factory=lambda: [0.0])  # the rights check's clock (s)

    def browser(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=self.app, base_url=PUBLIC, follow_redirects=False)


@pytest.fixture
async def world(service: Services) -> AsyncIterator[World]:
    ids = {}
    for platform, external in (
        ("discord", "900"),
        ("discord", "901"),
        ("discord", "902"),
        ("slack", "T1"),
    ):
        ids[external] = (await service.places.channel(where(platform, external)))[0].id
    async with FakeProviders() as fake:
        fake.guild_roles["900"] = {MANAGER_ROLE: MANAGE_GUILD}
        fake.guild_roles["902"] = {ADMIN_ROLE: 0}
        fake.discord_user(
            "1001", "alice", {"900": [MANAGER_ROLE], "901": [], "902": [ADMIN_ROLE], "903": []}
        )
        fake.discord_user("1002", "bob", {"900": [], "901": []})
        fake.slack_user("U1", "carol", "T1", admin=True)
        fake.slack_user("U2", "dave", "T1")
        settings = Settings(
            _env_file=None,
            web_public_url=PUBLIC,
            discord_client_id=DISCORD_CLIENT[0],
            discord_client_secret=DISCORD_CLIENT[1],
            discord_oauth_url=fake.discord_authorize,
            discord_api_base=fake.discord_api,
            discord_token=BOT_TOKEN,
            discord_admin_role=ADMIN_ROLE,
            slack_client_id=SLACK_CLIENT[0],
            slack_client_secret=SLACK_CLIENT[1],
            slack_oidc_url=fake.base,
            slack_api_url=fake.slack_api,
            slack_bot_token=BOT_TOKEN,
        )
        oauth, rights = web_sign_in(settings)
        assert oauth is not None
        ticks = [0.0]
        rights = replace(rights, now=lambda: ticks[0])
        app = create_app(service, secret=SECRET, oauth=oauth, rights=rights)
        yield World(
            service,
            fake,
            httpx.ASGITransport(app=app),
            managed=ids["900"],
            by_role=ids["902"],
            plain=ids["901"],
            team=ids["T1"],
            ticks=ticks,
        )


async def to_provider(client: httpx.AsyncClient, provider: str) -> str:
    """Start a sign-in and let the fake provider approve it: the callback URL it sends the
    browser back to."""
    start = await client.get(f"/signin/{provider}")
    assert start.status_code == 303, start.text
    assert FLOW_COOKIE in start.headers["set-cookie"]
    async with httpx.AsyncClient() as outside:
        approved = await outside.get(start.headers["location"])
    assert approved.status_code == 302, approved.text
    back = approved.headers["location"]
    assert back.startswith(redirect_uri(PUBLIC, provider) + "?")
    return back


async def sign_in(world: World, client: httpx.AsyncClient, provider: str, who: str) -> None:
    world.fake.signed_in = who
    done = await client.get(await to_provider(client, provider))
    assert done.status_code == 303, done.text
    assert done.headers["location"] == "/"
    assert f"{COOKIE}=" in done.headers.get("set-cookie", "")


async def settings_post(
    client: httpx.AsyncClient, ws: int, **fields: str
) -> tuple[httpx.Response, str]:
    page = await client.get(f"/w/{ws}/settings")
    assert page.status_code == 200, page.text
    csrf = csrf_of(page.text)
    return await client.post(f"/w/{ws}/settings", data={"csrf": csrf, **fields}), csrf


async def easy_points(services: Services, ws: int) -> str:
    workspace = await services.places.workspace_by_id(ws)
    return str(workspace.settings.base_points("easy"))


# --- the sign-in page -----------------------------------------------------------------------


async def test_the_sign_in_page_offers_the_configured_providers(world: World) -> None:
    async with world.browser() as client:
        page = await client.get("/signin")
        assert "Sign in with Discord" in page.text and "Sign in with Slack" in page.text
        assert 'href="/signin/discord"' in page.text
        signed_out = await client.get("/")
        assert signed_out.status_code == 401 and "Sign in with Discord" in signed_out.text
    plain = create_app(world.services, secret=SECRET)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=plain), base_url=PUBLIC) as c:
        page = await c.get("/signin")
        assert "Sign in with" not in page.text
        assert (await c.get("/signin/discord")).status_code == 404


async def test_the_discord_authorization_asks_identify_guilds_with_pkce(world: World) -> None:
    async with world.browser() as client:
        start = await client.get("/signin/discord")
    location = httpx.URL(start.headers["location"])
    assert str(location).startswith(world.fake.discord_authorize)
    query = location.params
    assert query["scope"] == "identify guilds"
    assert query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43
    assert query["redirect_uri"] == f"{PUBLIC}/signin/discord/callback"
    assert len(query["state"]) >= 40
    assert "client_secret" not in str(location)
    cookie = start.headers["set-cookie"]
    assert "HttpOnly" in cookie and "Path=/signin" in cookie and "SameSite=lax" in cookie


# --- Discord --------------------------------------------------------------------------------


async def test_discord_admins_administer_by_permission_and_by_role_id(world: World) -> None:
    async with world.browser() as client:
        await sign_in(world, client, "discord", "1001")
        home = await client.get("/")
        assert home.status_code == 200
        assert "900 · Discord" in home.text and "902 · Discord" in home.text
        assert "901 · Discord" not in home.text  # a plain member there
        assert "alice" in home.text
        assert (await client.get(f"/w/{world.plain}/settings")).status_code == 404
        saved, _ = await settings_post(client, world.managed, **{"points-easy": "4"})
        assert saved.status_code == 200, saved.text
        assert await easy_points(world.services, world.managed) == "4"
        saved, _ = await settings_post(client, world.by_role, **{"points-easy": "5"})
        assert saved.status_code == 200, saved.text
    # The bot was asked (the admin role at sign-in, and before each write).
    assert ("GET", "/api/v10/guilds/902/members/1001") in world.fake.calls


async def test_a_discord_member_without_admin_rights_sees_and_changes_nothing(
    world: World,
) -> None:
    before = await easy_points(world.services, world.managed)
    async with world.browser() as client:
        await sign_in(world, client, "discord", "1002")
        home = await client.get("/")
        assert home.status_code == 200
        assert "You administer no workspace here" in home.text
        assert "900 · Discord" not in home.text
        for ws in (world.managed, world.plain):
            assert (await client.get(f"/w/{ws}/settings")).status_code == 404
            csrf = csrf_of(home.text)
            refused = await client.post(
                f"/w/{ws}/settings", data={"csrf": csrf, "points-easy": "9"}
            )
            assert refused.status_code == 404
    assert await easy_points(world.services, world.managed) == before


async def test_rights_revoked_after_sign_in_stop_the_next_write(world: World) -> None:
    async with world.browser() as client:
        await sign_in(world, client, "discord", "1001")
        page = await client.get(f"/w/{world.managed}/settings")
        csrf = csrf_of(page.text)
        world.fake.discord_users["1001"].roles["900"] = []  # Manage Server taken away
        refused = await client.post(
            f"/w/{world.managed}/settings", data={"csrf": csrf, "points-easy": "7"}
        )
        assert refused.status_code == 403
        assert "no longer administer" in refused.text
        world.fake.discord_users["1001"].roles["902"] = []  # the admin role too
        page = await client.get(f"/w/{world.by_role}/settings")
        refused = await client.post(
            f"/w/{world.by_role}/settings", data={"csrf": csrf, "points-easy": "7"}
        )
        assert refused.status_code == 403
    assert await easy_points(world.services, world.managed) != "7"
    assert await easy_points(world.services, world.by_role) != "7"


async def test_rights_revoked_after_sign_in_close_the_pages_within_minutes(
    world: World,
) -> None:
    """Reading needs rights too: asked again once the last answer is five minutes old, not
    only at sign-in (a session lasts 12 hours)."""
    async with world.browser() as client:
        await sign_in(world, client, "discord", "1001")
        page = f"/w/{world.managed}/boards"
        assert (await client.get(page)).status_code == 200
        asked = world.fake.calls.count(("GET", "/api/v10/guilds/900/members/1001"))
        world.fake.discord_users["1001"].roles["900"] = []  # Manage Server taken away
        world.ticks[0] += 60
        assert (await client.get(page)).status_code == 200  # a minute later: still the answer
        assert world.fake.calls.count(("GET", "/api/v10/guilds/900/members/1001")) == asked
        world.ticks[0] += 300
        closed = await client.get(page)
        assert closed.status_code == 403
        assert "no longer administer" in closed.text
        home = await client.get("/")
        assert "900 · Discord" not in home.text  # not listed any more
        assert "902 · Discord" in home.text  # the other server still is


async def test_a_bad_state_is_refused_and_signs_no_one_in(world: World) -> None:
    world.fake.signed_in = "1001"
    async with world.browser() as client:
        back = httpx.URL(await to_provider(client, "discord"))
        forged = back.copy_set_param("state", "forged-" + back.params["state"])
        refused = await client.get(str(forged))
        assert refused.status_code == 400
        assert "did not start in this browser" in refused.text
        assert COOKIE not in refused.headers.get("set-cookie", "")
        assert (await client.get("/")).status_code == 401
    # A callback in a browser that never started a sign-in (login CSRF) is refused too.
    async with world.browser() as victim:
        refused = await victim.get(str(back))
        assert refused.status_code == 400
        assert (await victim.get("/")).status_code == 401


async def test_a_discord_code_works_once(world: World) -> None:
    world.fake.signed_in = "1001"
    async with world.browser() as first:
        back = httpx.URL(await to_provider(first, "discord"))
        assert (await first.get(str(back))).status_code == 303
    async with world.browser() as second:
        # A fresh sign-in's state, with the code the first one already used.
        fresh = httpx.URL(await to_provider(second, "discord"))
        reused = fresh.copy_set_param("code", back.params["code"])
        refused = await second.get(str(reused))
        assert refused.status_code == 400
        assert "Discord refused this sign-in (invalid_grant)" in refused.text
        assert (await second.get("/")).status_code == 401


# --- Slack ----------------------------------------------------------------------------------


async def test_slack_admins_sign_in_and_write_until_their_rights_go(world: World) -> None:
    async with world.browser() as client:
        await sign_in(world, client, "slack", "U1")
        home = await client.get("/")
        assert "T1 · Slack" in home.text and "carol" in home.text
        saved, csrf = await settings_post(client, world.team, **{"points-easy": "6"})
        assert saved.status_code == 200, saved.text
        assert await easy_points(world.services, world.team) == "6"
        world.fake.slack_users["U1"].admin = False
        refused = await client.post(
            f"/w/{world.team}/settings", data={"csrf": csrf, "points-easy": "8"}
        )
        assert refused.status_code == 403
    assert await easy_points(world.services, world.team) == "6"
    assert ("GET", "/api/users.info") in world.fake.calls
    assert ("GET", "/openid/connect/keys") in world.fake.calls


async def test_a_slack_member_who_is_no_admin_sees_nothing(world: World) -> None:
    async with world.browser() as client:
        await sign_in(world, client, "slack", "U2")
        home = await client.get("/")
        assert "You administer no workspace here" in home.text
        assert (await client.get(f"/w/{world.team}/settings")).status_code == 404


async def test_slack_admin_list_counts(world: World, service: Services) -> None:
    settings = Settings(
        _env_file=None,
        web_public_url=PUBLIC,
        slack_client_id=SLACK_CLIENT[0],
        slack_client_secret=SLACK_CLIENT[1],
        slack_oidc_url=world.fake.base,
        slack_api_url=world.fake.slack_api,
        slack_bot_token=BOT_TOKEN,
        slack_admin_users="U2",
    )
    oauth, rights = web_sign_in(settings)
    assert oauth is not None and oauth.providers == ("slack",)
    app = create_app(service, secret=SECRET, oauth=oauth, rights=rights)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=PUBLIC) as c:
        world.fake.signed_in = "U2"
        done = await c.get(await to_provider(c, "slack"))
        assert done.status_code == 303
        assert "T1 · Slack" in (await c.get("/")).text


async def test_a_wrong_nonce_or_a_forged_signature_is_refused(world: World) -> None:
    world.fake.wrong_nonce = True
    async with world.browser() as client:
        world.fake.signed_in = "U1"
        refused = await client.get(await to_provider(client, "slack"))
        assert refused.status_code == 400
        assert "could not be verified" in refused.text and "nonce" in refused.text
        assert (await client.get("/")).status_code == 401
    world.fake.wrong_nonce = False
    world.fake.foreign_key = True
    async with world.browser() as client:
        refused = await client.get(await to_provider(client, "slack"))
        assert refused.status_code == 400
        assert "could not be verified" in refused.text
        assert (await client.get("/")).status_code == 401


async def test_a_slack_code_works_once(world: World) -> None:
    world.fake.signed_in = "U1"
    async with world.browser() as first:
        back = httpx.URL(await to_provider(first, "slack"))
        assert (await first.get(str(back))).status_code == 303
    async with world.browser() as second:
        fresh = httpx.URL(await to_provider(second, "slack"))
        refused = await second.get(str(fresh.copy_set_param("code", back.params["code"])))
        assert refused.status_code == 400
        assert "Slack refused this sign-in (invalid_code)" in refused.text
        assert (await second.get("/")).status_code == 401


async def test_secrets_are_not_logged(world: World, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("DEBUG")
    async with world.browser() as client:
        await sign_in(world, client, "discord", "1001")
        await sign_in(world, client, "slack", "U1")
    logged = caplog.text
    assert DISCORD_CLIENT[1] not in logged and SLACK_CLIENT[1] not in logged
    assert BOT_TOKEN not in logged


async def test_callbacks_are_rate_limited(world: World) -> None:
    async with world.browser() as client:
        codes = [
            (await client.get(f"/signin/discord/callback?code=x&state=guess{i}")).status_code
            for i in range(11)
        ]
    assert codes[:10] == [400] * 10
    assert codes[10] == 429


def test_the_settings_never_show_the_client_secrets() -> None:
    settings = Settings(
        _env_file=None,
        web_public_url=PUBLIC,
        discord_client_id="1",
        discord_client_secret="very-secret-1",
        slack_client_id="2",
        slack_client_secret="very-secret-2",
    )
    oauth, _ = web_sign_in(settings)
    assert oauth is not None
    shown = f"{oauth!r} {oauth.discord!r} {oauth.slack!r} {settings!r}"
    assert "very-secret" not in shown
