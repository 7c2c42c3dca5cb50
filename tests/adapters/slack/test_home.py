"""Slack's App Home: a member sees their streak and freezes, rank, cards due with a Review
button, and today's open questions; an admin also sees the schedules, the open reports and
the suggestions waiting. Tested through the fake's ``app_home_opened`` and ``views.publish``."""

from __future__ import annotations

from datetime import timedelta

from bot.adapters.slack import SlackAdapter
from bot.core.clock import SimulatedClock
from bot.questions.written import parse_console_form
from bot.services.bundle import Services
from tests.adapters.slack.test_flows import all_text, private_replies, quiz
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery
from tests.helpers import member


async def test_home_tab_for_a_member_and_for_an_admin(
    adapter: SlackAdapter, slack_fake: FakeSlack, slack_service: Services, clock: SimulatedClock
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:B", message_ts=msg.ts))
        await private_replies(slack_fake, "U0ALICE", 1)
        await deliver(slack_fake.slash_command(text="report wrong: the answer is B"))
        await deliver(
            slack_fake.slash_command(text="schedule add 09:00 UTC weekdays", user_id="U0ADMIN")
        )
        await slack_fake.wait_for(
            lambda: len(slack_fake.ephemerals_for("U0ADMIN")) >= 1 or None,
            timeout=5,
            what="the schedule's reply",
        )
        alice = member("alice")
        ctx = alice.__class__(
            "slack", "T0STUDY", "C0STUDY", "U0ALICE", "alice", channel_name="study"
        )
        written = parse_console_form("What is 1 + 1? | *2 | 3", difficulty="easy", tags=())
        await slack_service.suggestions.write(ctx, written)
        clock.advance(timedelta(minutes=10))  # the wrong answer's card is due again

        await deliver(slack_fake.app_home_opened("U0ALICE"))
        await slack_fake.wait_for_call("views.publish")
        mine = slack_fake.home_views["U0ALICE"]
        text = all_text(mine.blocks)
        assert "Streak" in text and "freezes held: 0" in text and "rank" in text
        assert "1 card due" in text
        assert f"#{post_id}" in text and "Open today" in text
        assert "Open reports" not in text and "Suggestions waiting" not in text
        actions = [
            e["action_id"] for b in mine.blocks if b["type"] == "actions" for e in b["elements"]
        ]
        assert actions == ["review:0:more-0-0"]

        await deliver(slack_fake.block_action("review:0:more-0-0", view_id=mine.id))
        card = await slack_fake.wait_for_call("chat.postMessage", count=2)
        assert card.args["channel"] == "U0ALICE"  # no channel on a home tab: a DM
        assert "Which call detaches" in str(card.args.get("text"))

        await deliver(slack_fake.app_home_opened("U0ADMIN"))
        await slack_fake.wait_for_call("views.publish", count=2)
        admin = all_text(slack_fake.home_views["U0ADMIN"].blocks)
        assert "Schedules (1)" in admin and "next:" in admin
        assert "Open reports (1)" in admin and "the answer is B" in admin
        assert "Suggestions waiting (1)" in admin and "What is 1 + 1?" in admin
        assert "Admin web page" not in admin  # no WEB_PUBLIC_URL here
    adapter.web_url = "https://study.example.org"
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.app_home_opened("U0ADMIN"))
        await slack_fake.wait_for_call("views.publish", count=3)
    linked = all_text(slack_fake.home_views["U0ADMIN"].blocks)
    assert "Admin web page" in linked and "https://study.example.org" in linked
