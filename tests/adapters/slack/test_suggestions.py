"""The suggestion queue on Slack: `/study write` from a member waits; `/study suggestions
approve|reject ...` (workspace admins) decides it; the author is told by DM; the approved
question's posts credit the author."""

from __future__ import annotations

import random
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.adapters.slack import SlackAdapter
from bot.app import Built, build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from tests.adapters.slack.conftest import SLACK_PACKS
from tests.adapters.slack.test_flows import all_text, private_replies
from tests.conftest import TEST_PACKS
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import Delivery, bolt_delivery

pytestmark = pytest.mark.timeout(30)


@pytest_asyncio.fixture
async def slack_built(tmp_path: Path, clock: SimulatedClock) -> AsyncIterator[Built]:
    """The Slack tests' services, with a packs folder that chat can install into."""
    packs = tmp_path / "packs"
    packs.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", packs / "mini.yaml")
    db = await open_database(tmp_path / "slack.sqlite3")
    try:
        built = build_services(
            db, clock, default_timezone="UTC", rng=random.Random(7), packs_dir=packs
        )
        await built.services.packs.sync(load_packs(packs).packs + load_packs(SLACK_PACKS).packs)
        yield built
    finally:
        await db.close()


async def _write(deliver: Delivery, fake: FakeSlack, prompt: str, choices: str) -> None:
    ack = await deliver(fake.slash_command(text="write"))
    assert ack.status == 200
    values = {"prompt": {"prompt": prompt}, "choices": {"choices": choices}}
    await deliver(fake.view_submission("studybot_write", values))


async def test_a_suggestion_approved_and_credited_and_one_rejected_with_its_reason(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        await _write(deliver, slack_fake, "What does backward() fill in?", "* .grad\n.data")
        await private_replies(slack_fake, "U0ALICE", 1)  # #1 before the second is written
        await _write(deliver, slack_fake, "Is y = x * 2 a leaf?", "yes\n* no")
        first, second = await private_replies(slack_fake, "U0ALICE", 2)
        assert "Suggestion #1: valid, waiting for an admin" in (first.text or "")
        assert "Suggestion #2: valid, waiting for an admin" in (second.text or "")

        await deliver(slack_fake.slash_command(text="suggestions"))  # alice is no admin
        refused = (await private_replies(slack_fake, "U0ALICE", 3))[-1]
        assert "Only admins can see and decide" in (refused.text or "")

        admin = "U0ADMIN"
        await deliver(slack_fake.slash_command(text="suggestions", user_id=admin))
        [listing] = await private_replies(slack_fake, admin, 1)
        assert "#1" in (listing.text or "") and "alice" in (listing.text or "")
        await deliver(slack_fake.slash_command(text="suggestions approve 1", user_id=admin))
        approved = (await private_replies(slack_fake, admin, 2))[-1]
        assert "alice was told by direct message" in (approved.text or "")
        ack = await deliver(slack_fake.slash_command(text="suggestions reject 2", user_id=admin))
        assert ack.payload is not None and "REASON is missing" in ack.payload["text"]
        reject = "suggestions reject 2 it is the same as #1"
        await deliver(slack_fake.slash_command(text=reject, user_id=admin))
        rejected = (await private_replies(slack_fake, admin, 3))[-1]
        assert "Rejected suggestion #2 by alice" in (rejected.text or "")

        dms = [m for m in slack_fake.messages if m.channel == "D0ALICE"]
        assert len(dms) == 2
        assert "community-1" in all_text(dms[0].blocks)
        assert "it is the same as #1" in all_text(dms[1].blocks)

        await deliver(slack_fake.slash_command(text="quiz community"))
        call = await slack_fake.wait_for_call("chat.postMessage", count=3)
        posted = slack_fake.message(call.response["ts"])
        text = all_text(posted.blocks)
        assert "What does backward() fill in?" in text
        assert "Suggested by @alice" in text  # the name: a <@U…> would notify every post
