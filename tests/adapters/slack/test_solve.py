"""An exercise on Slack: the Solve it button and ``/study solve`` open a modal pre-filled with
the starter; the submission runs in the real jail and the verdict is private; it scores once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.adapters.slack import SlackAdapter
from bot.adapters.slack.manifest import SOLVE_MODAL_CALLBACK
from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.sandbox import Sandbox
from bot.storage.database import open_database
from tests.adapters.slack.conftest import slack_settings
from tests.adapters.slack.test_flows import private_replies
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

EXERCISES = Path(__file__).resolve().parents[2] / "data" / "exercise_packs"
RIGHT = "import torch\n\ndef affine(x):\n    return 3 * x + 1\n"


async def test_solve_it_opens_the_starter_and_the_verdict_is_private(
    slack_fake: FakeSlack, tmp_path: Path, clock: SimulatedClock
) -> None:
    config = sandbox_config(pool_size=2, timeout=10.0)
    async with Sandbox(config) as sandbox, await open_database(tmp_path / "ex.sqlite3") as db:
        assert sandbox.available, sandbox.unavailable_reason
        await sandbox.wait_warm(1, within=120)
        service = build_services(db, clock, runner=sandbox, packs_dir=EXERCISES).services
        await service.packs.sync(load_packs(EXERCISES).packs)
        adapter = SlackAdapter(service, slack_settings(slack_fake))
        async with bolt_delivery("socket", adapter.app, slack_fake) as deliver:
            await deliver(slack_fake.slash_command(text="quiz exercise-tests"))
            post = await slack_fake.wait_for_call("chat.postMessage")
            message = slack_fake.message(post.response["ts"], "C0STUDY")
            texts = json.dumps(message.blocks)
            assert "Coding exercise" in texts and "Solve it" in texts
            solve = next(
                e["action_id"]
                for b in message.blocks
                if b["type"] == "actions"
                for e in b["elements"]
                if e["action_id"].startswith("solve:")
            )
            await deliver(slack_fake.block_action(solve, message_ts=message.ts))
            await slack_fake.wait_for_call("views.open")
            modal = slack_fake.view(callback_id=SOLVE_MODAL_CALLBACK)
            starter = modal.blocks[0]["element"]["initial_value"]
            assert "def affine(x)" in starter

            await deliver(
                slack_fake.view_submission(SOLVE_MODAL_CALLBACK, {"code": {"code": starter}})
            )
            await slack_fake.wait_for_call("chat.postEphemeral", timeout=60)
            [wrong] = await private_replies(slack_fake, "U0ALICE", 1)
            assert "0 of 4 checks passed" in (wrong.text or "")

            await deliver(slack_fake.slash_command(text="solve"))
            await slack_fake.wait_for_call("views.open", count=2)
            await deliver(
                slack_fake.view_submission(SOLVE_MODAL_CALLBACK, {"code": {"code": RIGHT}})
            )
            await slack_fake.wait_for_call("chat.postEphemeral", count=2, timeout=60)
            replies = await private_replies(slack_fake, "U0ALICE", 2)
            assert "Solved: 4 of 4 checks passed. +10 points" in (replies[-1].text or "")
            assert slack_fake.calls_to("chat.postMessage")[-1] is post  # nothing public
        assert await adapter.idle(5)


async def test_try_it_after_an_answer_opens_the_snippet_in_the_run_modal(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    from bot.adapters.slack.manifest import RUN_MODAL_CALLBACK
    from tests.adapters.slack.test_flows import quiz

    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake, "slack-practice")
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"try:{post_id}:code", message_ts=msg.ts))
        [refused] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Answer first" in (refused.text or "")
        assert slack_fake.calls_to("views.open") == []

        await deliver(slack_fake.block_action(f"answer:{post_id}:A", message_ts=msg.ts))
        replies = await private_replies(slack_fake, "U0ALICE", 2)
        assert f"try:{post_id}:code" in json.dumps(replies[-1].blocks)
        await deliver(slack_fake.block_action(f"try:{post_id}:code", message_ts=msg.ts))
        await slack_fake.wait_for_call("views.open")
    element = slack_fake.view(callback_id=RUN_MODAL_CALLBACK).blocks[0]["element"]
    assert "(2 * x).backward()" in element["initial_value"]
