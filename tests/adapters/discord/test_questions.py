"""Questions on Discord: posted with buttons, answered privately, revealed in place."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.core.clock import SimulatedClock
from bot.core.models import ChatContext
from bot.settings import Settings
from tests.adapters.discord.conftest import (
    Studybot,
    embed_text,
    make_settings,
    public_messages,
    running,
)
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember

pytestmark = pytest.mark.timeout(60)

EPHEMERAL = 64


async def _answers(studybot: Studybot, post_id: int) -> list[tuple[str, str]]:
    rows = await studybot.runtime.db.fetchall(
        "SELECT m.external_id, a.choice FROM answers a JOIN members m ON m.id = a.member_id "
        "WHERE a.post_id = ? ORDER BY a.id",
        (post_id,),
    )
    return [(str(r[0]), str(r[1])) for r in rows]


async def _post_id(studybot: Studybot, message_id: int) -> int:
    """The post attached to a message; the adapter attaches it just after Discord answers."""
    for _ in range(200):
        row = await studybot.runtime.db.fetchone(
            "SELECT id FROM posts WHERE platform_message_id = ?", (str(message_id),)
        )
        if row is not None:
            return int(row[0])
        await asyncio.sleep(0.01)
    raise AssertionError(f"no post is attached to message {message_id}")


async def test_quiz_posts_the_question_publicly_with_persistent_buttons(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, alice: FakeMember
) -> None:
    ix = await fake.slash_command(guild, "questions", alice, "quiz", {"difficulty": "medium"})
    response = await ix.response()
    assert response.type == 4
    assert not response.ephemeral
    assert response.allowed_mentions == {"parse": []}
    message = await ix.reply()
    assert message.channel_id == guild.channel("questions").id

    post_id = await _post_id(studybot, message.id)  # attach_message stored the id
    [embed] = message.embeds
    assert embed["title"] == "Multiple choice · Mini pack · medium"
    assert "When is the autograd graph built?" in embed["description"]
    assert "**A.** Before the program runs" in embed["description"]
    assert "**B.** As the forward pass runs" in embed["description"]
    assert embed["footer"]["text"].endswith(f"#{post_id} · d-mc-1")
    assert message.custom_ids == [f"studybot:answer:{post_id}:A", f"studybot:answer:{post_id}:B"]
    assert [b["label"] for b in message.buttons] == ["A", "B"]
    assert all(b["style"] == 1 for b in message.buttons)  # primary


async def test_quiz_takes_a_tag_as_the_console_and_slack_do(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, alice: FakeMember
) -> None:
    options = {"pack": "mini", "difficulty": "easy", "tag": "leaf"}
    ix = await fake.slash_command(guild, "questions", alice, "quiz", options)
    message = await ix.reply()
    [embed] = message.embeds
    assert embed["footer"]["text"].endswith("· d-mc-2")  # mini's one easy question tagged leaf


async def test_click_is_answered_ephemerally_and_recorded_once(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    question = await studybot.quiz(alice, difficulty="medium")
    post_id = await _post_id(studybot, question.id)

    first = await fake.click(question, alice, label="B")
    reply = await first.response()
    assert reply.type == 4
    assert reply.ephemeral
    assert reply.allowed_mentions == {"parse": []}
    assert "Correct! +" in embed_text(reply.data)

    again = await fake.click(question, alice, label="A")
    refused = await again.response()
    assert refused.ephemeral
    assert "already answered this question (B)" in refused.content
    assert await _answers(studybot, post_id) == [(str(alice.id), "B")]
    assert question.edits == 0  # the public post never changes before the reveal


async def test_nothing_public_says_who_answered_what_before_the_reveal(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    question = await studybot.quiz(alice, difficulty="medium")
    before = [m.payload for m in public_messages(fake, question.channel_id)]
    for member, label in ((alice, "B"), (bob, "A")):
        ix = await fake.click(question, member, label=label)
        assert (await ix.response()).ephemeral

    public = public_messages(fake, question.channel_id)
    assert [m.payload for m in public] == before  # no new public message, no edit
    for message in public:
        text = embed_text(message) + message.content
        assert "bob" not in text
        assert "alice" not in text
        assert message.mentioned_user_ids == []
    assert not [c for c in fake.calls if c.method == "PATCH"]


async def test_a_click_after_a_restart_still_works(
    fake: FakeDiscord,
    guild: FakeGuild,
    settings: Settings,
    clock: SimulatedClock,
    alice: FakeMember,
    bob: FakeMember,
) -> None:
    async with running(fake, settings, clock, guild) as first:
        question = await first.quiz(alice, difficulty="medium")
        post_id = await _post_id(first, question.id)
        assert (await (await fake.click(question, alice, label="A")).response()).ephemeral

    # A new process: a new client, the same database file, nothing kept in memory.
    async with running(fake, settings, clock, guild) as second:
        assert second.adapter is not first.adapter
        ix = await fake.click(f"studybot:answer:{post_id}:B", bob)
        reply = await ix.response()
        assert reply.ephemeral
        assert "Correct! +" in embed_text(reply.data)
        again = await fake.click(question, alice, label="B")
        assert "already answered this question (A)" in (await again.response()).content
        assert await _answers(second, post_id) == [(str(alice.id), "A"), (str(bob.id), "B")]
    assert len(fake.gateway.history) == 2


async def test_flashcard_show_answer_then_knew_it_replaces_the_private_card(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    question = await studybot.quiz(alice, pack="cards")
    post_id = await _post_id(studybot, question.id)
    assert question.custom_ids == [f"studybot:show:{post_id}:back"]

    show = await fake.click(question, alice, label="Show answer")
    card = await show.reply()
    assert card.ephemeral
    assert "cut from the graph" in embed_text(card)
    assert card.custom_ids == [
        f"studybot:answer:{post_id}:again",
        f"studybot:answer:{post_id}:hard",
        f"studybot:answer:{post_id}:good",
        f"studybot:answer:{post_id}:easy",
    ]

    knew = await fake.click(card, alice, label="Good")
    response = await knew.response()
    assert response.type == 7  # the private card itself is updated: no second click possible
    updated = await knew.reply()
    assert updated.id == card.id
    assert updated.ephemeral
    assert "you knew it" in embed_text(updated)
    assert updated.components == []
    assert await _answers(studybot, post_id) == [(str(alice.id), "good")]


async def test_hints_come_privately_one_after_another(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    question = await studybot.quiz(alice, pack="drill")
    post_id = await _post_id(studybot, question.id)
    assert question.custom_ids[-1] == f"studybot:hint:{post_id}:0"

    first = await (await fake.click(question, alice, label="Hint")).reply()
    assert first.ephemeral
    assert "Hint 1 of 2" in embed_text(first)
    assert "Differentiate 3x." in embed_text(first)
    second = await (await fake.click(first, alice, label="Another hint")).reply()
    assert second.ephemeral
    assert second.id != first.id  # the first hint stays readable
    assert "The input value does not matter." in embed_text(second)
    assert second.components == []


async def test_reveal_edits_the_post_with_answer_breakdown_solution_and_mistakes(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    question = await studybot.quiz(alice, pack="drill")
    post_id = await _post_id(studybot, question.id)
    await (await fake.click(question, alice, label="A")).response()
    await (await fake.click(question, bob, label="B")).response()

    # What the scheduler does at close time, through the adapter as the core's gateway.
    edit = await studybot.service.quiz.reveal(None, post_id)
    await studybot.service.quiz.apply_edit(edit, studybot.adapter)

    [patch] = fake.calls_to("PATCH", f"/channels/{question.channel_id}/messages/{question.id}")
    assert patch.json["allowed_mentions"] == {"parse": []}
    assert question.edits == 1
    text = embed_text(question)
    assert question.embeds[0]["title"].endswith("· closed")
    assert "✅ **A.** 3.0 — 1 (50%)" in text
    assert "▫️ **B.** 1.0 — 1 (50%)" in text
    assert "**Solution**\n1. Write y = 3x\n2. dy/dx = 3 everywhere" in text
    assert "**Common mistakes**\n• Confusing the value of x with its gradient" in text
    assert "```py\nimport torch" in text
    assert "Closed with 2 answers" in text
    # No answer buttons left to click; "Try it" opens the snippet in /run's editor (issue 31).
    assert question.custom_ids == [f"studybot:try:{post_id}:code"]


async def test_a_click_on_a_closed_question_is_refused_privately(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    question = await studybot.quiz(alice, difficulty="medium")
    post_id = await _post_id(studybot, question.id)
    stale = question.payload  # a client that has not seen the edit yet still shows buttons
    await studybot.service.quiz.reveal(None, post_id)  # closed, but not edited
    ix = await fake.click(question, bob, label="A")
    refused = await ix.response()
    assert refused.ephemeral
    assert "has closed" in refused.content
    assert question.payload is stale


async def test_scheduled_post_goes_through_the_gateway_with_buttons(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, alice: FakeMember
) -> None:
    """``service.posting.publish(draft, adapter)`` is how the scheduler posts; it uses channel REST."""
    channel = guild.channel("general")
    ctx = ChatContext("discord", str(guild.id), str(channel.id), "scheduler", "scheduler")
    draft = await studybot.service.quiz.post_question(ctx, difficulty="medium", requested=False)
    message_id = await studybot.service.posting.publish(draft, studybot.adapter)

    [post] = fake.calls_to("POST", f"/channels/{channel.id}/messages")
    assert post.json["allowed_mentions"] == {"parse": []}
    sent = fake.message(int(message_id))
    assert sent.custom_ids == [
        f"studybot:answer:{draft.post.id}:A",
        f"studybot:answer:{draft.post.id}:B",
    ]
    assert await _post_id(studybot, sent.id) == draft.post.id
    reply = await (await fake.click(sent, alice, label="B")).response()
    assert reply.ephemeral


async def test_a_sent_but_unrecorded_question_is_found_in_the_channel(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot
) -> None:
    """After a crash between send and record, the scheduler asks before sending again."""
    channel = guild.channel("general")
    ctx = ChatContext("discord", str(guild.id), str(channel.id), "scheduler", "scheduler")
    first = await studybot.service.quiz.post_question(ctx, difficulty="medium", requested=False)
    second = await studybot.service.quiz.post_question(ctx, difficulty="easy", requested=False)
    # Discord shows both; the process "died" before recording either message id
    shown_first = await studybot.adapter.send_post(str(channel.id), first.message)
    shown_second = await studybot.adapter.send_post(str(channel.id), second.message)
    assert shown_first != shown_second

    assert await studybot.adapter.find_post(str(channel.id), first.post.id) == shown_first
    assert await studybot.adapter.find_post(str(channel.id), second.post.id) == shown_second
    assert await studybot.adapter.find_post(str(channel.id), 999) is None
    [lookup, *_] = fake.calls_to("GET", f"/channels/{channel.id}/messages")
    assert lookup.query.get("limit") == "50"


async def test_reveal_of_a_deleted_post_is_posted_anew(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    question = await studybot.quiz(alice, difficulty="medium")
    post_id = await _post_id(studybot, question.id)
    fake.fail_next(
        "PATCH", "/channels/{c}/messages/{m}", status=404, code=10008, message="Unknown Message"
    )
    edit = await studybot.service.quiz.reveal(None, post_id)
    await studybot.service.quiz.apply_edit(edit, studybot.adapter)
    [repost] = fake.calls_to("POST", f"/channels/{question.channel_id}/messages")
    assert repost.json["embeds"][0]["title"].endswith("· closed")


async def test_discussion_thread_per_question_when_enabled(
    fake: FakeDiscord,
    guild: FakeGuild,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
    alice: FakeMember,
) -> None:
    settings = make_settings(fake, tmp_path, packs_dir, DISCORD_THREADS="true")
    async with running(fake, settings, clock, guild) as studybot:
        question = await studybot.quiz(alice, difficulty="medium")
        post_id = await _post_id(studybot, question.id)
        call = await fake.wait_for_call(
            "POST", f"/channels/{question.channel_id}/messages/{question.id}/threads"
        )
        assert call.json["name"] == f"#{post_id} · When is the autograd graph built?"
        assert call.json["auto_archive_duration"] == 1440


async def test_no_thread_by_default(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    await studybot.quiz(alice, difficulty="medium")
    assert fake.calls_to("POST", "/channels/{c}/messages/{m}/threads") == []


async def test_a_refused_thread_keeps_the_question_and_logs_a_warning(
    fake: FakeDiscord,
    guild: FakeGuild,
    tmp_path: Path,
    packs_dir: Path,
    clock: SimulatedClock,
    alice: FakeMember,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = make_settings(fake, tmp_path, packs_dir, DISCORD_THREADS="true")
    async with running(fake, settings, clock, guild) as studybot:
        fake.fail_next("POST", "/channels/{c}/messages/{m}/threads")  # 403 Missing Permissions
        question = await studybot.quiz(alice, difficulty="medium")
        await fake.wait_for_call("POST", "/channels/{c}/messages/{m}/threads")
        post_id = await _post_id(studybot, question.id)
        reply = await (await fake.click(question, alice, label="B")).response()
        assert reply.ephemeral
    warnings = [r for r in caplog.records if r.name == "bot.adapters.discord.client"]
    assert any(
        f"no discussion thread for post {post_id}" in r.getMessage() and r.levelname == "WARNING"
        for r in warnings
    )
