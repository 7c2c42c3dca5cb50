"""/review on Discord: an ephemeral slash command; each click replaces the private card."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

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
    assert await service.reminders.deliver(adapter) == 0  # 09:00: not yet
    studybot.clock.advance(timedelta(hours=10, minutes=1))
    assert await service.reminders.deliver(adapter) == 1
    assert await service.reminders.deliver(adapter) == 0  # once a day
    [dm] = list(fake.state.dm_channels.values())
    assert dm.recipients[0].id == alice.id
    [sent] = fake.messages_in(dm)
    assert "1 card due for review" in embed_text(sent)
    for name in ("general", "questions"):  # never in a channel
        channel = studybot.guild.channel(name)
        assert not any("due for review" in embed_text(m) for m in fake.messages_in(channel))


async def _dm_times(fake: FakeDiscord, member: FakeMember) -> list[datetime]:
    """When each review reminder DM reached ``member`` (the simulated clock's time)."""
    return [
        datetime.fromisoformat(str(m.payload["timestamp"]))
        for channel in fake.state.dm_channels.values()
        if channel.recipients[0].id == member.id
        for m in fake.messages_in(channel)
    ]


async def test_reminders_keep_local_time_across_a_dst_change_and_skip_days_with_nothing_due(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    """19:00 in Berlin is 18:00 UTC until 29 March 2026 and 17:00 UTC after; no due card, no DM."""
    question = await studybot.quiz(alice, pack="mini", difficulty="medium")
    post_id = await _post_id(studybot, question.id)
    await (await fake.click(question, alice, custom_id=f"studybot:answer:{post_id}:A")).reply()
    remind = {"remind": "19:00", "timezone": "Europe/Berlin"}
    await (await studybot.command(alice, "review", remind)).reply()
    service, adapter, clock = studybot.service, studybot.adapter, studybot.clock

    sent: list[datetime] = []

    async def tick_until(end: datetime) -> None:
        while clock.now() < end:  # the reminder loop's minute ticks, every 15 minutes here
            clock.advance(timedelta(minutes=15))
            if await service.reminders.deliver(adapter):
                sent.append(clock.now())

    await tick_until(datetime(2026, 3, 27, 9, 0, tzinfo=UTC))
    # Due every day since the wrong answer: one DM a day at 19:00 Berlin (CET, UTC+1).
    assert sent[0] == datetime(2026, 3, 4, 18, 0, tzinfo=UTC)
    assert sent == [datetime(2026, 3, d, 18, 0, tzinfo=UTC) for d in range(4, 27)]

    # Alice reviews the card on 27 March and gets it right (through its relearning steps):
    # it is not due again for days.
    due = clock.now()
    while due < clock.now() + timedelta(days=1):
        clock.set(max(due, clock.now()))
        card = await (await studybot.command(alice, "review")).reply()
        await (await fake.click(card, alice, label="B")).reply()
        due = datetime.fromisoformat(
            str(await studybot.runtime.db.fetchval("SELECT due FROM cards"))
        )
    assert due >= datetime(2026, 3, 29, 18, 0, tzinfo=UTC)  # skips at least the 27th and 28th
    sent.clear()
    clock.set(clock.now().replace(minute=0, second=0, microsecond=0) + timedelta(hours=1))
    await tick_until(due + timedelta(days=3))
    due_local = due.astimezone(ZoneInfo("Europe/Berlin"))
    first_day = due_local.date() if due_local.hour < 19 else due_local.date() + timedelta(days=1)
    assert sent[0].astimezone(ZoneInfo("Europe/Berlin")).date() == first_day
    # After the change to summer time (CEST, UTC+2), 19:00 in Berlin is 17:00 UTC.
    assert all(s.hour == 17 and s.minute == 0 for s in sent), sent
    assert len(sent) == len({s.date() for s in sent}) >= 2  # once a day
    assert await _dm_times(fake, alice) != []  # the DMs really reached Discord


async def test_closed_dms_turn_the_reminder_off_and_the_member_is_told_once(
    fake: FakeDiscord, studybot: Studybot, bob: FakeMember
) -> None:
    question = await studybot.quiz(bob, pack="mini", difficulty="medium")
    post_id = await _post_id(studybot, question.id)
    await (await fake.click(question, bob, custom_id=f"studybot:answer:{post_id}:A")).reply()
    await (await studybot.command(bob, "review", {"remind": "19:00"})).reply()
    bob.user.dms_open = False  # bob turns off DMs from server members
    studybot.clock.advance(timedelta(hours=10, minutes=1))
    service, adapter = studybot.service, studybot.adapter
    assert await service.reminders.deliver(adapter) == 0
    studybot.clock.advance(timedelta(days=1))
    assert await service.reminders.deliver(adapter) == 0  # off: not even tried again
    attempts = [c for c in fake.calls if c.method == "POST" and "/messages" in c.path]
    dm_ids = {str(channel.id) for channel in fake.state.dm_channels.values()}
    assert sum(any(d in c.path for d in dm_ids) for c in attempts) == 1

    first = await (await studybot.command(bob, "review")).reply()
    assert first.ephemeral
    assert "review reminder turned itself off" in embed_text(first)
    again = await (await studybot.command(bob, "review")).reply()
    assert "turned itself off" not in embed_text(again)  # told once


async def test_review_export_is_a_private_reply_with_the_deck_attached(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    import io
    import zipfile

    question = await studybot.quiz(alice, pack="mini", difficulty="medium")
    post_id = await _post_id(studybot, question.id)
    await (await fake.click(question, alice, custom_id=f"studybot:answer:{post_id}:A")).reply()
    reply = await (await studybot.command(alice, "review", {"action": "export"})).response()
    assert reply.ephemeral
    assert "1 card(s) as an Anki deck" in embed_text(reply.data)
    [deck] = reply.files
    assert deck.filename == "studybot-review-alice.apkg"
    with zipfile.ZipFile(io.BytesIO(deck.data)) as archive:
        assert "collection.anki2" in archive.namelist()
        collection = archive.read("collection.anki2")
    assert b"When is the autograd graph built?" in collection
