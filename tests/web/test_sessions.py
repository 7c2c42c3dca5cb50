"""Signing in by the one-time link, sessions, signing out, form tokens, headers, the limit."""

from __future__ import annotations

from datetime import timedelta

import httpx

from bot.core.clock import SimulatedClock
from bot.web.app import CONTENT_SECURITY_POLICY
from bot.web.sessions import COOKIE
from tests.web.conftest import ME, Site, channel_id, csrf_of, sign_in


async def test_a_link_signs_in_one_browser_once(site: Site) -> None:
    token = await site.services.web.make_link_token(ME, [site.a])
    async with site.client() as first, site.client() as second:
        page = await first.get(f"/signin?token={token}")
        assert page.status_code == 200
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert page.headers["referrer-policy"] == "no-referrer"
        done = await first.post("/signin", data={"csrf": csrf_of(page.text), "token": token})
        assert done.status_code == 303
        cookie = done.headers["set-cookie"]
        assert f"{COOKIE}=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie
        assert "Secure" not in cookie  # plain http on loopback; https sets it
        assert (await first.get("/")).status_code == 200

        again = await second.get(f"/signin?token={token}")
        # The page says so before any click, and offers no Sign in button for it.
        assert "This sign-in link was used already" in again.text
        assert 'id="sign-in"' not in again.text and "studybot web link" in again.text
        form = await second.get("/signin")  # a form key, as a browser holds one
        used = await second.post("/signin", data={"csrf": csrf_of(form.text), "token": token})
        assert used.status_code == 400
        assert "unknown, already used or expired" in used.text
        assert (await second.get("/")).status_code == 401


async def test_https_cookies_are_secure(site: Site) -> None:
    token = await site.services.web.make_link_token(ME, [site.a])
    async with httpx.AsyncClient(transport=site.app, base_url="https://testserver") as client:
        page = await client.get(f"/signin?token={token}")
        done = await client.post("/signin", data={"csrf": csrf_of(page.text), "token": token})
        assert "Secure" in done.headers["set-cookie"]


async def test_without_a_session_nothing_is_shown(site: Site) -> None:
    async with site.client() as client:
        for path in ("/", f"/w/{site.a}/schedules", f"/w/{site.a}/reports"):
            page = await client.get(path)
            assert page.status_code == 401
            assert "studybot web" in page.text
        # A forged cookie (wrong signature) is no session either.
        client.cookies.set(COOKIE, "made-up.signature")
        assert (await client.get("/")).status_code == 401


async def test_sign_out_revokes_the_session(site: Site, me: tuple[httpx.AsyncClient, str]) -> None:
    client, csrf = me
    stolen = client.cookies.get(COOKIE)
    out = await client.post("/signout", data={"csrf": csrf})
    assert out.status_code == 200
    assert "Signed out" in out.text
    # The old cookie, replayed, is refused: the server ended the session.
    async with site.client() as thief:
        thief.cookies.set(COOKIE, str(stolen))
        assert (await thief.get("/")).status_code == 401


async def test_sessions_and_links_expire(site: Site, clock: SimulatedClock) -> None:
    token = await site.services.web.make_link_token(ME, [site.a])
    clock.advance(timedelta(minutes=16))
    async with site.client() as client:
        page = await client.get(f"/signin?token={token}")
        assert "This sign-in link has expired" in page.text and 'id="sign-in"' not in page.text
        form = await client.get("/signin")
        late = await client.post("/signin", data={"csrf": csrf_of(form.text), "token": token})
        assert late.status_code == 400
    async with site.client() as client:
        await sign_in(site, client, ME, [site.a])
        clock.advance(timedelta(hours=12, seconds=1))
        assert (await client.get("/")).status_code == 401


async def test_a_post_without_its_form_token_changes_nothing(
    site: Site, me: tuple[httpx.AsyncClient, str]
) -> None:
    client, csrf = me
    channel = await channel_id(site, site.a, "general")
    form = {"channel": str(channel), "time": "09:00", "action": "add"}
    for bad in ({}, {"csrf": ""}, {"csrf": csrf[:-1] + ("A" if csrf[-1] != "A" else "B")}):
        refused = await client.post(f"/w/{site.a}/schedules", data={**form, **bad})
        assert refused.status_code == 403
    settings = await client.post(f"/w/{site.a}/settings", data={"points-easy": "9"})
    assert settings.status_code == 403
    out = await client.post("/signout", data={})
    assert out.status_code == 403
    page = await client.get(f"/w/{site.a}/schedules")
    assert "No schedules in #general" in page.text  # nothing was added
    history = await client.get(f"/w/{site.a}/settings")
    assert "No setting has been changed here yet" in history.text
    # The sign-in form needs its token too.
    token = await site.services.web.make_link_token(ME, [site.a])
    async with site.client() as other:
        refused = await other.post("/signin", data={"token": token})
        assert refused.status_code == 403
        page = await other.get(f"/signin?token={token}")
        works = await other.post("/signin", data={"csrf": csrf_of(page.text), "token": token})
        assert works.status_code == 303  # the refused attempt did not use the link up


async def test_sign_in_attempts_are_rate_limited(site: Site) -> None:
    async with site.client() as client:
        page = await client.get("/signin?token=guess")
        assert "not a sign-in link this bot made" in page.text
        csrf = csrf_of((await client.get("/signin")).text)
        codes = [
            (await client.post("/signin", data={"csrf": csrf, "token": f"guess{i}"})).status_code
            for i in range(11)
        ]
        assert codes[:10] == [400] * 10
        assert codes[10] == 429
        token = await site.services.web.make_link_token(ME, [site.a])
        blocked = await client.post("/signin", data={"csrf": csrf, "token": token})
        assert blocked.status_code == 429


async def test_only_loopback_host_names_are_answered_on_loopback(site: Site) -> None:
    from bot.web.app import create_app

    app = create_app(site.services, hosts=("127.0.0.1", "localhost"))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as ok:
        assert (await ok.get("/signin")).status_code == 200
    async with httpx.AsyncClient(transport=transport, base_url="http://rebind.example") as bad:
        assert (await bad.get("/signin")).status_code == 400
