"""Community questions written before their workspace was recorded are given to it.

Migration 0019 finds where each existing ``community`` question was written: the approved
suggestion it came from, or the audit log's "question add" of an admin's ``/write``; the
newest writer of an id wins (an id freed by a retired question may be written again).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.storage.database import open_database
from bot.storage.migrate import available_migrations

T = "2026-01-01T00:00:00+00:00"
LATER = "2026-02-01T00:00:00+00:00"


def _before_owners(path: Path, *, workspaces: int) -> None:
    """A database as studybot left it before 0019, with questions written in it."""
    conn = sqlite3.connect(path)
    for migration in available_migrations():
        if migration.name == "community_owners":
            break
        conn.executescript(migration.sql)
        conn.execute(f"PRAGMA user_version = {migration.version}")
    for ws in range(1, workspaces + 1):
        conn.execute(
            "INSERT INTO workspaces (id, platform, external_id, created_at) VALUES (?, 'x', ?, ?)",
            (ws, f"w{ws}", T),
        )
        conn.execute(
            "INSERT INTO members (id, workspace_id, external_id, display_name, created_at) "
            "VALUES (?, ?, 'm', 'm', ?)",
            (ws, ws, T),
        )
    conn.execute(
        "INSERT INTO packs (id, slug, title, content_hash, synced_at) "
        "VALUES (1, 'community', 'Community', 'h', ?)",
        (T,),
    )
    for n in range(1, 4):
        conn.execute(
            "INSERT INTO questions (pack_id, slug, kind, difficulty) "
            "VALUES (1, ?, 'multiple_choice', 'easy')",
            (f"community-{n}",),
        )
    conn.commit()
    conn.close()


def _suggestion(path: Path, workspace: int, item: str, at: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO suggestions (workspace_id, member_id, channel, question, prompt, status, "
            "item_id, created_at, decided_at) VALUES (?, ?, 'c', '{}', 'p', 'approved', ?, ?, ?)",
            (workspace, workspace, item, at, at),
        )


def _written(path: Path, workspace: int, item: str, at: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO audit_log (workspace_id, at, actor, actor_name, via, action, detail) "
            "VALUES (?, ?, 'a', 'a', 'chat', 'question add', ?)",
            (workspace, at, f"{item} into community.yaml"),
        )


async def _owners(path: Path) -> dict[str, int]:
    db = await open_database(path)
    try:
        rows = await db.fetchall("SELECT item_id, workspace_id FROM community_items")
    finally:
        await db.close()
    return {str(r[0]): int(r[1]) for r in rows}


async def test_each_question_goes_to_the_workspace_that_wrote_it_last(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    _before_owners(path, workspaces=2)
    _suggestion(path, 2, "community-1", T)
    _written(path, 1, "community-1", LATER)  # retired, then the id written again by 1
    _written(path, 2, "community-2", T)
    # community-3: nothing says where; with two workspaces it is nobody's.
    assert await _owners(path) == {"community-1": 1, "community-2": 2}


async def test_with_one_workspace_every_question_is_its(tmp_path: Path) -> None:
    path = tmp_path / "one.sqlite3"
    _before_owners(path, workspaces=1)
    _written(path, 1, "community-2", T)
    assert await _owners(path) == {f"community-{n}": 1 for n in range(1, 4)}
