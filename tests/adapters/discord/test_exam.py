"""``/exam`` on Discord: registered from the table (one flat command, its action a choice),
answered through the one front door; the real discord.py client against the Discord fake."""

from __future__ import annotations

import pytest

from tests.adapters.discord.conftest import Studybot, embed_text
from tests.fakes.discord_api import FakeDiscord, FakeMember, FakeMessage

pytestmark = pytest.mark.timeout(60)


async def _exam(studybot: Studybot, member: FakeMember, options: dict[str, object]) -> FakeMessage:
    ix = await studybot.fake.slash_command(studybot.guild, "general", member, "exam", options)
    return await ix.reply()


async def test_exam_is_set_by_an_admin_and_shown_privately_to_a_member(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, admin: FakeMember
) -> None:
    stores = [*fake.state.guild_commands.values(), fake.state.global_commands]
    [synced] = [c for store in stores for c in store.values() if c["name"] == "exam"]
    names = [o["name"] for o in synced["options"]]
    assert names[0] == "action" and {"date", "tag", "channel"} <= set(names)
    action = synced["options"][0]
    assert [c["value"] for c in action["choices"]] == ["show", "set", "clear", "prep"]

    refused = await _exam(studybot, alice, {"action": "set", "date": "2026-04-01"})
    assert refused.ephemeral and "Only admins set the exam date" in refused.content
    bad = await _exam(studybot, admin, {"action": "set", "date": "2020-01-01"})
    assert bad.ephemeral and "has passed" in bad.content + embed_text(bad)
    done = await _exam(studybot, admin, {"action": "set", "date": "2026-03-20", "tag": "leaf"})
    assert "Exam on Fri 20 Mar 2026, in 16 days (leaf)" in embed_text(done)
    shown = await _exam(studybot, alice, {})
    assert shown.ephemeral and "Your readiness" in embed_text(shown)
    assert "leaf: not studied yet" in embed_text(shown)
    prep = await _exam(studybot, alice, {"action": "prep", "switch": "on"})
    assert prep.ephemeral and "Exam prep is on" in prep.content + embed_text(prep)
    assert "Exam prep is on" in embed_text(await _exam(studybot, alice, {}))
    without = await _exam(studybot, alice, {"action": "prep"})
    assert without.ephemeral and "switch" in without.content + embed_text(without)


async def test_an_accommodation_is_set_privately_on_discord(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember, admin: FakeMember
) -> None:
    ix = await studybot.fake.slash_command(studybot.guild, "general", alice, "accommodation", {})
    none = await ix.reply()  # alice is a member of the workspace now
    assert none.ephemeral and "You have no accommodation here" in none.content + embed_text(none)
    ix = await studybot.fake.slash_command(
        studybot.guild,
        "general",
        admin,
        "accommodation",
        {"action": "set", "member": alice, "time": "1.5"},
    )
    done = await ix.reply()
    assert done.ephemeral and "x1.5 time" in done.content + embed_text(done)
    ix = await studybot.fake.slash_command(studybot.guild, "general", alice, "accommodation", {})
    own = await ix.reply()
    assert own.ephemeral and "Your accommodation: x1.5 time" in own.content + embed_text(own)
