"""Slash commands and their replies; errors answered privately from the one handler."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import discord
import pytest

from bot.core.errors import APOLOGY
from tests.adapters.discord.conftest import Studybot, embed_text
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember

pytestmark = pytest.mark.timeout(60)


async def _answer(fake: FakeDiscord, studybot: Studybot, member: FakeMember, label: str) -> None:
    question = await studybot.quiz(member, difficulty="medium")
    assert (await (await fake.click(question, member, label=label)).response()).ephemeral


async def test_leaderboard_lists_members_by_points(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    await _answer(fake, studybot, alice, "B")  # correct
    ix = await studybot.command(bob, "leaderboard", {"window": "all"})
    response = await ix.response()
    assert not response.ephemeral
    assert response.allowed_mentions == {"parse": []}
    text = embed_text(response.data)
    assert "Leaderboard — all time" in text
    assert "**alice** —" in text
    assert "bob, you have no points all time yet." in text


async def test_leaderboard_defaults_to_this_week(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    text = embed_text((await (await studybot.command(alice, "leaderboard")).response()).data)
    assert "Leaderboard — this week" in text
    assert "No points yet" in text


async def test_stats_for_yourself_and_for_another_member(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    await _answer(fake, studybot, alice, "B")
    own = await (await studybot.command(alice, "stats")).response()
    assert own.ephemeral
    mine = embed_text(own.data)
    assert "Your stats" in mine
    assert "Answered: 1 · correct: 1" in mine
    [picture] = own.files  # the study-days heatmap and retention bars, in the embed
    assert picture.filename == "study-stats.png" and picture.data.startswith(b"\x89PNG\r\n")
    assert own.embeds[0]["image"]["url"] == "attachment://study-stats.png"

    theirs = await (await studybot.command(bob, "stats", {"member": alice})).response()
    assert theirs.ephemeral
    assert "Stats for alice" in embed_text(theirs.data)

    missing = await (await studybot.command(alice, "stats", {"member": bob})).response()
    assert missing.ephemeral
    assert missing.content == "bob has not answered any questions here yet."
    assert str(bob.id) not in missing.content


async def test_help_lists_the_commands_privately_and_admin_ones_for_admins(
    fake: FakeDiscord,
    studybot: Studybot,
    alice: FakeMember,
    admin: FakeMember,
    quizmaster: FakeMember,
) -> None:
    member = await (await studybot.command(alice, "help")).response()
    assert member.ephemeral
    text = embed_text(member.data)
    # Usage generated from the command table, in Discord's option style.
    assert "`/quiz [pack:PACK] [difficulty:easy|medium|hard] [tag:TAG] [kind:KIND]`" in text
    assert "`/review remind:HH:MM|off [timezone:TZ]` — a DM on days when cards are due" in text
    assert "**Admins**" not in embed_text(member.data)
    for who in (admin, quizmaster):  # Manage Server, or the role DISCORD_ADMIN_ROLE names by id
        reply = await (await studybot.command(who, "help")).response()
        assert "**Admins**" in embed_text(reply.data), who.name


async def test_pack_list(fake: FakeDiscord, studybot: Studybot, alice: FakeMember) -> None:
    reply = await (await studybot.command(alice, "pack", subcommand="list")).response()
    text = embed_text(reply.data)
    assert "**mini** — Mini pack (6 questions)" in text
    assert "**cards** — Flashcards (1 question) · on" in text


async def test_pack_autocomplete_suggests_slugs(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, alice: FakeMember
) -> None:
    ix = await fake.autocomplete(guild, "general", alice, "quiz", {"pack": "dr"}, focused="pack")
    response = await ix.response()
    assert response.type == 8
    assert response.choices == [{"name": "drill — Drill", "value": "drill"}]
    everything = await fake.autocomplete(
        guild, "general", alice, "quiz", {"pack": ""}, focused="pack"
    )
    assert sorted(c["value"] for c in (await everything.response()).choices) == [
        "cards",
        "drill",
        "mini",
    ]
    by_title = await fake.autocomplete(
        guild, "general", alice, "quiz", {"pack": "flash"}, focused="pack"
    )
    assert [c["value"] for c in (await by_title.response()).choices] == ["cards"]


async def test_study_error_becomes_an_ephemeral_reply(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, caplog: pytest.LogCaptureFixture
) -> None:
    ix = await studybot.command(alice, "quiz", {"pack": "minny"})
    response = await ix.response()
    assert response.type == 4
    assert response.ephemeral
    assert response.content == "There is no pack called `minny`. Did you mean `mini`?"
    assert response.allowed_mentions == {"parse": []}
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_unexpected_error_is_logged_with_context_and_answered_with_the_apology(
    fake: FakeDiscord,
    guild: FakeGuild,
    studybot: Studybot,
    alice: FakeMember,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the database caught fire")

    monkeypatch.setattr(studybot.service.standings, "leaderboard", broken)
    response = await (await studybot.command(alice, "leaderboard")).response()
    assert response.ephemeral
    assert response.content == APOLOGY
    [record] = [r for r in caplog.records if r.name == "bot.adapters.discord.errors"]
    assert record.levelno == logging.ERROR
    message = record.getMessage()
    assert "/leaderboard" in message
    assert str(guild.id) in message
    assert str(alice.id) in message
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == "the database caught fire"
    assert "the database caught fire" not in response.content

    monkeypatch.undo()  # the bot is still running
    assert "Leaderboard" in embed_text(
        (await (await studybot.command(alice, "leaderboard")).response()).data
    )


async def test_unexpected_error_in_a_button_is_answered_with_the_apology(
    fake: FakeDiscord,
    studybot: Studybot,
    alice: FakeMember,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    question = await studybot.quiz(alice, difficulty="medium")

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise KeyError("boom")

    monkeypatch.setattr(studybot.service.quiz, "answer", broken)
    response = await (await fake.click(question, alice, label="A")).response()
    assert response.ephemeral
    assert response.content == APOLOGY
    [record] = [r for r in caplog.records if r.name == "bot.adapters.discord.errors"]
    assert "button answer:" in record.getMessage()


async def test_commands_in_a_dm_are_refused_politely(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    ix = await fake.slash_command(None, None, alice, "leaderboard")
    response = await ix.response()
    assert response.ephemeral
    assert response.content.startswith("studybot works in servers")


async def test_embeds_have_colours_by_tone(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    question = await studybot.quiz(alice, difficulty="medium")
    assert question.embeds[0]["color"] == discord.Colour.blurple().value


async def test_settings_are_listed_privately_and_changed_by_admins_only(
    studybot: Studybot, alice: FakeMember, admin: FakeMember
) -> None:
    listing = await (await studybot.command(alice, "settings")).response()
    assert listing.ephemeral and "**timezone**: UTC" in embed_text(listing.data)
    refused = await (
        await studybot.command(alice, "settings", {"setting": "timezone", "value": "Europe/Berlin"})
    ).response()
    assert refused.ephemeral and refused.content == "Only admins can change `timezone`."
    changed = await (
        await studybot.command(admin, "settings", {"setting": "timezone", "value": "Europe/Berlin"})
    ).response()
    assert changed.ephemeral and "**timezone**: UTC → **Europe/Berlin**" in embed_text(changed.data)
    points = await (
        await studybot.command(admin, "settings", {"setting": "points-easy", "value": "12"})
    ).response()
    assert "**points-easy**: 10 → **12**" in embed_text(points.data)
    alone = await (await studybot.command(admin, "settings", {"value": "12"})).response()
    assert alone.content == "Pick the `setting` to change as well as its `value`."
    after = await (await studybot.command(alice, "settings")).response()
    assert "**timezone**: Europe/Berlin" in embed_text(after.data)
    assert "**points-easy**: 12" in embed_text(after.data)


async def test_history_and_question_id_are_private_and_never_spoil_an_open_question(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    question = await studybot.quiz(alice, channel="general", difficulty="medium")
    post_id = int(str(await studybot.runtime.db.fetchval("SELECT max(id) FROM posts")))
    assert question.id is not None
    history = await (await studybot.command(bob, "history")).response()
    assert history.ephemeral and f"**#{post_id}**" in embed_text(history.data)
    assert "· open" in embed_text(history.data)
    peek = await (await studybot.command(bob, "question", {"id": post_id})).response()
    assert peek.ephemeral and peek.components == []
    assert "Still open in #" in embed_text(peek.data) and "✅" not in embed_text(peek.data)
    missing = await (await studybot.command(bob, "question", {"id": 9999})).response()
    assert missing.ephemeral and "There is no question #9999 here" in missing.content


async def test_a_member_reports_a_question_and_an_admin_sees_and_resolves_it(
    studybot: Studybot, alice: FakeMember, admin: FakeMember
) -> None:
    await studybot.quiz(alice, channel="general", difficulty="medium")
    sent = await (
        await studybot.command(alice, "report", {"reason": "the answer should be A"})
    ).response()
    assert sent.ephemeral and "reached the admins" in embed_text(sent.data)
    refused = await (await studybot.command(alice, "reports")).response()
    assert refused.ephemeral and refused.content.startswith("Only admins can see the reports")
    listing = await (await studybot.command(admin, "reports")).response()
    assert "alice" in embed_text(listing.data) and "the answer should be A" in embed_text(
        listing.data
    )
    packs = await (await studybot.command(alice, "pack", subcommand="list")).response()
    assert "🚩 1 open report" in embed_text(packs.data)
    done = await (await studybot.command(admin, "reports", {"resolve": "d-mc-1"})).response()
    assert "Resolved 1 report on `d-mc-1`" in embed_text(done.data)


async def test_leaderboard_here_counts_only_this_channels_questions(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, bob: FakeMember
) -> None:
    await _answer(fake, studybot, alice, "B")  # in #questions
    board = await (await studybot.command(bob, "leaderboard", {"here": True})).response()
    assert "Leaderboard in #general" in embed_text(board.data)
    assert "No points yet" in embed_text(board.data)
    everywhere = await (await studybot.command(bob, "leaderboard")).response()
    assert "alice" in embed_text(everywhere.data)


async def test_the_weekly_recap_is_posted_in_its_channel_on_its_day(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, admin: FakeMember
) -> None:
    from datetime import timedelta

    set_up = await (
        await studybot.command(admin, "recap", {"action": "on", "when": "fri 18:00"})
    ).response()
    assert set_up.ephemeral and "every Friday at 18:00" in embed_text(set_up.data)
    refused = await (await studybot.command(alice, "recap", {"action": "off"})).response()
    assert refused.content.startswith("Only admins")
    service, adapter, clock = studybot.service, studybot.adapter, studybot.clock
    assert await service.recaps.deliver(adapter) == 0  # Wednesday
    clock.advance(timedelta(days=2, hours=9))  # Friday 18:00 UTC
    assert await service.recaps.deliver(adapter) == 1
    assert await service.recaps.deliver(adapter) == 0  # once a week
    general = studybot.guild.channel("general")
    [recap] = [m for m in fake.messages_in(general) if "Weekly recap" in embed_text(m)]
    assert "week of Mon 2 Mar" in embed_text(recap)


async def test_write_opens_a_modal_and_an_admins_question_is_added(
    fake: FakeDiscord, studybot: Studybot, admin: FakeMember, alice: FakeMember
) -> None:
    opened = await (
        await studybot.command(admin, "write", {"difficulty": "easy", "tags": "leaf, autograd"})
    ).response()
    assert opened.is_modal and opened.title == "Write a question"
    fields = {
        "Question": "Which tensor is a leaf: x = torch.ones(2, requires_grad=True) or y = x * 2?",
        "Choices (or the answer)": "* x\ny\nboth",
        "Why": "x was created by you; y was computed by an operation.",
    }
    submitted = await fake.submit_modal(opened.custom_id, admin, fields)
    result = await submitted.followup(0)
    assert result.ephemeral
    text = embed_text(result.payload)
    assert "community-1" in text and "Installed" in text
    question = await studybot.quiz(alice, channel="general", pack="community")
    assert "Which tensor is a leaf" in embed_text(question)


async def test_a_freeze_covers_a_missed_day_in_stats_and_the_streak_board(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    """Seven days in a row earn a freeze; the eighth day missed is covered by it."""
    for _ in range(7):
        question = await studybot.quiz(alice, kind="multiple_choice")
        await (await fake.click(question, alice, label="A")).response()
        studybot.clock.advance(timedelta(days=1))
    studybot.clock.advance(timedelta(days=1))  # a whole day without an answer
    mine = embed_text((await (await studybot.command(alice, "stats")).response()).data)
    assert "Streak: **7 days** (best 7)" in mine
    assert "Streak freezes: 0 held · 1 used" in mine
    board = await (await studybot.command(alice, "leaderboard", {"window": "streaks"})).response()
    assert not board.ephemeral
    assert "🥇 **alice** — 7 days" in embed_text(board.data)
    here = await studybot.command(alice, "leaderboard", {"window": "streaks", "here": True})
    refused = await here.response()
    assert refused.ephemeral and "no streak board for one channel" in refused.content


async def _dms_to(fake: FakeDiscord, member: FakeMember) -> list[str]:
    return [
        embed_text(m)
        for channel in fake.state.dm_channels.values()
        if channel.recipients[0].id == member.id
        for m in fake.messages_in(channel)
    ]


async def _suggest(fake: FakeDiscord, studybot: Studybot, who: FakeMember, prompt: str) -> str:
    opened = await (await studybot.command(who, "write")).response()
    fields = {"Question": prompt, "Choices (or the answer)": "* x\ny"}
    submitted = await fake.submit_modal(opened.custom_id, who, fields)
    result = await submitted.followup(0)
    assert result.ephemeral
    return embed_text(result.payload)


async def test_a_suggestion_approved_and_credited_and_one_rejected_with_its_reason(
    fake: FakeDiscord,
    studybot: Studybot,
    admin: FakeMember,
    alice: FakeMember,
    bob: FakeMember,
) -> None:
    queued = await _suggest(fake, studybot, alice, "Which tensor is a leaf: x or y = x * 2?")
    assert "Suggestion #1: valid, waiting for an admin" in queued
    await _suggest(fake, studybot, bob, "Which one requires grad: x or y?")

    refused = await (await studybot.command(alice, "suggestions")).followup(0)
    assert refused.ephemeral and "Only admins can see and decide" in str(refused.payload)
    listing = embed_text((await (await studybot.command(admin, "suggestions")).followup(0)).payload)
    assert "#1** · **alice**" in listing and "#2** · **bob**" in listing

    approve = await studybot.command(admin, "suggestions", {"action": "approve", "id": 1})
    approved = embed_text((await approve.followup(0)).payload)
    assert "Installed" in approved and "**alice** was told by direct message" in approved
    [told] = await _dms_to(fake, alice)
    assert "Your question was approved" in told and "community-1" in told

    reject = await studybot.command(
        admin, "suggestions", {"action": "reject", "id": 2, "reason": "too close to #1"}
    )
    assert "Rejected suggestion #2 by **bob**" in str((await reject.followup(0)).payload)
    [why] = await _dms_to(fake, bob)
    assert "Your question was not added" in why and "too close to #1" in why

    missing = await studybot.command(admin, "suggestions", {"action": "reject", "id": 2})
    usage = await missing.response()  # refused at the front door, before any work
    assert usage.ephemeral and "REASON is missing" in usage.content

    question = await studybot.quiz(bob, channel="general", pack="community")
    text = embed_text(question)
    assert "Which tensor is a leaf" in text
    assert f"Suggested by <@{alice.id}>" in text  # a mention in the embed: shown, never pinged
    assert question.payload.get("allowed_mentions", {}).get("parse", []) == []


async def test_stats_group_shows_admins_the_groups_mastery_picture(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, admin: FakeMember
) -> None:
    await _answer(fake, studybot, alice, "B")
    refused = await (await studybot.command(alice, "stats", {"group": True})).response()
    assert refused.ephemeral and "Only admins can see the group's mastery" in refused.content
    reply = await (await studybot.command(admin, "stats", {"group": True})).response()
    assert reply.ephemeral
    text = embed_text(reply.data)
    assert "Group mastery" in text and "fewer than 5 members" in text  # one member: withheld
    [picture] = reply.files
    assert picture.filename == "group-mastery.png" and picture.data.startswith(b"\x89PNG\r\n")
