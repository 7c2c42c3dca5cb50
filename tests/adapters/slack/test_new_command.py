"""A command made up in the test answers on Slack through the one front door: slack-bolt over
loopback to the fake, no adapter file touched (tests/adapters/test_dispatch.py)."""

from __future__ import annotations

import json

import pytest

from bot.adapters.slack import SlackAdapter
from bot.services.bundle import Services
from tests.adapters.slack.conftest import slack_settings
from tests.adapters.slack.test_flows import private_replies
from tests.adapters.test_dispatch import new_commands
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery

pytestmark = pytest.mark.timeout(60)

__all__ = ["new_commands"]  # the fixture, used by name


async def test_slack_answers_a_new_command_with_no_adapter_edit(
    new_commands: None, slack_fake: FakeSlack, slack_service: Services
) -> None:
    adapter = SlackAdapter(slack_service, slack_settings(slack_fake))
    async with bolt_delivery("http", adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="echo hello  there"))
        assert ack.status == 200 and ack.payload is None
        (echoed,) = await private_replies(slack_fake, "U0ALICE", 1)
        assert echoed.text == "alice said: hello there"
        await deliver(slack_fake.slash_command(text="shout --times 3 go"))
        shout = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: c.effect == "in_channel"
        )
        assert shout.text == "GO / GO / GO"
        refused = await deliver(slack_fake.slash_command(text="echo"))
        assert "usage: /study echo WORDS: WORDS is missing" in json.dumps(refused.payload)
    assert await adapter.idle(5)
