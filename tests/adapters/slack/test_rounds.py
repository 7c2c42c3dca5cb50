"""``/study round start|stop`` on Slack: the real AsyncApp, FakeSlack, a real service, and the
one timer loop with the app's due sources (what ``studybot run`` starts beside the adapter).

The announcement and the stop board go to the channel through the response_url; the questions
are ``chat.postMessage`` posts with buttons from the timer loop, each revealed at its deadline by
``chat.update`` ("Who got it right"), and the board at the end is a channel post. Refusals are
private.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio

from bot.adapters.slack import SlackAdapter
from bot.app import Built, due_sources, timer_loop
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.scheduler import Scheduler
from bot.services.rounds import READY
from tests.adapters.slack.conftest import SLACK_PACKS
from tests.adapters.slack.test_flows import all_text, private_replies
from tests.conftest import ROUND_PACKS, TEST_PACKS
from tests.fakes.slack_api import FakeMessage, FakeSlack
from tests.fakes.slack_fixtures import Delivery, bolt_delivery

pytestmark = pytest.mark.timeout(30)


@pytest_asyncio.fixture
async def scheduler(
    slack_built: Built, adapter: SlackAdapter, clock: SimulatedClock, tmp_path: Path
) -> AsyncIterator[Scheduler]:
    """The duo pack besides the Slack tests' packs, and the timer loop with the app's due
    sources, the adapter as its gateway (as ``studybot run --platform slack`` builds it)."""
    packs = [*load_packs(TEST_PACKS).packs, *load_packs(SLACK_PACKS).packs]
    await slack_built.services.packs.sync([*packs, *load_packs(ROUND_PACKS).packs])
    loop = timer_loop(slack_built.timed, adapter, clock, timedelta(hours=1), concurrency=1)
    for source in due_sources(slack_built.services, adapter, command_prefix="/study "):
        loop.add_source(source)
    async with loop.running():
        yield loop


async def _study(
    deliver: Delivery, fake: FakeSlack, adapter: SlackAdapter, text: str, user: str = "U0ALICE"
) -> None:
    """``/study TEXT`` as ``user``, acked at once; returns once the adapter has answered."""
    ack = await deliver(fake.slash_command(text=text, user_id=user))
    assert ack.status == 200 and ack.payload is None and ack.latency < 3
    assert await adapter.idle()


def _posts(fake: FakeSlack) -> list[FakeMessage]:
    """What the bot posted itself (``chat.postMessage``), not the replies to its commands."""
    return [fake.message(c.response["ts"]) for c in fake.calls_to("chat.postMessage") if c.ok]


async def test_a_round_posts_questions_reveals_who_got_it_right_and_ends_with_the_board(
    adapter: SlackAdapter, slack_fake: FakeSlack, scheduler: Scheduler, clock: SimulatedClock
) -> None:
    bob = slack_fake.add_user("U0BOB", name="bob")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _study(deliver, slack_fake, adapter, "round start duo --questions 2 --seconds 10")
        announced = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: c.effect == "in_channel"
        )
        assert "A round of 2 questions starts now" in all_text(announced.blocks)
        assert "Started by alice" in all_text(announced.blocks)
        assert "`/study round stop` ends it early" in all_text(announced.blocks)

        await scheduler.advance(clock, clock.now() + READY)  # a moment after the announcement
        [first] = _posts(slack_fake)
        assert "🏁 Question 1 of 2" in all_text(first.blocks)
        post_id = int(first.action_ids()[0].split(":")[1])
        assert first.action_ids() == [f"answer:{post_id}:A", f"answer:{post_id}:B"]
        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=first.ts))
        [right] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Correct" in (right.text or "")
        await deliver(
            slack_fake.block_action(f"answer:{post_id}:B", message_ts=first.ts, user_id=bob.id)
        )
        await private_replies(slack_fake, bob.id, 1)
        assert await adapter.idle()

    await scheduler.advance(clock, clock.now() + timedelta(seconds=11))
    [update] = slack_fake.calls_to("chat.update")
    assert update.args["ts"] == first.ts
    revealed = all_text(slack_fake.message(first.ts).blocks)
    assert "Who got it right" in revealed
    assert "alice +15" in revealed  # 10 points, +50 % for answering at once
    assert "bob" not in revealed.split("Who got it right")[1]
    assert slack_fake.message(first.ts).action_ids() == []

    # The pause, then the second question; nobody answers it.
    await scheduler.advance(clock, clock.now() + timedelta(seconds=6))
    [_, second] = _posts(slack_fake)
    assert "🏁 Question 2 of 2" in all_text(second.blocks)
    await scheduler.advance(clock, clock.now() + timedelta(seconds=15))
    assert len(slack_fake.calls_to("chat.update")) == 2
    assert "Nobody this time." in all_text(slack_fake.message(second.ts).blocks)

    [*_, board] = _posts(slack_fake)
    assert board.ts > second.ts
    text = all_text(board.blocks)
    assert "Round board" in text
    assert "🥇 *alice* — 15 pts · 1/2 right" in text
    assert "2. *bob* — 0 pts · 0/2 right" in text  # no medal for no points; out of the 2 asked
    assert "2 of 2 questions · started by alice" in text
    await slack_fake.wait_for_call("files.completeUploadExternal")
    [png] = [f for f in slack_fake.files.values() if f.filename == "round-board.png"]
    assert png.completed and (png.content or b"").startswith(b"\x89PNG\r\n\x1a\n")


async def test_only_the_starter_or_an_admin_stops_a_round_and_one_runs_at_a_time(
    adapter: SlackAdapter, slack_fake: FakeSlack, scheduler: Scheduler, clock: SimulatedClock
) -> None:
    bob = slack_fake.add_user("U0BOB", name="bob")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _study(deliver, slack_fake, adapter, "round start duo --questions 2")
        await scheduler.advance(clock, clock.now() + READY)

        await _study(deliver, slack_fake, adapter, "round start --difficulty easy", bob.id)
        [twice] = await private_replies(slack_fake, bob.id, 1)
        assert "A round is already running here; `/study round stop` ends it" in (twice.text or "")

        await _study(deliver, slack_fake, adapter, "round stop", bob.id)
        refused = (await private_replies(slack_fake, bob.id, 2))[-1]
        assert "Only whoever started the round, or an admin, can stop it." in (refused.text or "")

        await _study(deliver, slack_fake, adapter, "round stop", "U0ADMIN")
        # The board is posted in the channel as the bot, with its picture uploaded beside it.
        await slack_fake.wait_for_call("chat.postMessage", count=2)
        await slack_fake.wait_for_call("files.completeUploadExternal")
        board = _posts(slack_fake)[-1]
        text = all_text(board.blocks)
        assert "Round board" in text and "Nobody answered this round." in text
        assert "Stopped by ada after 1 of 2 questions." in text
        assert slack_fake.ephemerals_for("U0ADMIN") == []

        # Nothing more comes from the stopped round, however long the clock runs.
        await scheduler.advance(clock, clock.now() + timedelta(minutes=5))
        assert len(slack_fake.calls_to("chat.postMessage")) == 2

        await _study(deliver, slack_fake, adapter, "round stop")
        [nothing] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "No round is running here." in (nothing.text or "")


async def test_a_bad_round_line_is_answered_in_the_ack(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="round start --questions many"))
        assert ack.payload is not None and ack.payload["response_type"] == "ephemeral"
        assert "--questions takes a whole number, not `many`" in ack.payload["text"]
        ack = await deliver(slack_fake.slash_command(text="round pause"))
        assert ack.payload is not None
        assert "`pause` is not a round action" in ack.payload["text"]
    assert slack_fake.calls_to("chat.postMessage") == []


async def test_an_accuracy_round_and_a_skip_vote_on_slack(
    adapter: SlackAdapter, slack_fake: FakeSlack, scheduler: Scheduler, clock: SimulatedClock
) -> None:
    bob = slack_fake.add_user("U0BOB", name="bob")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _study(
            deliver, slack_fake, adapter, "round start duo --questions 2 --seconds 10 "
            "--scoring accuracy",
        )  # fmt: skip
        announced = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: c.effect == "in_channel"
        )
        assert "Accuracy first" in all_text(announced.blocks)
        assert "`/study round skip`" in all_text(announced.blocks)
        await scheduler.advance(clock, clock.now() + READY)
        [first] = _posts(slack_fake)
        post_id = int(first.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=first.ts))
        await deliver(
            slack_fake.block_action(f"answer:{post_id}:B", message_ts=first.ts, user_id=bob.id)
        )
        assert await adapter.idle()
        await scheduler.advance(clock, clock.now() + timedelta(seconds=11))
        assert "alice +10" in all_text(slack_fake.message(first.ts).blocks)  # no speed bonus
        await scheduler.advance(clock, clock.now() + timedelta(seconds=6))
        [_, second] = _posts(slack_fake)

        await _study(deliver, slack_fake, adapter, "round skip", "U0ADMIN")
        [outsider] = await private_replies(slack_fake, "U0ADMIN", 1)
        assert "Only players vote to skip" in (outsider.text or "")
        await _study(deliver, slack_fake, adapter, "round skip")
        votes = await private_replies(slack_fake, "U0ALICE", 2)
        assert "1 of the 2 needed" in (votes[-1].text or "")
        await _study(deliver, slack_fake, adapter, "round skip", bob.id)
        skipped = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: c.effect == "in_channel" and "skipped" in all_text(c.blocks)
        )
        assert "Question 2 is skipped" in all_text(skipped.blocks)
    await scheduler.advance(clock, clock.now() + timedelta(seconds=1))
    assert "scores nothing" in all_text(slack_fake.message(second.ts).blocks)
    assert slack_fake.message(second.ts).action_ids() == []


async def test_a_team_round_on_slack_ends_with_the_team_board(
    adapter: SlackAdapter, slack_fake: FakeSlack, scheduler: Scheduler, clock: SimulatedClock
) -> None:
    bob = slack_fake.add_user("U0BOB", name="bob")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _study(
            deliver, slack_fake, adapter, "round start duo --questions 1 --seconds 10 --teams 2"
        )
        await scheduler.advance(clock, clock.now() + READY)
        [first] = _posts(slack_fake)
        post_id = int(first.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=first.ts))
        await deliver(
            slack_fake.block_action(f"answer:{post_id}:B", message_ts=first.ts, user_id=bob.id)
        )
        assert await adapter.idle()
    await scheduler.advance(clock, clock.now() + timedelta(seconds=12))
    [*_, board] = _posts(slack_fake)
    text = all_text(board.blocks)
    assert "🥇 *🔴 Red* — 15.0 pts a player · 1 player · 1/1 right" in text
    assert "🥈 *🔵 Blue* — 0.0 pts a player · 1 player · 0/1 right" in text
    await slack_fake.wait_for_call("files.completeUploadExternal")
    names = {f.filename for f in slack_fake.files.values()}
    assert {"team-board.png", "round-board.png"} <= names


async def test_teams_from_user_groups_on_slack(
    adapter: SlackAdapter, slack_fake: FakeSlack, scheduler: Scheduler, clock: SimulatedClock
) -> None:
    """`--teams` takes user groups as Slack escapes them (`<!subteam^ID|@handle>`) or by
    handle; each player's team is the group they are in, and someone in neither is refused."""
    bob = slack_fake.add_user("U0BOB", name="bob")
    dora = slack_fake.add_user("U0DORA", name="dora")
    slack_fake.add_usergroup("S0RED", ["U0ALICE"], handle="red")
    slack_fake.add_usergroup("S0BLUE", [bob.id], handle="blue")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _study(deliver, slack_fake, adapter, "round start duo --teams @red,@green")
        unknown = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: "no role" in all_text(c.blocks) + str(c.text)
        )
        assert "There is no role `@green` here" in all_text(unknown.blocks) + str(unknown.text)
        await _study(
            deliver,
            slack_fake,
            adapter,
            "round start duo --questions 1 --seconds 10 --teams <!subteam^S0RED|@red>,@blue",
        )
        await scheduler.advance(clock, clock.now() + READY)
        [first] = _posts(slack_fake)
        post_id = int(first.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=first.ts))
        await deliver(
            slack_fake.block_action(f"answer:{post_id}:A", message_ts=first.ts, user_id=bob.id)
        )
        await deliver(
            slack_fake.block_action(f"answer:{post_id}:A", message_ts=first.ts, user_id=dora.id)
        )
        refused = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: "hold none of them" in all_text(c.blocks) + str(c.text)
        )
        assert "(@red or @blue)" in all_text(refused.blocks) + str(refused.text)
        assert await adapter.idle()
    await scheduler.advance(clock, clock.now() + timedelta(seconds=12))
    assert "dora" not in all_text(slack_fake.message(first.ts).blocks)
    [*_, board] = _posts(slack_fake)
    text = all_text(board.blocks)
    assert "*🔴 @red* — 15.0 pts a player · 1 player · 1/1 right" in text
    assert "*🔵 @blue* — 15.0 pts a player · 1 player · 1/1 right" in text
