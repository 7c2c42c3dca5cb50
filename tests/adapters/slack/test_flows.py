"""The Slack adapter end to end: the real AsyncApp, FakeSlack, a real service and SQLite file.

Main flows run in all three delivery modes (signed in-process ``async_dispatch``, the app's
own web server over a real socket, Socket Mode through the fake's websocket with acks checked).
"""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import pytest

from bot.adapters.slack import SlackAdapter
from bot.core.clock import SimulatedClock
from bot.core.errors import APOLOGY
from bot.core.messages import Message
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from tests.fakes.slack_api import FakeEphemeral, FakeMessage, FakeSlack
from tests.fakes.slack_fixtures import (
    DELIVERY_MODES,
    Delivery,
    DeliveryMode,
    bolt_delivery,
    dispatch_signed,
    post_signed,
    serve_bolt_app,
)

pytestmark = pytest.mark.timeout(30)


async def private_replies(fake: FakeSlack, user: str, count: int) -> list[FakeEphemeral]:
    """Wait until ``user`` has seen ``count`` private messages; return them all."""
    return await fake.wait_for(
        lambda: fake.ephemerals_for(user) if len(fake.ephemerals_for(user)) >= count else None,
        timeout=5,
        what=f"{count} private message(s) for {user}",
    )


async def quiz(
    deliver: Delivery, fake: FakeSlack, pack: str = "slack-mc", *, count: int = 1
) -> FakeMessage:
    ack = await deliver(fake.slash_command(text=f"quiz {pack}"))
    assert ack.status == 200 and ack.payload is None and ack.latency < 3
    call = await fake.wait_for_call("chat.postMessage", count=count)
    assert call.ok, call.response
    return fake.message(call.response["ts"])


def all_text(blocks: list[dict[str, Any]]) -> str:
    """Every text in a message's blocks, joined (headers, sections, context, buttons)."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                out.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(blocks)
    return "\n".join(out)


# --- questions, clicks, reveal ------------------------------------------------------------------


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_quiz_posts_buttons_and_a_click_is_recorded_once_privately(
    mode: DeliveryMode,
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        assert msg.channel == "C0STUDY"
        post_id = int(msg.action_ids()[0].split(":")[1])
        assert msg.action_ids() == [f"answer:{post_id}:{c}" for c in "ABC"]
        assert "Which call detaches a tensor" in msg.text  # the plain-text fallback
        assert await adapter.idle()
        post = await slack_timed.posts.get(post_id)
        assert post is not None and post.platform_message_id == msg.ts

        click = slack_fake.block_action(f"answer:{post_id}:A", message_ts=msg.ts)
        ack = await deliver(click)
        assert ack.status == 200 and ack.latency < 3
        first = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Correct" in (first[0].text or "")

        await deliver(slack_fake.block_action(f"answer:{post_id}:B", message_ts=msg.ts))
        both = await private_replies(slack_fake, "U0ALICE", 2)
        assert "already answered" in (both[1].text or "")

    assert all(e.via == "response_url" for e in both)
    assert await slack_timed.db.fetchval("SELECT count(*) FROM answers") == 1
    assert slack_fake.calls_to("chat.update") == []  # the question itself is untouched
    assert not slack_fake.message(msg.ts).history


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_an_acknowledged_click_is_already_stored(
    mode: DeliveryMode,
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Slack does not resend a request it got a 200 for, so a process that dies just after
    the ack must not lose the answer: it is stored before the ack goes out, even when the
    database is busy for a moment."""
    monkeypatch.setattr("bot.adapters.slack.adapter.ACK_BUDGET", 30.0)  # order, not the budget
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        assert await adapter.idle()

        async def busy_database() -> None:
            async with slack_timed.db.write():
                await asyncio.sleep(0.3)

        for n in range(3):
            user = slack_fake.add_user(f"U0FAST{n}", name=f"fast{n}")
            busy = asyncio.create_task(busy_database())
            await asyncio.sleep(0.02)
            click = slack_fake.block_action(
                f"answer:{post_id}:A", message_ts=msg.ts, user_id=user.id
            )
            ack = await deliver(click)
            assert ack.status == 200
            # no waiting for the adapter: the 200 alone promises the row
            stored = await slack_timed.db.fetchval("SELECT count(*) FROM answers")
            assert stored == n + 1
            await busy
        await private_replies(slack_fake, "U0FAST2", 1)


