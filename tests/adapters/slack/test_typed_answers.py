"""Typed answers on Slack: ``/study answer`` grades a typed question privately, a near miss
is "almost" and costs nothing, and the reveal names nobody; slack-bolt over loopback to the
fake, on a real SQLite file."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio

from bot.adapters.slack import SlackAdapter
from bot.adapters.slack.manifest import ANSWER_MODAL_CALLBACK
from bot.app import Built, build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from tests.adapters.slack.conftest import SLACK_PACKS
from tests.adapters.slack.test_flows import private_replies, quiz
from tests.adapters.slack.test_review import _action_ids
from tests.adapters.test_typed_answers import TYPED_PACKS
from tests.conftest import TEST_PACKS
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery


@pytest_asyncio.fixture
async def slack_built(tmp_path: Path, clock: SimulatedClock) -> AsyncIterator[Built]:
    """The usual Slack runtime, with the typed-mini pack beside the usual packs."""
    db = await open_database(tmp_path / "slack.sqlite3")
    try:
        built = build_services(db, clock, default_timezone="UTC", rng=random.Random(7))
        packs = [*load_packs(TEST_PACKS).packs, *load_packs(SLACK_PACKS).packs]
        await built.services.packs.sync([*packs, *load_packs(TYPED_PACKS).packs])
        yield built
    finally:
        await db.close()


@pytest.mark.timeout(30)
async def test_slack_answer_grades_a_typed_question(
    adapter: SlackAdapter, slack_fake: FakeSlack, slack_built: Built
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        post = await quiz(deliver, slack_fake, "typed-mini --tag method")
        assert "fills in the gradients" in (post.text or "")
        await deliver(slack_fake.slash_command(text="answer bckwrdd"))
        await deliver(slack_fake.slash_command(text="answer the bakcward"))
        await deliver(slack_fake.slash_command(text="answer bakcward"))
        replies = await private_replies(slack_fake, "U0ALICE", 3)
        assert "Almost" in (replies[0].text or "")
        assert "Not quite" in (replies[1].text or "")  # two words where one is asked
        assert "already answered" in (replies[2].text or "")
        ack = await deliver(slack_fake.slash_command(text="answer"))
        assert ack.payload is not None
        assert "/study answer [#ID] ANSWER" in ack.payload["text"]
        await deliver(slack_fake.slash_command(text="reveal"))
        edited = await slack_fake.wait_for_call("chat.update")
        assert edited.ok
        shown = str(edited.args)
        assert "right: 0 (0%)" in shown and "`the bakcward` (1)" in shown
        assert "U0ALICE" not in shown
        assert await adapter.idle()
    rows = await slack_built.timed.db.fetchall("SELECT choice FROM answers")
    assert [str(r[0]) for r in rows] == ["the bakcward"]


@pytest.mark.timeout(30)
async def test_the_answer_button_opens_a_modal_that_says_almost_in_place(
    adapter: SlackAdapter, slack_fake: FakeSlack, slack_built: Built
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        post = await quiz(deliver, slack_fake, "typed-mini --tag method")
        [button] = [a for a in post.action_ids() if a.startswith("type:")]
        await deliver(slack_fake.block_action(button, message_ts=post.ts))
        await slack_fake.wait_for_call("views.open")
        modal = slack_fake.view(callback_id=ANSWER_MODAL_CALLBACK)
        assert modal.blocks[0]["element"]["max_length"] == 200
        almost = await deliver(
            slack_fake.view_submission(ANSWER_MODAL_CALLBACK, {"answer": {"answer": "bckwrdd"}})
        )
        assert almost.payload is not None and almost.payload["response_action"] == "errors"
        assert "Almost" in almost.payload["errors"]["answer"]
        right = await deliver(
            slack_fake.view_submission(ANSWER_MODAL_CALLBACK, {"answer": {"answer": "backward"}})
        )
        assert right.payload is None
        [reply] = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Correct!" in (reply.text or "")
        assert await adapter.idle()


@pytest.mark.timeout(30)
async def test_a_typed_review_card_is_answered_in_a_modal_and_its_grade_changed_once(
    adapter: SlackAdapter, slack_fake: FakeSlack, slack_built: Built, clock: SimulatedClock
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await quiz(deliver, slack_fake, "typed-mini --tag leaf")
        await deliver(slack_fake.slash_command(text="answer y.grad"))
        await private_replies(slack_fake, "U0ALICE", 1)
        clock.advance(timedelta(days=2))
        await deliver(slack_fake.slash_command(text="review"))
        card = (await private_replies(slack_fake, "U0ALICE", 2))[-1]
        [button] = _action_ids(card.blocks)
        assert button.startswith("review:") and ":type-" in button
        await deliver(slack_fake.block_action(button, message_ts=card.ts, channel_id="C0STUDY"))
        await slack_fake.wait_for_call("views.open")
        modal = slack_fake.view(callback_id=ANSWER_MODAL_CALLBACK)
        assert '"review": [0, 1]' in str(modal.private_metadata)
        wrong = await deliver(
            slack_fake.view_submission(ANSWER_MODAL_CALLBACK, {"answer": {"answer": "y.grad"}})
        )
        assert wrong.payload is None
        graded = (await private_replies(slack_fake, "U0ALICE", 3))[-1]
        assert "Not quite. Graded" in (graded.text or "")
        assert "expected: x.grad" in str(graded.blocks)
        fixes = [a for a in _action_ids(graded.blocks) if ":o" in a]
        assert len(fixes) == 3
        await deliver(
            slack_fake.block_action(fixes[-1], message_ts=graded.ts, channel_id="C0STUDY")
        )
        changed = (await private_replies(slack_fake, "U0ALICE", 4))[-1]
        assert "Changed to" in (changed.text or "")
        assert await adapter.idle()
