"""``/study exam`` on Slack: the real AsyncApp and FakeSlack through the one front door."""

from __future__ import annotations

import pytest

from bot.adapters.slack import SlackAdapter
from tests.adapters.slack.test_flows import private_replies
from tests.adapters.slack.test_rounds import _study
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery

pytestmark = pytest.mark.timeout(30)


async def test_exam_is_set_by_an_admin_and_shown_privately_to_a_member(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _study(deliver, slack_fake, adapter, "exam set 2026-04-01")
        [refused] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Only admins set the exam date" in (refused.text or "")
        ack = await deliver(slack_fake.slash_command(text="exam set", user_id="U0ADMIN"))
        assert ack.payload is not None and "YYYY-MM-DD" in ack.payload["text"]
        await _study(deliver, slack_fake, adapter, "exam set 2026-03-20 --tag leaf", "U0ADMIN")
        await _study(deliver, slack_fake, adapter, "exam")
        replies = await private_replies(slack_fake, "U0ALICE", 2)
        text = (replies[-1].text or "") + str(replies[-1].blocks)
        assert "Exam on Fri 20 Mar 2026, in 16 days (leaf)" in text
        assert "leaf: not studied yet" in text


async def test_an_accommodation_is_set_privately_on_slack(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _study(deliver, slack_fake, adapter, "accommodation")
        [none] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "You have no accommodation here" in (none.text or "")
        await _study(
            deliver, slack_fake, adapter, "accommodation set <@U0ALICE> --time 2", "U0ADMIN"
        )
        [done] = await private_replies(slack_fake, "U0ADMIN", 1)
        assert "x2 time" in (done.text or "")
        await _study(deliver, slack_fake, adapter, "accommodation")
        own = (await private_replies(slack_fake, "U0ALICE", 2))[-1]
        assert "Your accommodation: x2 time" in (own.text or "")
