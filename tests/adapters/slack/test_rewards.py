"""Role rewards on Slack: a user group given at a streak and taken back when it lapses, through
``usergroups.users.update`` (the bot never touches the group's other members)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.adapters.slack import SlackAdapter
from bot.core.clock import SimulatedClock
from bot.core.models import ChatContext
from bot.services.bundle import Services
from tests.adapters.slack.conftest import slack_settings
from tests.adapters.slack.test_flows import private_replies, quiz
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery

pytestmark = pytest.mark.timeout(30)
ADMIN = "U0ADMIN"


async def test_a_user_group_is_given_at_a_streak_and_taken_back_when_it_lapses(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    clock: SimulatedClock,
) -> None:
    slack_fake.add_usergroup("S0REG", [ADMIN], handle="regulars")
    rewards = slack_service.rewards.due_source(adapter)  # the one loop's source, run by hand
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        add = "rewards add streak 1 <!subteam^S0REG|@regulars>"
        await deliver(slack_fake.slash_command(text=add, user_id=ADMIN))
        [added] = await private_replies(slack_fake, ADMIN, 1)
        assert "Reward #1: @regulars for 1 streak day or more" in (added.text or "")
        await deliver(slack_fake.slash_command(text="rewards add points 5 @nosuch", user_id=ADMIN))
        unknown = (await private_replies(slack_fake, ADMIN, 2))[-1]
        assert "There is no user group `@nosuch` in this workspace" in (unknown.text or "")

        post = await quiz(deliver, slack_fake)
        post_id = int(post.action_ids()[0].split(":")[1])
        await deliver(slack_fake.slash_command(text=f"answer #{post_id} A"))
        await private_replies(slack_fake, "U0ALICE", 1)
        await adapter.idle()
        await rewards.run_due(clock.now())
        assert slack_fake.usergroups["S0REG"] == [ADMIN, "U0ALICE"]
        earned = [m for m in slack_fake.messages if "alice earned @regulars" in str(m.text)]
        assert len(earned) == 1

        await rewards.run_due(clock.now())  # nothing changed: said once
        clock.advance(timedelta(days=2))  # a whole day missed: the streak lapsed
        await rewards.run_due(clock.now())
        assert slack_fake.usergroups["S0REG"] == [ADMIN]  # ada, given by hand, keeps it
        lost = [m for m in slack_fake.messages if "alice no longer holds @regulars" in str(m.text)]
        assert len(lost) == 1
        updates = [c for c in slack_fake.calls if c.method == "usergroups.users.update"]
        assert len(updates) == 2
        assert await adapter.idle()


async def test_the_bots_admin_user_group_cannot_be_a_reward(
    slack_fake: FakeSlack, slack_service: Services
) -> None:
    """SLACK_ADMIN_USERGROUP makes its members admins of the bot: as a reward, answering one
    question would make anyone an admin."""
    slack_fake.add_usergroup("S0ADM", [ADMIN], handle="study-admins")
    settings = slack_settings(slack_fake, slack_admin_usergroup="S0ADM")
    adapter = SlackAdapter(slack_service, settings)
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        add = "rewards add points 1 <!subteam^S0ADM|@study-admins>"
        await deliver(slack_fake.slash_command(text=add, user_id=ADMIN))
        [refused] = await private_replies(slack_fake, ADMIN, 1)
    assert "The role @study-admins is an admin role of this bot" in (refused.text or "")
    assert "The reward was not added" in (refused.text or "")
    assert await adapter.idle()
    here = ChatContext("slack", "T0STUDY", "C0STUDY", ADMIN, "ada", is_admin=True)
    assert await slack_service.rewards.rewards(here) == []
