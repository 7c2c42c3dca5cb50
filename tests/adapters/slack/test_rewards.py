"""Role rewards on Slack: a user group given at a streak and taken back when it lapses, through
``usergroups.users.update`` (the bot never touches the group's other members)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.adapters.slack import SlackAdapter
from bot.core.clock import SimulatedClock
from bot.core.models import ChatContext
from bot.core.rewards import Metric
from bot.doctor import Status, rewards_checks
from bot.services.bundle import Services
from bot.storage.database import open_database
from bot.storage.directory import Directory
from bot.storage.rewards import RewardStore
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


async def test_doctor_names_a_reward_whose_user_group_became_the_admin_group(
    slack_fake: FakeSlack, tmp_path: Path
) -> None:
    slack_fake.add_usergroup("S0REG", [ADMIN], handle="regulars")
    slack_fake.add_usergroup("S0ADM", [ADMIN], handle="study-admins")
    path = tmp_path / "doctor.sqlite3"
    db = await open_database(path)
    try:
        now = datetime(2026, 3, 4, 9, tzinfo=UTC)
        workspace = await Directory(db, "UTC").workspace("slack", "T0STUDY", None, now)
        for group, name in (("S0REG", "@regulars"), ("S0ADM", "@study-admins")):
            await RewardStore(db).add(
                workspace.id, Metric.POINTS, 10, group, name, channel="C0STUDY", by=ADMIN, now=now
            )
    finally:
        await db.close()
    settings = slack_settings(
        slack_fake, slack_admin_usergroup="S0ADM", platform="slack", db_path=path
    )
    [check] = await rewards_checks(settings)
    assert check.status is Status.FAIL
    assert check.detail.startswith("reward #2 (@study-admins, workspace T0STUDY): the role ")
    assert "@study-admins is an admin role of this bot" in check.detail