async def test_a_slow_database_still_gets_the_click_acked_in_time(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Storing first must not cost the member Slack's error: past the budget, the ack goes out
    and the answer and its reply follow."""
    monkeypatch.setattr("bot.adapters.slack.adapter.ACK_BUDGET", 0.2)
    async with bolt_delivery("http", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        assert await adapter.idle()
        release = asyncio.Event()

        async def hold_the_database() -> None:
            async with slack_timed.db.write():
                await release.wait()

        holder = asyncio.create_task(hold_the_database())
        await asyncio.sleep(0.05)
        ack = await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=msg.ts))
        assert ack.status == 200 and ack.latency < 3  # the database is still held
        assert await slack_timed.db.fetchval("SELECT count(*) FROM answers") == 0
        release.set()
        await holder
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Correct" in (reply.text or "")
    assert await slack_timed.db.fetchval("SELECT count(*) FROM answers") == 1


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_hints_answer_privately_and_chain_from_the_private_reply(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake, "slack-practice")
        hint = next(a for a in msg.action_ids() if a.startswith("hint:"))
        await deliver(slack_fake.block_action(hint, message_ts=msg.ts))
        [first] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Hint 1 of 2" in (first.text or "")
        assert "Differentiate, then substitute." in (first.text or "")
        [another] = [
            e["action_id"] for b in first.blocks for e in b.get("elements", []) if "action_id" in e
        ]
        # a click on a button inside the ephemeral reply itself
        await deliver(slack_fake.block_action(another, message_ts=first.ts, channel_id="C0STUDY"))
        second = (await private_replies(slack_fake, "U0ALICE", 2))[1]
        assert "Hint 2 of 2" in (second.text or "")


async def test_reveal_updates_the_post_with_answer_breakdown_and_solution(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake, "slack-practice")
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=msg.ts))
        bob = slack_fake.add_user("U0BOB", name="bob")
        await deliver(
            slack_fake.block_action(f"answer:{post_id}:B", message_ts=msg.ts, user_id=bob.id)
        )
        await private_replies(slack_fake, "U0BOB", 1)

    edit = await slack_service.quiz.reveal(None, post_id)  # what the scheduler does at close
    await slack_service.quiz.apply_edit(edit, adapter)
    update = await slack_fake.wait_for_call("chat.update")
    assert update.ok, update.response
    assert update.args["channel"] == "C0STUDY" and update.args["ts"] == msg.ts
    revealed = slack_fake.message(msg.ts)
    text = all_text(revealed.blocks)
    assert "closed" in text
    assert "✅ *A.* 2 — 1 (50%)" in text  # the answer and the breakdown
    assert "▫️ *B.* 10 — 1 (50%)" in text
    assert "*Solution*" in text and "d(2x)/dx = 2" in text
    assert "*Common mistakes*" in text and "Substituting x before differentiating" in text
    # No answer buttons once closed; "Try it" opens the snippet in the /run modal (issue 31).
    assert revealed.action_ids() == [f"try:{post_id}:code"]
    assert len(revealed.history) == 1


async def test_a_deleted_post_is_posted_again_at_reveal(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
    slack_fake.message(msg.ts).deleted = True
    post_id = int(msg.action_ids()[0].split(":")[1])
    await slack_service.quiz.apply_edit(await slack_service.quiz.reveal(None, post_id), adapter)
    again = await slack_fake.wait_for_call("chat.postMessage", count=2)
    assert "closed" in all_text(slack_fake.message(again.response["ts"]).blocks)


# --- the other subcommands ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_bad_subcommands_get_usage_help_in_the_ack(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="frobnicate now"))
        assert ack.status == 200 and ack.latency < 3
        assert ack.payload is not None
        assert ack.payload["response_type"] == "ephemeral"
        assert "`frobnicate` is not a /study command." in ack.payload["text"]
        assert (
            "/study quiz [PACK] [--difficulty easy|medium|hard] [--tag TAG]" in ack.payload["text"]
        )
        ack = await deliver(slack_fake.slash_command(text="pack"))
        assert ack.payload is not None and "/study pack list" in ack.payload["text"]
        ack = await deliver(slack_fake.slash_command(text="quiz one two"))
        assert ack.payload is not None and "too many words" in ack.payload["text"]
        assert "usage: /study quiz [PACK] [--difficulty" in ack.payload["text"]
    assert slack_fake.calls_to("chat.postMessage") == []


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_leaderboard_stats_help_and_pack_list(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=msg.ts))
        await private_replies(slack_fake, "U0ALICE", 1)

        await deliver(slack_fake.slash_command(text="leaderboard week"))
        board = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: c.effect == "in_channel"
        )
        assert "Leaderboard" in (board.text or "") and "🥇 alice — 10 pts" in (board.text or "")

        await deliver(slack_fake.slash_command(text="stats"))
        stats = (await private_replies(slack_fake, "U0ALICE", 2))[-1]
        assert "Your stats" in (stats.text or "") and "Streak: 1 day" in (stats.text or "")
        # A private reply cannot carry a file: the picture goes to the member's DM.
        assert "picture of these stats is in your direct messages" in (stats.text or "")
        [picture] = [f for f in slack_fake.files.values() if f.filename == "study-stats.png"]
        assert picture.content is not None and picture.content.startswith(b"\x89PNG\r\n")
        assert picture.completed and picture.channel_ids == ["D0ALICE"]  # the DM with alice

        await deliver(slack_fake.slash_command(text="help"))
        help_reply = (await private_replies(slack_fake, "U0ALICE", 3))[-1]
        assert "/study leaderboard [week|month|all|streaks]" in (help_reply.text or "")
        assert "schedule add" not in (help_reply.text or "")  # alice is no admin

        await deliver(slack_fake.slash_command(text="pack list"))
        packs = (await private_replies(slack_fake, "U0ALICE", 4))[-1]
        assert "slack-mc" in (packs.text or "") and "mini" in (packs.text or "")


async def test_admins_see_admin_help(adapter: SlackAdapter, slack_fake: FakeSlack) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="help", user_id="U0ADMIN"))
        [reply] = await private_replies(slack_fake, "U0ADMIN", 1)
    # The blocks are what an admin reads; the fallback text is cut at Slack's 3,000 characters.
    assert "/study schedule add" in all_text(reply.blocks)


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_app_home_shows_the_members_home_and_streak(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.app_home_opened("U0ALICE"))
        assert ack.status == 200
        call = await slack_fake.wait_for_call("views.publish")
    assert call.ok, call.response
    home = slack_fake.home_views["U0ALICE"]
    text = all_text(home.blocks)
    assert "Your studybot" in text and "Streak" in text and "/study quiz" in text


async def test_the_messages_tab_publishes_nothing(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.app_home_opened("U0ALICE", tab="messages"))
        await asyncio.sleep(0.1)
    assert slack_fake.calls_to("views.publish") == []


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_study_error_is_a_private_reply(
    mode: DeliveryMode, adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="quiz slack-mcc"))
        assert ack.status == 200 and ack.payload is None
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "There is no pack called `slack-mcc`" in (reply.text or "")
    assert "Did you mean `slack-mc`?" in (reply.text or "")
    assert slack_fake.calls_to("chat.postMessage") == []


async def test_a_closed_question_says_so(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        await slack_service.quiz.reveal(None, post_id)
        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=msg.ts))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "closed" in (reply.text or "")


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_unexpected_error_is_logged_and_answered_with_an_apology(
    mode: DeliveryMode,
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(*args: object, **kwargs: object) -> Message:
        raise RuntimeError("the database melted")

    monkeypatch.setattr(slack_service.standings, "leaderboard", broken)
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="leaderboard"))
        assert ack.status == 200
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
        assert reply.text == APOLOGY
        # the bot keeps running
        await deliver(slack_fake.slash_command(text="stats"))
        await private_replies(slack_fake, "U0ALICE", 2)
    [record] = [
        r for r in caplog.records if r.name == "bot.adapters.slack.adapter" and r.levelno >= 40
    ]
    assert record.exc_info is not None and "the database melted" in str(record.exc_info[1])
    message = record.getMessage()
    assert "/study leaderboard" in message and "T0STUDY" in message and "U0ALICE" in message


async def test_cannot_post_in_a_channel_it_is_not_in(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    slack_fake.fail("chat.postMessage", "not_in_channel")
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="quiz slack-mc"))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    assert "/invite @studybot" in (reply.text or "")


# --- acks come first ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_ack_is_sent_before_slow_work(
    mode: DeliveryMode,
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_stats = slack_service.standings.stats
    acked = asyncio.Event()

    async def slow_stats(*args: Any, **kwargs: Any) -> Message:
        await acked.wait()  # the work cannot finish before the test has the ack
        return await real_stats(*args, **kwargs)

    monkeypatch.setattr(slack_service.standings, "stats", slow_stats)
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="stats"))
        acked.set()
        assert ack.status == 200 and ack.latency < 3
        assert slack_fake.ephemerals_for("U0ALICE") == []
        await private_replies(slack_fake, "U0ALICE", 1)


# --- request verification -----------------------------------------------------------------------


async def test_wrong_signature_gets_401_in_process_and_over_http(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    request = slack_fake.slash_command(text="quiz slack-mc")
    resp = await dispatch_signed(adapter.app, request, slack_fake.signing_secret, valid=False)
    assert resp.status == 401
    old = slack_fake.slash_command(text="quiz slack-mc")
    resp = await dispatch_signed(adapter.app, old, slack_fake.signing_secret, timestamp=1)
    assert resp.status == 401
    async with serve_bolt_app(adapter.app) as url:
        status, _, _ = await post_signed(url, request, slack_fake.signing_secret, valid=False)
        assert status == 401
        status, _, _ = await post_signed(url, request, slack_fake.signing_secret)
        assert status == 200
    await slack_fake.wait_for_call("chat.postMessage")
    assert len(slack_fake.calls_to("chat.postMessage")) == 1  # only the signed one ran


@pytest.mark.parametrize("mode", DELIVERY_MODES)
async def test_the_word_payload_in_a_command_works_in_every_mode(
    mode: DeliveryMode,
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """bolt alone misreads form bodies saying "payload" (a 404); the bot's endpoint does not."""
    monkeypatch.setattr(adapter.services.runs, "check", lambda: None)  # /run may open
    slack_fake.add_channel("C0STUDY", "payload-team")
    async with bolt_delivery(mode, adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="run print(payload)"))
        assert ack.status == 200
        opened = await slack_fake.wait_for_call("views.open")
    element = opened.args["view"]["blocks"][0]["element"]
    assert element["initial_value"] == "print(payload)"


