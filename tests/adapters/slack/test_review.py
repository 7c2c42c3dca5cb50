"""/study review on Slack: private replies; review buttons grade and serve the next card."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.adapters.slack import SlackAdapter
from bot.core.clock import SimulatedClock
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from tests.adapters.slack.test_flows import private_replies, quiz
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery

pytestmark = pytest.mark.timeout(30)


def _action_ids(blocks: list[dict[str, object]]) -> list[str]:
    return [
        str(e["action_id"])
        for b in blocks
        for e in b.get("elements", [])  # type: ignore[attr-defined]
        if isinstance(e, dict) and "action_id" in e
    ]


async def test_study_review_is_private_and_grades_by_button(
    adapter: SlackAdapter,
    slack_fake: FakeSlack,
    slack_service: Services,
    slack_timed: SchedulerParts,
    clock: SimulatedClock,
) -> None:
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:B", message_ts=msg.ts))
        await private_replies(slack_fake, "U0ALICE", 1)  # wrong (A is right): Again

        clock.advance(timedelta(minutes=5))
        await deliver(slack_fake.slash_command(text="review"))
        card = (await private_replies(slack_fake, "U0ALICE", 2))[-1]
        assert "Review" in (card.text or "") and "1 card due" in (card.text or "")
        buttons = _action_ids(card.blocks)
        assert all(b.startswith("review:") and b.endswith("-0-1") for b in buttons), buttons
        await deliver(slack_fake.block_action(buttons[0], message_ts=card.ts, channel_id="C0STUDY"))
        done = (await private_replies(slack_fake, "U0ALICE", 3))[-1]
        assert "Correct: A" in (done.text or "") and "1 reviewed" in (done.text or "")

        await deliver(slack_fake.slash_command(text="review remind 19:00 Asia/Tokyo"))
        remind = (await private_replies(slack_fake, "U0ALICE", 4))[-1]
        assert "19:00 (Asia/Tokyo)" in (remind.text or "")
        ack = await deliver(slack_fake.slash_command(text="review remind"))
        assert ack.payload is not None and "review remind HH:MM" in ack.payload["text"]
    assert await slack_timed.db.fetchval("SELECT count(*) FROM reviews") == 2
    # Nothing of /review was posted: the one chat.postMessage is the quiz question.
    assert len(slack_fake.calls_to("chat.postMessage")) == 1


async def test_study_review_export_uploads_the_deck_to_the_members_dm(
    adapter: SlackAdapter, slack_fake: FakeSlack
) -> None:
    import io
    import zipfile

    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        msg = await quiz(deliver, slack_fake)
        post_id = int(msg.action_ids()[0].split(":")[1])
        await deliver(slack_fake.block_action(f"answer:{post_id}:B", message_ts=msg.ts))
        await private_replies(slack_fake, "U0ALICE", 1)
        await deliver(slack_fake.slash_command(text="review export"))
        reply = (await private_replies(slack_fake, "U0ALICE", 2))[-1]
    text = reply.text or ""
    assert "1 card(s) as an Anki deck" in text
    assert "The deck is in your direct messages with studybot" in text
    [deck] = [f for f in slack_fake.files.values() if f.filename == "studybot-review-alice.apkg"]
    assert deck.completed and deck.channel_ids == ["D0ALICE"]  # the DM with alice
    assert deck.content is not None
    with zipfile.ZipFile(io.BytesIO(deck.content)) as archive:
        assert "collection.anki2" in archive.namelist()
