"""Who is an admin on Slack: users.info flags, configured ids, a user group; cached briefly."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from bot.adapters.slack.identity import SlackDirectory
from tests.fakes.slack_api import FakeSlack


class Ticker:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def client(fake: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token=fake.bot_token, base_url=fake.api_url)


async def test_workspace_admins_and_owners_are_admins(slack_fake: FakeSlack) -> None:
    slack_fake.add_user("U0OWNER", name="olga", is_owner=True)
    directory = SlackDirectory(client(slack_fake))
    assert (await directory.member("U0ADMIN")).is_admin
    assert (await directory.member("U0OWNER")).is_admin
    alice = await directory.member("U0ALICE")
    assert not alice.is_admin and alice.name == "alice"
    assert slack_fake.calls_to("usergroups.users.list") == []


async def test_configured_admin_ids_and_user_group(slack_fake: FakeSlack) -> None:
    slack_fake.add_user("U0CARL", name="carl")
    slack_fake.add_user("U0DORA", name="dora")
    slack_fake.add_usergroup("S0STUDYADM", ["U0DORA"])
    directory = SlackDirectory(
        client(slack_fake), admin_users=("U0CARL",), admin_usergroup="S0STUDYADM"
    )
    assert (await directory.member("U0CARL")).is_admin
    assert (await directory.member("U0DORA")).is_admin
    assert not (await directory.member("U0ALICE")).is_admin
    assert len(slack_fake.calls_to("usergroups.users.list")) == 1  # cached between members


async def test_answers_are_cached_for_the_ttl(slack_fake: FakeSlack) -> None:
    ticker = Ticker()
    slack_fake.add_usergroup("S0STUDYADM", ["U0ALICE"])
    directory = SlackDirectory(client(slack_fake), admin_usergroup="S0STUDYADM", ttl=60, now=ticker)
    assert (await directory.member("U0ALICE")).is_admin
    ticker.t = 59
    slack_fake.add_usergroup("S0STUDYADM", [])  # removed from the group
    assert (await directory.member("U0ALICE")).is_admin
    assert len(slack_fake.calls_to("users.info")) == 1
    ticker.t = 61
    assert not (await directory.member("U0ALICE")).is_admin
    assert len(slack_fake.calls_to("users.info")) == 2


async def test_failed_lookups_fall_back_and_fail_closed(slack_fake: FakeSlack) -> None:
    slack_fake.fail("users.info", "internal_error")
    slack_fake.fail("usergroups.users.list", "no_such_subteam")
    directory = SlackDirectory(client(slack_fake), admin_usergroup="S0GONE")
    member = await directory.member("U0ADMIN", "ada-from-payload")
    assert member.name == "ada-from-payload" and not member.is_admin
    # not cached: the next request asks again and gets the real answer
    assert (await directory.member("U0ADMIN")).is_admin


async def test_a_burst_of_clicks_costs_one_lookup_per_member(slack_fake: FakeSlack) -> None:
    import asyncio

    slack_fake.add_usergroup("S0STUDYADM", ["U0ADMIN"])
    directory = SlackDirectory(client(slack_fake), admin_usergroup="S0STUDYADM")
    members = await asyncio.gather(*(directory.member("U0ALICE") for _ in range(50)))
    assert {m.name for m in members} == {"alice"}
    assert len(slack_fake.calls_to("users.info")) == 1
    assert len(slack_fake.calls_to("usergroups.users.list")) == 1
