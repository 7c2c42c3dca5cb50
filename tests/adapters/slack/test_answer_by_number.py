"""Slack's text commands answer an earlier open question by its number (issue 29, friction 2):
the buttons are the usual way, and ``/study answer #ID CHOICE`` does the same."""

from __future__ import annotations

import pytest

from bot.adapters.slack import SlackAdapter
from tests.adapters.slack.test_flows import private_replies, quiz
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery


@pytest.mark.timeout(30)
async def test_slack_answers_an_earlier_question_by_its_number(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        first = await quiz(deliver, slack_fake)
        await quiz(deliver, slack_fake, count=2)
        first_id = int(first.action_ids()[0].split(":")[1])
        ack = await deliver(slack_fake.slash_command(text=f"answer #{first_id} A"))
        assert ack.status == 200
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Correct!" in (reply.text or "") or "Not quite" in (reply.text or "")
        ack = await deliver(slack_fake.slash_command(text="answer"))
        assert ack.payload is not None
        assert "/study answer [#ID] ANSWER" in ack.payload["text"]
        assert await adapter.idle()
