"""``/study schedule …`` on Slack: admins from users.info or configuration; replies are private."""

from __future__ import annotations

import pytest

from bot.adapters.slack import SlackAdapter
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from tests.adapters.slack.conftest import slack_settings
from tests.adapters.slack.test_flows import all_text, private_replies
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import DELIVERY_MODES, DeliveryMode, bolt_delivery

pytestmark = pytest.mark.timeout(30)

ADD = "schedule add 09:00 Europe/Berlin weekdays --pack slack-mc"


async def schedules(timed: SchedulerParts) -> int:
    return int(await timed.db.fetchval("SELECT count(*) FROM schedules"))


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_a_member_is_refused_schedule_add(
    mode: DeliveryMode,
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text=ADD, user_id="U0ALICE"))
        assert ack.status == 200 and ack.payload is None and ack.latency < 3
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert (reply.text or "").startswith("Only admins can change schedules")
    assert await schedules(slack_timed) == 0
    [lookup] = slack_fake.calls_to("users.info")
    assert lookup.args["user"] == "U0ALICE"


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_a_workspace_admin_adds_lists_and_posts_now(
    mode: DeliveryMode,
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text=ADD, user_id="U0ADMIN"))
        [added] = await private_replies(slack_fake, "U0ADMIN", 1)
        assert "✅ Schedule #1 added" in (added.text or "")
        assert "*#1*" in all_text(added.blocks)  # **bold** became Slack bold

        # everyone may list
        await deliver(slack_fake.slash_command(text="schedule list", user_id="U0ALICE"))
        [listed] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "#1" in (listed.text or "") and "Europe/Berlin" in (listed.text or "")

        await deliver(slack_fake.slash_command(text="schedule now 1", user_id="U0ADMIN"))
        post = await slack_fake.wait_for_call("chat.postMessage")
        await private_replies(slack_fake, "U0ADMIN", 2)
    assert await schedules(slack_timed) == 1
    message = slack_fake.message(post.response["ts"])
    assert message.channel == "C0STUDY" and message.action_ids()
    assert "Which call detaches a tensor" in message.text


async def test_schedule_now_pings_the_user_group_it_names(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    # Slack sends "@study-group" typed in a slash command as <!subteam^ID|@study-group>.
    add = f"{ADD} --mention <!subteam^S0GRP|@study-group>"
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text=add, user_id="U0ADMIN"))
        [added] = await private_replies(slack_fake, "U0ADMIN", 1)
        assert "added" in (added.text or ""), added.text
        await deliver(slack_fake.slash_command(text="schedule now 1", user_id="U0ADMIN"))
        post = await slack_fake.wait_for_call("chat.postMessage")
    assert post.args["text"].startswith("<!subteam^S0GRP> ")
    assert post.args["blocks"][0]["text"]["text"] == "<!subteam^S0GRP>"


async def test_mass_mentions_are_refused(adapter: SlackAdapter, slack_fake: FakeSlack) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text=f"{ADD} --mention <!here>", user_id="U0ADMIN"))
        [reply] = await private_replies(slack_fake, "U0ADMIN", 1)
    assert "pings everyone" in (reply.text or "")


@pytest.mark.parametrize(
    "settings",
    [{"slack_admin_users": "U0CARL,U0DORA"}, {"slack_admin_usergroup": "S0STUDYADM"}],
    ids=["admin-user-ids", "admin-usergroup"],
)
async def test_configured_admins_may_add_schedules(
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
    settings: dict[str, str],
) -> None:
    slack_fake.add_user("U0DORA", name="dora")
    slack_fake.add_usergroup("S0STUDYADM", ["U0DORA"])
    adapter = SlackAdapter(slack_service, slack_settings(slack_fake, **settings))
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text=ADD, user_id="U0DORA"))
        [reply] = await private_replies(slack_fake, "U0DORA", 1)
    assert await adapter.idle()
    assert "added" in (reply.text or ""), reply.text
    assert await schedules(slack_timed) == 1


async def test_schedule_mistakes_are_explained_privately(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        # Each reply is sent after its ack, so two commands' replies may arrive in either
        # order: wait for the first before sending the second.
        await deliver(slack_fake.slash_command(text="schedule add 25:00", user_id="U0ADMIN"))
        [bad_time] = await private_replies(slack_fake, "U0ADMIN", 1)
        await deliver(slack_fake.slash_command(text="schedule paus 1", user_id="U0ADMIN"))
        bad_verb = (await private_replies(slack_fake, "U0ADMIN", 2))[1]
        ack = await deliver(slack_fake.slash_command(text="schedule", user_id="U0ADMIN"))
    assert "example:" in (bad_time.text or "")
    assert "Did you mean `schedule pause`?" in (bad_verb.text or "")
    assert ack.payload is not None and "say what to do with schedule" in ack.payload["text"]
