"""The admin page's fixtures: the real app over real services on a SQLite file, two console
workspaces (the console's own, "console", and another, "other"), and a signed-in browser for
each (an httpx client over ASGI keeps cookies as a browser would)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from bot.core.models import ChatContext
from bot.services.bundle import Services
from bot.services.web_access import Person
from bot.web.app import create_app
from bot.web.sessions import SignInLimiter

SECRET = b"test-secret-for-cookies-0123456789"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def console(
    name: str, *, workspace: str = "console", channel: str = "general", admin: bool = False
) -> ChatContext:
    """Someone in the console's chat (as ``/as NAME`` would make them)."""
    return ChatContext(
        platform="console",
        workspace=workspace,
        channel=channel,
        member=name.casefold(),
        member_name=name,
        is_admin=admin,
        channel_name=channel,
        workspace_name=workspace,
        command_prefix="/",
    )


@dataclass
class Site:
    """The app, its services, and the ids of the two workspaces."""

    services: Services
    app: httpx.ASGITransport
    a: int  # the console workspace, administered by "me"
    b: int  # another workspace, administered by "zoe" only

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            transport=self.app, base_url="http://testserver", follow_redirects=False
        )


@pytest.fixture
async def site(service: Services) -> Site:
    a = (await service.places.channel(console("me")))[0].id
    await service.places.channel(console("me", channel="random"))
    b = (await service.places.channel(console("zoe", workspace="other", channel="lab")))[0].id
    app = create_app(service, secret=SECRET, limiter=SignInLimiter(limit=10, per=600))
    return Site(service, httpx.ASGITransport(app=app), a, b)


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page
    return found[1]


async def sign_in(site: Site, client: httpx.AsyncClient, person: Person, ws: list[int]) -> str:
    """Sign ``client`` in with a fresh one-time link; returns the session's form token."""
    token = await site.services.web.make_link_token(person, ws)
    form = await client.get(f"/signin?token={token}")
    assert form.status_code == 200
    done = await client.post("/signin", data={"csrf": csrf_of(form.text), "token": token})
    assert done.status_code == 303, done.text
    home = await client.get("/")
    assert home.status_code == 200
    return csrf_of(home.text)


ME = Person("console", "me", "me")
ZOE = Person("console", "zoe", "zoe")


@pytest.fixture
async def me(site: Site) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    """A browser signed in as the console's admin (workspace A only)."""
    async with site.client() as client:
        yield client, await sign_in(site, client, ME, [site.a])


async def channel_id(site: Site, workspace_id: int, name: str) -> int:
    """The row id of a workspace's channel (the value of the page's channel choice)."""
    workspace = await site.services.places.workspace_by_id(workspace_id)
    channels = await site.services.places.channels_of(workspace)
    return next(c.id for c in channels if c.name == name)
