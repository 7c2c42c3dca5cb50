"""The admin page's sign-in links and sessions, on both engines: single use (also when two
browsers race for one link), expiry, revocation, and the workspaces each session may see."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from bot.core.clock import SimulatedClock
from bot.services.bundle import Services
from bot.services.web_access import Person
from tests.helpers import member

ME = Person("test", "id-me", "me")


async def test_a_link_is_used_once_even_by_two_browsers_at_once(service: Services) -> None:
    a = (await service.places.channel(member("me", admin=True)))[0].id
    token = await service.web.make_link_token(ME, [a])
    results = await asyncio.gather(service.web.redeem(token), service.web.redeem(token))
    won = [r for r in results if r is not None]
    assert len(won) == 1
    session_token, session = won[0]
    assert session.person == ME and session.workspaces == frozenset({a})
    assert await service.web.session(session_token) == session
    assert await service.web.redeem(token) is None
    assert await service.web.session(token) is None  # a link is no session


async def test_sessions_expire_and_are_revoked(service: Services, clock: SimulatedClock) -> None:
    late = await service.web.make_link_token(ME, [])
    clock.advance(timedelta(minutes=15, seconds=1))
    assert await service.web.redeem(late) is None

    first = await service.web.redeem(await service.web.make_link_token(ME, []))
    second = await service.web.redeem(await service.web.make_link_token(ME, []))
    assert first is not None and second is not None
    assert first[1].csrf != second[1].csrf  # each session has its own form token
    assert await service.web.sign_out(first[0])
    assert await service.web.session(first[0]) is None
    assert await service.web.session(second[0]) is not None
    assert await service.web.sign_out_everywhere(ME) == 1
    assert await service.web.session(second[0]) is None

    third = await service.web.redeem(await service.web.make_link_token(ME, []))
    assert third is not None
    clock.advance(timedelta(hours=12, seconds=1))
    assert await service.web.session(third[0]) is None


async def test_a_session_sees_only_its_own_workspaces(service: Services) -> None:
    a = (await service.places.channel(member("me", admin=True)))[0].id
    b = (await service.places.channel(member("zoe", workspace="ws2", channel="lab")))[0].id
    redeemed = await service.web.redeem(await service.web.make_link_token(ME, [a]))
    assert redeemed is not None
    session = redeemed[1]
    places = await service.web.places(session)
    assert [p.id for p in places] == [a]
    assert [c.name for c in places[0].channels] == ["general"]
    assert await service.web.place(session, b) is None
    other = Person("console", "id-me", "me")  # the same id on another platform
    foreign = await service.web.redeem(await service.web.make_link_token(other, [a]))
    assert foreign is not None
    assert await service.web.place(foreign[1], a) is None
