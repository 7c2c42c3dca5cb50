"""On Slack, each post's choices come in its own order, and the click, the reveal's edit and
``/study question`` read the letters in that order (the real AsyncApp against FakeSlack)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.adapters.slack import SlackAdapter
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from tests.adapters.slack.conftest import SLACK_PACKS
from tests.adapters.slack.test_flows import all_text, private_replies, quiz
from tests.conftest import TEST_PACKS
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import bolt_delivery

pytestmark = pytest.mark.timeout(60)

RIGHT = "Right: detach() cuts the graph"
PACK = f"""\
pack: slack-order
title: Slack order
items:
  - id: so-1
    kind: multiple_choice
    difficulty: easy
    prompt: Which sentence is right?
    choices:
      - text: "{RIGHT}"
        correct: true
      - text: "Wrong: clone() cuts the graph"
      - text: "Wrong: view() cuts the graph"
      - text: "Wrong: add() cuts the graph"
      - text: "Wrong: mul() cuts the graph"
"""


def _letter_of(text: str, choice: str) -> str:
    found = re.search(rf"\*?([A-E])\.\*? {re.escape(choice)}", text)
    assert found is not None, text
    return found.group(1)


async def test_a_slack_post_a_click_and_its_reveal_agree_on_the_drawn_order(
    adapter: SlackAdapter, slack_fake: FakeSlack, slack_service: Services, tmp_path: Path
) -> None:
    (tmp_path / "order.yaml").write_text(PACK)
    packs = load_packs(TEST_PACKS).packs + load_packs(SLACK_PACKS).packs
    await slack_service.packs.sync(packs + load_packs(tmp_path).packs)
    letters = []
    async with bolt_delivery("in_process", adapter.app, slack_fake) as deliver:
        for count in range(1, 7):
            msg = await quiz(deliver, slack_fake, "slack-order", count=count)
            letters.append(_letter_of(all_text(msg.blocks), RIGHT))
        post_id = int(msg.action_ids()[0].split(":")[1])
        right = letters[-1]
        wrong = next(letter for letter in "ABCDE" if letter != right)
        await deliver(slack_fake.block_action(f"answer:{post_id}:{right}", message_ts=msg.ts))
        bob = slack_fake.add_user("U0BOB", name="bob")
        await deliver(
            slack_fake.block_action(f"answer:{post_id}:{wrong}", message_ts=msg.ts, user_id=bob.id)
        )
        alice = await private_replies(slack_fake, "U0ALICE", 1)
        assert "Correct" in (alice[0].text or "")
        assert "Not quite" in ((await private_replies(slack_fake, "U0BOB", 1))[0].text or "")

    assert len(set(letters)) >= 2, letters  # six posts, not one fixed place
    edit = await slack_service.quiz.reveal(None, post_id)
    await slack_service.quiz.apply_edit(edit, adapter)
    await slack_fake.wait_for_call("chat.update")
    revealed = all_text(slack_fake.message(msg.ts).blocks)
    assert f"✅ *{right}.* {RIGHT} — 1 (50%)" in revealed