async def test_a_rate_limited_post_is_retried(adapter: SlackAdapter, slack_fake: FakeSlack) -> None:
    slack_fake.override(
        "chat.postMessage",
        lambda call: {"ok": False, "error": "ratelimited", "retry_after": 0},
        times=1,
    )
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake, count=2)
    assert [c.status for c in slack_fake.calls_to("chat.postMessage")] == [429, 200]
    assert msg.action_ids()


async def test_study_settings_lists_and_changes_for_admins_only(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="settings"))
        [listing] = await private_replies(slack_fake, "U0ALICE", 1)
        await deliver(slack_fake.slash_command(text="settings quiz-window 45m"))
        refused = (await private_replies(slack_fake, "U0ALICE", 2))[-1]
        await deliver(slack_fake.slash_command(text="settings quiz-window 45m", user_id="U0ADMIN"))
        [changed] = await private_replies(slack_fake, "U0ADMIN", 1)
        await deliver(slack_fake.slash_command(text="settings history", user_id="U0ADMIN"))
        history = (await private_replies(slack_fake, "U0ADMIN", 2))[-1]
    assert "timezone: UTC" in (listing.text or "")
    assert "Only admins can change `quiz-window`" in (refused.text or "")
    assert "quiz-window: no limit → 45m" in (changed.text or "")
    assert "quiz-window: default → 45m by" in (history.text or "")


