"""/review export: a member's own review cards as an Anki deck; on the console, a file beside
the database whose path is printed."""

from __future__ import annotations

import re
from pathlib import Path

from bot.services.bundle import Services
from tests.conftest import TEST_PACKS
from tests.helpers import member
from tests.questions.test_anki import _collection
from tests.test_cli import studybot


def _fronts(apkg: bytes) -> list[str]:
    conn = _collection(apkg)
    return [str(row[0]).split("\x1f")[0] for row in conn.execute("SELECT flds FROM notes")]


def test_console_saves_the_deck_beside_the_database_and_prints_its_path(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    script = "/review export\n/quiz mini --difficulty medium\n/answer A\n/review export\n/quit\n"
    proc = studybot("console", "--db", str(db), "--packs", str(TEST_PACKS), stdin=script)
    assert proc.returncode == 0, proc.stderr
    assert "You have no review cards yet" in proc.stdout  # the first export, before answering
    saved = re.findall(
        r"\(attached: (studybot-review-me\.apkg), [\d,]+ bytes, saved to (.+)\)", proc.stdout
    )
    assert len(saved) == 1, proc.stdout
    path = Path(saved[0][1])
    assert path.parent == tmp_path / "s-files"  # beside the database
    assert "1 card(s) as an Anki deck" in proc.stdout
    assert _fronts(path.read_bytes()) == ["When is the autograd graph built?"]


async def test_the_deck_holds_only_the_members_own_cards(service: Services) -> None:
    alice, bob = member("alice"), member("bob")
    draft = await service.quiz.post_question(alice, pack="mini", difficulty="medium")
    await service.quiz.answer(alice, draft.post.id, "A")
    deck = await service.review.export(alice)
    assert deck.ephemeral
    [attachment] = deck.attachments
    assert attachment.filename == "studybot-review-alice.apkg"
    assert _fronts(attachment.content) == ["When is the autograd graph built?"]
    nothing = await service.review.export(bob)
    assert nothing.ephemeral and not nothing.attachments
    assert "You have no review cards yet" in nothing.plain_text()
