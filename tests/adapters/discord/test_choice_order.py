"""On Discord, each post's choices come in its own order: the embed, the buttons, the click
and the reveal's edit all read the letters in it (the real discord.py against the fake)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.adapters.discord.conftest import Studybot, embed_text
from tests.fakes.discord_api import FakeDiscord, FakeMember

pytestmark = pytest.mark.timeout(60)

RIGHT = "Right: detach() cuts the graph"
PACK = f"""\
pack: discord-order
title: Discord order
items:
  - id: do-1
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


@pytest.fixture
def packs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / "order.yaml").write_text(PACK)
    return folder


async def test_a_discord_post_its_buttons_a_click_and_the_reveal_agree_on_the_order(
    fake: FakeDiscord,
    studybot: Studybot,
    alice: FakeMember,
    bob: FakeMember,
) -> None:
    letters = []
    for _ in range(6):
        question = await studybot.quiz(alice, pack="discord-order")
        found = re.search(rf"\*\*([A-E])\.\*\* {re.escape(RIGHT)}", embed_text(question))
        assert found is not None, embed_text(question)
        letters.append(found.group(1))
    assert [b["label"] for b in question.buttons[:5]] == list("ABCDE")
    assert len(set(letters)) >= 2, letters  # six posts, not one fixed place
    right = letters[-1]
    wrong = next(letter for letter in "ABCDE" if letter != right)
    assert "Correct! +" in embed_text(
        (await (await fake.click(question, alice, label=right)).response()).data
    )
    assert "Not quite" in embed_text(
        (await (await fake.click(question, bob, label=wrong)).response()).data
    )

    row = await studybot.runtime.db.fetchone(
        "SELECT id FROM posts WHERE platform_message_id = ?", (str(question.id),)
    )
    assert row is not None
    edit = await studybot.service.quiz.reveal(None, int(row[0]))
    await studybot.service.quiz.apply_edit(edit, studybot.adapter)
    assert f"✅ **{right}.** {RIGHT} — 1 (50%)" in embed_text(question)