async def test_study_history_and_question_reply_privately(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.slash_command(text="history"))
        [history] = await private_replies(slack_fake, "U0ALICE", 1)
        await deliver(slack_fake.slash_command(text=f"question #{post_id}"))
        peek = (await private_replies(slack_fake, "U0ALICE", 2))[-1]
        ack = await deliver(slack_fake.slash_command(text="question twelve"))
    assert f"#{post_id} ·" in (history.text or "") and "· open" in (history.text or "")
    assert "Still open in #" in (peek.text or "")
    assert ack.payload is not None and "/study question ID" in ack.payload["text"]


async def test_study_report_reaches_the_admins(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.slash_command(text=f"report #{post_id} choice B is also right"))
        [thanks] = await private_replies(slack_fake, "U0ALICE", 1)
        await deliver(slack_fake.slash_command(text="reports", user_id="U0ADMIN"))
        [listing] = await private_replies(slack_fake, "U0ADMIN", 1)
    assert f"your report on #{post_id}" in (thanks.text or "")
    assert "choice B is also right" in (listing.text or "") and "alice" in (listing.text or "")


async def test_study_write_opens_a_modal_and_checks_the_question(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        ack = await deliver(slack_fake.slash_command(text="write hard autograd"))
        assert ack.status == 200
        opened = await slack_fake.wait_for_call("views.open")
        assert opened.ok, opened.response
        view = opened.args["view"]
        view = json.loads(view) if isinstance(view, str) else view
        assert view["callback_id"] == "studybot_write"
        assert json.loads(view["private_metadata"])["difficulty"] == "hard"
        values = {
            "prompt": {"prompt": "What does backward() fill in?"},
            "choices": {"choices": "* the .grad of leaves\nthe .grad of every tensor"},
        }
        await deliver(slack_fake.view_submission("studybot_write", values))
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
    # alice is no admin: her valid question waits for one
    assert "Suggestion #1: valid, waiting for an admin" in (reply.text or "")


async def test_a_freeze_covers_a_missed_day_in_stats_and_the_streak_board(
    adapter: SlackAdapter, slack_fake: FakeSlack, clock: SimulatedClock
) -> None:
    """Seven days in a row earn a freeze; the eighth day missed is covered by it."""
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        for day in range(7):
            msg = await quiz(deliver, slack_fake, count=day + 1)
            post_id = int(msg.action_ids()[0].split(":")[1])
            await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=msg.ts))
            await private_replies(slack_fake, "U0ALICE", day + 1)
            clock.advance(timedelta(days=1))
        clock.advance(timedelta(days=1))  # a whole day without an answer

        await deliver(slack_fake.slash_command(text="stats"))
        stats = (await private_replies(slack_fake, "U0ALICE", 8))[-1].text or ""
        assert "Streak: 7 days (best 7)" in stats
        assert "Streak freezes: 0 held · 1 used" in stats

        await deliver(slack_fake.slash_command(text="leaderboard streaks"))
        board = await slack_fake.wait_for_response_url_call(
            predicate=lambda c: c.effect == "in_channel"
        )
        assert "🥇 alice — 7 days" in (board.text or "")


async def test_stats_group_is_the_admins_picture_of_the_group(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await deliver(slack_fake.slash_command(text="stats group"))
        [refused] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Only admins can see the group's mastery" in (refused.text or "")
        await deliver(slack_fake.slash_command(text="stats group", user_id="U0ADMIN"))
        [reply] = await private_replies(slack_fake, "U0ADMIN", 1)
    assert "Group mastery" in (reply.text or "")
    [picture] = [f for f in slack_fake.files.values() if f.filename == "group-mastery.png"]
    assert picture.content is not None and picture.content.startswith(b"\x89PNG\r\n")
