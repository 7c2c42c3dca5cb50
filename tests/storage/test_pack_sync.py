"""Syncing pack files into the database: idempotent, versioned, never losing history."""

from __future__ import annotations

import shutil
from pathlib import Path

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.storage.database import Database
from tests.conftest import TEST_PACKS
from tests.helpers import member


def _packs_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "packs"
    shutil.copytree(TEST_PACKS, folder)
    return folder


async def test_second_sync_of_unchanged_files_changes_nothing(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    built = build_services(db, clock)
    service = built.services
    folder = _packs_copy(tmp_path)
    first = await service.packs.sync(load_packs(folder).packs)
    assert first.added == 6 and first.updated == 0
    second = await service.packs.sync(load_packs(folder).packs)
    assert (second.added, second.updated, second.retired) == (0, 0, 0)
    assert await db.fetchval("SELECT count(*) FROM question_versions") == 6


async def test_an_edited_question_keeps_the_old_version_for_old_posts(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    built = build_services(db, clock)
    service = built.services
    folder = _packs_copy(tmp_path)
    await service.packs.sync(load_packs(folder).packs)
    draft = await service.quiz.post_question(member("ann"), pack="mini", difficulty="medium")
    assert "When is the autograd graph built?" in draft.message.plain_text()

    pack_file = folder / "mini.yaml"
    pack_file.write_text(
        pack_file.read_text().replace(
            "When is the autograd graph built?", "At what moment does autograd build its graph?"
        )
    )
    report = await service.packs.sync(load_packs(folder).packs)
    assert report.updated == 1
    assert await db.fetchval("SELECT count(*) FROM question_versions") == 7

    # The old post still reveals the text it was posted with...
    edit = await service.quiz.reveal(member("ann", admin=True), draft.post.id)
    assert "When is the autograd graph built?" in edit.message.plain_text()
    # ...and it counts as the same question: the channel sees the other five first.
    later = [
        (await service.quiz.post_question(member("ann"), pack="mini")).message for _ in range(5)
    ]
    assert sorted(m.question_id or "" for m in later) == [
        "d-flash-1",
        "d-mc-2",
        "d-mc-3",
        "d-open-1",
        "d-prac-1",
    ]


async def test_removed_items_and_packs_are_retired_not_deleted(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    built = build_services(db, clock)
    service = built.services
    folder = _packs_copy(tmp_path)
    await service.packs.sync(load_packs(folder).packs)
    (folder / "mini.yaml").unlink()
    report = await service.packs.sync(load_packs(folder).packs)
    assert report.retired == 1
    assert await db.fetchval("SELECT count(*) FROM questions") == 6
    assert await db.fetchval("SELECT count(*) FROM packs WHERE retired_at IS NOT NULL") == 1
    assert (await service.packs.listing()).plain_text() == "No packs are loaded."

    shutil.copy(TEST_PACKS / "mini.yaml", folder / "mini.yaml")
    await service.packs.sync(load_packs(folder).packs)
    assert "mini" in (await service.packs.listing()).plain_text()
