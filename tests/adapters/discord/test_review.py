"""/review on Discord: an ephemeral slash command; each click replaces the private card."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.adapters.discord.conftest import Studybot, embed_text
from tests.adapters.discord.test_questions import _post_id
from tests.fakes.discord_api import FakeDiscord, FakeMember

pytestmark = pytest.mark.timeout(60)


async def test_review_serves_due_cards_privately_and_grades_by_button(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    nothing = await (await studybot.command(alice, "review")).reply()
    assert nothing.ephemeral and "no cards yet" in embed_text(nothing)

    question = await studybot.quiz(alice, pack="mini", difficulty="medium")
    post_id = await _post_id(studybot, question.id)
    answered = await fake.click(question, alice, custom_id=f"studybot:answer:{post_id}:A")
    assert "next review of this card: in 1 minute" in embed_text(await answered.reply())

    studybot.clock.advance(timedelta(minutes=5))
    card = await (await studybot.command(alice, "review")).reply()
    assert card.ephemeral and "When is the autograd graph built?" in embed_text(card)
    key = await studybot.runtime.db.fetchval("SELECT question_id FROM cards")
    assert card.custom_ids == [f"studybot:review:{key}:A-0-1", f"studybot:review:{key}:B-0-1"]

    click = await fake.click(card, alice, label="B")
    assert (await click.response()).type == 7  # the private card itself is replaced
    done = await click.reply()
    assert done.id == card.id and done.ephemeral
    text = embed_text(done)
    assert "Correct: B" in text and "**1 reviewed.** Next due in 10 minutes" in text
    assert done.components == []
    assert await studybot.runtime.db.fetchval("SELECT count(*) FROM reviews") == 2


async def test_review_remind_is_set_privately(studybot: Studybot, alice: FakeMember) -> None:
    ix = await studybot.command(alice, "review", {"remind": "19:00", "timezone": "Europe/Berlin"})
    reply = await ix.reply()
    assert reply.ephemeral and "19:00 (Europe/Berlin)" in embed_text(reply)
    off = await (await studybot.command(alice, "review", {"remind": "off"})).reply()
    assert "Review reminders are off" in embed_text(off)


async def test_reminders_are_dms_on_days_with_due_cards(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    question = await studybot.quiz(alice, pack="mini", difficulty="medium")
    post_id = await _post_id(studybot, question.id)
    await (await fake.click(question, alice, custom_id=f"studybot:answer:{post_id}:A")).reply()
    await (await studybot.command(alice, "review", {"remind": "19:00"})).reply()
    await (await studybot.command(bob, "review", {"remind": "19:00"})).reply()  # no cards
    service, adapter = studybot.service, studybot.adapter
    assert await service.deliver_reminders(adapter) == 0  # 09:00: not yet
    studybot.clock.advance(timedelta(hours=10, minutes=1))
    assert await service.deliver_reminders(adapter) == 1
    assert await service.deliver_reminders(adapter) == 0  # once a day
    [dm] = list(fake.state.dm_channels.values())
    assert dm.recipients[0].id == alice.id
    [sent] = fake.messages_in(dm)
    assert "1 card due for review" in embed_text(sent)
    for name in ("general", "questions"):  # never in a channel
        channel = studybot.guild.channel(name)
        assert not any("due for review" in embed_text(m) for m in fake.messages_in(channel))
