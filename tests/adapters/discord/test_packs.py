"""``/pack list|enable|disable|upload`` through the real discord.py client and the fake Discord.

The packs folder is the test's own copy (``packs_dir``: mini, cards, drill); an upload that
installs writes beside the database (``studybot-packs/``), and the same runtime can ask for the
new pack at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adapters.discord.conftest import Studybot, embed_text
from tests.fakes.discord_api import FakeDiscord, FakeGuild, FakeMember
from tests.helpers import FRESH

pytestmark = pytest.mark.timeout(60)


async def _pack(
    studybot: Studybot,
    member: FakeMember,
    verb: str,
    options: dict[str, Any] | None = None,
    channel: str = "questions",
) -> Any:
    return await studybot.fake.slash_command(
        studybot.guild, channel, member, "pack", options or {}, subcommand=verb
    )


async def _quiz_titles(studybot: Studybot, member: FakeMember, channel: str, n: int) -> set[str]:
    titles = set()
    for _ in range(n):
        message = await studybot.quiz(member, channel)
        titles.add(message.embeds[0]["title"].split(" · ")[1])
    return titles


async def test_disable_and_enable_change_what_quiz_posts_in_that_channel_only(
    studybot: Studybot, admin: FakeMember, alice: FakeMember
) -> None:
    reply = await (await _pack(studybot, admin, "disable", {"name": "mini"})).response()
    assert reply.ephemeral
    assert "**mini** is off in #questions" in embed_text(reply.data)
    assert await _quiz_titles(studybot, alice, "questions", 6) == {"Flashcards", "Drill"}
    assert "Mini pack" in await _quiz_titles(studybot, alice, "general", 8)

    listing = await (await _pack(studybot, alice, "list")).response()
    assert listing.ephemeral
    assert "**mini** — Mini pack (6 questions) · **off** here" in embed_text(listing.data)

    back = await (await _pack(studybot, admin, "enable", {"name": "mini"})).response()
    assert "**mini** is on in #questions again" in embed_text(back.data)
    assert "Mini pack" in await _quiz_titles(studybot, alice, "questions", 8)


async def test_members_are_refused_and_unknown_packs_get_a_suggestion(
    studybot: Studybot, alice: FakeMember, quizmaster: FakeMember
) -> None:
    refused = await (await _pack(studybot, alice, "disable", {"name": "mini"})).response()
    assert refused.ephemeral and "Only admins can turn packs on or off" in refused.content
    assert "Mini pack" in await _quiz_titles(studybot, alice, "questions", 8)
    # DISCORD_ADMIN_ROLE counts as admin here too.
    typo = await (await _pack(studybot, quizmaster, "disable", {"name": "minni"})).response()
    assert typo.ephemeral
    assert typo.content == "There is no pack called `minni`. Did you mean `mini`?"


async def test_enable_and_disable_autocomplete_put_the_packs_that_would_change_first(
    fake: FakeDiscord, guild: FakeGuild, studybot: Studybot, admin: FakeMember
) -> None:
    await (await _pack(studybot, admin, "disable", {"name": "drill"})).response()

    async def suggestions(verb: str) -> list[str]:
        ix = await fake.autocomplete(
            guild, "questions", admin, "pack", {"name": ""}, focused="name", subcommand=verb
        )
        return [c["name"] for c in (await ix.response()).choices]

    assert (await suggestions("enable"))[0] == "drill — Drill (off here)"
    assert (await suggestions("disable"))[-1] == "drill — Drill (off here)"
    assert "mini — Mini pack (on here)" in await suggestions("disable")


async def test_an_admin_uploads_a_pack_and_it_can_be_asked_at_once(
    studybot: Studybot, admin: FakeMember, alice: FakeMember, packs_dir: Path
) -> None:
    ix = await _pack(studybot, admin, "upload", {"file": ("fresh (1).yaml", FRESH.encode())})
    first = await ix.response()
    assert first.type == 5 and first.ephemeral  # deferred, privately: checking takes time
    reply = await ix.reply()
    assert reply.ephemeral
    text = embed_text(reply)
    assert "✅ fresh (1).yaml: pack fresh, 1 question, no problems" in text
    assert "Installed **fresh** — Fresh questions (1 question) as `fresh.yaml`" in text
    # Installed with the database (studybot.sqlite3 -> studybot-packs/), not in the packs folder.
    assert (packs_dir.parent / "studybot-packs" / "fresh.yaml").read_text() == FRESH
    assert not (packs_dir / "fresh.yaml").exists()
    question = await studybot.quiz(alice, pack="fresh")
    assert "Which attribute holds a leaf tensor's gradient" in embed_text(question)


async def test_a_members_upload_is_checked_and_reported_but_not_installed(
    studybot: Studybot, alice: FakeMember, packs_dir: Path
) -> None:
    broken = FRESH.replace("difficulty: easy", "difficulty: ultra")
    ix = await _pack(studybot, alice, "upload", {"file": ("fresh.yaml", broken.encode())})
    text = embed_text(await ix.reply())
    assert "❌ fresh.yaml: 1 error" in text  # the bad item (not also "no items at all")
    assert "fresh.yaml:6: f-flash-1.difficulty: expected one of" in text
    assert "Fix the errors and upload the file again to check it." in text

    ix = await _pack(studybot, alice, "upload", {"file": ("fresh.yaml", FRESH.encode())})
    assert "Ask an admin to upload it to install it." in embed_text(await ix.reply())
    assert not (packs_dir / "fresh.yaml").exists()
    assert not (packs_dir.parent / "studybot-packs" / "fresh.yaml").exists()


async def test_a_long_report_comes_with_the_full_list_as_a_file(
    studybot: Studybot, admin: FakeMember
) -> None:
    items = "".join(
        f"  - id: bad-{n}\n    kind: flashcard\n    difficulty: hard\n    prompt: Q{n}\n"
        for n in range(20)
    )
    raw = f"pack: many\ntitle: Many\nitems:\n{items}".encode()
    reply = await (await _pack(studybot, admin, "upload", {"file": ("many.yaml", raw)})).reply()
    assert reply.ephemeral
    listed = reply.files["many-problems.txt"].decode().splitlines()
    assert len(listed) == 20 and listed[0] == "many.yaml:4: bad-0.answer: required field is missing"
    assert "all 20 are in the attached `many-problems.txt`" in embed_text(reply)


@pytest.mark.parametrize(
    ("filename", "size", "says"),
    [
        ("notes.txt", 10, "`notes.txt` is not a pack file"),
        ("big.yaml", 2 * 1024 * 1024, "`big.yaml` is 2 MiB; a pack file uploaded in chat can be"),
    ],
)
async def test_wrong_files_are_refused_before_they_are_downloaded(
    fake: FakeDiscord, studybot: Studybot, admin: FakeMember, filename: str, size: int, says: str
) -> None:
    ix = await _pack(studybot, admin, "upload", {"file": (filename, b"x" * size)})
    response = await ix.response()
    assert response.type == 4 and response.ephemeral  # answered at once, not deferred
    assert response.content.startswith(says)
    assert fake.attachment_downloads == []


async def test_an_accepted_upload_is_downloaded_once(
    fake: FakeDiscord, studybot: Studybot, alice: FakeMember
) -> None:
    ix = await _pack(studybot, alice, "upload", {"file": ("fresh.yaml", FRESH.encode())})
    await ix.reply()
    [upload] = ix.payload["data"]["options"][0]["options"]
    assert fake.attachment_downloads == [upload["value"]]
