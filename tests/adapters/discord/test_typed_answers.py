"""Typed answers on Discord: ``/answer`` is registered from the command table (no cog), and
a typed question is answered privately, graded, and revealed without names; discord.py over
loopback to the fake."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.core.clock import SimulatedClock
from tests.adapters.discord.conftest import Studybot, embed_text
from tests.adapters.test_typed_answers import TYPED_PACKS
from tests.fakes.discord_api import FakeDiscord, FakeMember

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def packs_dir(packs_dir: Path) -> Path:
    """The Discord tests' packs, and the typed one (started by the ``studybot`` fixture)."""
    shutil.copy(TYPED_PACKS / "typed-mini.yaml", packs_dir / "typed-mini.yaml")
    return packs_dir


def _shown(data: dict[str, Any]) -> str:
    return (data.get("content") or "") + embed_text(data)


async def test_discord_answer_grades_a_typed_question_privately(
    fake: FakeDiscord, alice: FakeMember, bob: FakeMember, studybot: Studybot
) -> None:
    synced = [
        c
        for store in (*fake.state.guild_commands.values(), fake.state.global_commands)
        for c in store.values()
        if c["name"] == "answer"
    ]
    options = {o["name"]: o for o in synced[0]["options"]} if synced else {}
    assert set(options) == {"id", "answer"} and options["answer"]["required"]
    assert options["answer"]["max_length"] == 200
    posted = await studybot.command(alice, "quiz", {"pack": "typed-mini", "tag": "method"})
    question = await posted.reply()
    assert "fills in the gradients" in embed_text(question)
    assert "Type your answer" in embed_text(question)
    assert any(c.startswith("studybot:type:") for c in question.custom_ids)

    almost = await (await studybot.command(alice, "answer", {"answer": "bckwrdd"})).response()
    assert almost.ephemeral and "Almost" in _shown(almost.data)
    right = await (await studybot.command(alice, "answer", {"answer": "bakcward"})).response()
    assert right.ephemeral and "Correct!" in _shown(right.data)
    wrong = await (
        await studybot.command(bob, "answer", {"answer": "@everyone forward"})
    ).response()
    assert wrong.ephemeral and "Not quite" in _shown(wrong.data)

    stored = await studybot.runtime.db.fetchall("SELECT choice FROM answers ORDER BY id")
    assert [str(r[0]) for r in stored] == ["backward", "everyone forward"]


async def test_the_answer_button_opens_a_text_box_and_grades_it(
    fake: FakeDiscord, alice: FakeMember, studybot: Studybot
) -> None:
    posted = await studybot.command(alice, "quiz", {"pack": "typed-mini", "tag": "number"})
    question = await posted.reply()
    [button] = [c for c in question.custom_ids if c.startswith("studybot:type:")]
    opened = await (await fake.click(question, alice, custom_id=button)).response()
    assert opened.is_modal
    [box] = opened.text_inputs
    assert box["style"] == 1 and box["max_length"] == 200
    unreadable = await fake.submit_modal(opened.custom_id, alice, {"Your answer": "twelve"})
    told = await unreadable.response()
    assert told.ephemeral and "not a number I can read" in _shown(told.data)
    again = await (await fake.click(question, alice, custom_id=button)).response()
    right = await fake.submit_modal(again.custom_id, alice, {"Your answer": "1.2e1"})
    graded = await right.response()
    assert graded.ephemeral and "Correct!" in _shown(graded.data)


async def test_a_typed_review_card_opens_a_text_box_and_offers_one_change_of_grade(
    fake: FakeDiscord, alice: FakeMember, clock: SimulatedClock, studybot: Studybot
) -> None:
    await (await studybot.command(alice, "quiz", {"pack": "typed-mini", "tag": "leaf"})).reply()
    await (await studybot.command(alice, "answer", {"answer": "y.grad"})).response()
    clock.advance(timedelta(days=2))
    card = await (await studybot.command(alice, "review")).reply()
    [button] = card.custom_ids
    assert button.startswith("studybot:review:") and ":type-" in button
    opened = await (await fake.click(card, alice, custom_id=button)).response()
    assert opened.is_modal
    graded = await fake.submit_modal(opened.custom_id, alice, {"Your answer": "x.grad"})
    told = await graded.reply()
    assert told.ephemeral and "✅ Right: x.grad" in _shown(told.payload)
    fixes = [c for c in told.custom_ids if ":o" in c]
    assert len(fixes) == 3
    changed = await (await fake.click(told, alice, custom_id=fixes[0])).reply()
    assert changed.ephemeral and changed.id != told.id  # the next card stays where it is
    assert "Changed to" in _shown(changed.payload)
