"""Slack payloads: a member or channel id with a control character gets a clear answer (the
core's context refuses it, whatever the adapter), never "something went wrong"."""

from __future__ import annotations

import pytest

from bot.adapters.slack import SlackAdapter
from tests.adapters.slack.test_flows import private_replies
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery

pytestmark = pytest.mark.timeout(30)


async def test_a_channel_id_with_a_control_character_is_refused_in_words(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    slack_fake.add_channel("C0\x07BELL", "bell")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="stats", channel_id="C0\x07BELL"))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "The channel id 'C0\\x07BELL' holds a control character (\\x07 at position 3)" in (
        reply.text or ""
    )
    assert "went wrong" not in (reply.text or "")
