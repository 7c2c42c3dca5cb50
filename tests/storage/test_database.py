"""The database file: migrations, pragmas, backups and integrity checks on real files."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from bot.storage.database import INTEGRITY_ERRORS, Database, open_database
from bot.storage.migrate import MigrationError, available_migrations


async def test_open_migrates_a_new_file_and_sets_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    async with await open_database(path) as db:
        latest = available_migrations()[-1].version
        assert db.schema_version == latest
        assert await db.fetchval("PRAGMA user_version") == latest
        assert str(await db.fetchval("PRAGMA journal_mode")).lower() == "wal"
        assert await db.fetchval("PRAGMA foreign_keys") == 1
        tables = {
            r[0] for r in await db.fetchall("SELECT name FROM sqlite_master WHERE type='table'")
        }
    assert {
        "workspaces",
        "channels",
        "members",
        "packs",
        "questions",
        "question_versions",
        "posts",
        "answers",
        "score_events",
        "schedules",
    } <= tables


async def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "again.sqlite3"
    async with await open_database(path) as db, db.write() as conn:
        await conn.execute(
            "INSERT INTO workspaces (platform, external_id, created_at) VALUES ('t', 'w', 'x')"
        )
    async with await open_database(path) as db:
        assert await db.fetchval("SELECT count(*) FROM workspaces") == 1


async def test_a_database_from_a_newer_studybot_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 999")
    with pytest.raises(MigrationError, match="newer than this studybot"):
        await open_database(path)


async def test_a_path_that_cannot_be_opened_leaves_no_thread_behind(tmp_path: Path) -> None:
    """A directory given as the database: the error is raised and nothing keeps running, so
    no "Event loop is closed" traceback follows the one-line error once the loop is gone."""
    before = set(threading.enumerate())
    with pytest.raises(sqlite3.OperationalError, match="unable to open database file"):
        await open_database(tmp_path)
    started = [t.name for t in threading.enumerate() if t not in before]
    assert [name for name in started if not name.startswith("asyncio_")] == []  # the executor


async def test_foreign_keys_are_enforced(db: Database) -> None:
    with pytest.raises(INTEGRITY_ERRORS):
        async with db.write() as conn:
            await conn.execute(
                "INSERT INTO channels (workspace_id, external_id, created_at) VALUES (42, 'c', 'x')"
            )


async def test_a_failed_write_rolls_back_entirely(db: Database) -> None:
    with pytest.raises(INTEGRITY_ERRORS):
        async with db.write() as conn:
            await conn.execute(
                "INSERT INTO workspaces (platform, external_id, created_at) VALUES ('t', 'a', 'x')"
            )
            await conn.execute(
                "INSERT INTO workspaces (platform, external_id, created_at) VALUES ('t', 'a', 'x')"
            )
    assert await db.fetchval("SELECT count(*) FROM workspaces") == 0


@pytest.mark.sqlite_only
async def test_backup_is_a_consistent_usable_copy(db: Database, tmp_path: Path) -> None:
    async with db.write() as conn:
        await conn.execute(
            "INSERT INTO workspaces (platform, external_id, created_at) VALUES ('t', 'b', 'x')"
        )
    copy = tmp_path / "backups" / "copy.sqlite3"
    await db.backup(copy)
    assert not copy.with_name("copy.sqlite3.partial").exists()
    async with await open_database(copy) as restored:
        assert await restored.fetchval("SELECT external_id FROM workspaces") == "b"
        assert await restored.integrity_problems() == []


async def test_integrity_check_reports_broken_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "broken.sqlite3"
    async with await open_database(path) as db:
        assert await db.integrity_problems() == []
    with sqlite3.connect(path) as conn:  # write behind the bot's back, keys off
        conn.execute(
            "INSERT INTO channels (workspace_id, external_id, created_at) VALUES (9, 'c', 'x')"
        )
    async with await open_database(path) as db:
        problems = await db.integrity_problems()
    assert problems and "channels" in problems[0]


async def test_both_engines_have_the_same_migrations_tables_and_columns(tmp_path: Path) -> None:
    from tests.conftest import fresh_schema

    sqlite_files = [(m.version, m.name) for m in available_migrations()]
    assert [(m.version, m.name) for m in available_migrations("postgresql")] == sqlite_files
    async with await open_database(tmp_path / "s.sqlite3") as lite:
        tables = [
            str(r[0])
            for r in await lite.fetchall(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        sqlite_columns = {
            t: sorted(str(r[1]) for r in await lite.fetchall(f"PRAGMA table_info({t})"))
            for t in tables
        }
    async with fresh_schema() as url, await open_database(url) as pg:
        rows = await pg.fetchall(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name <> 'studybot_schema'"
        )
        pg_columns: dict[str, list[str]] = {}
        for row in rows:
            pg_columns.setdefault(str(row[0]), []).append(str(row[1]))
        assert {t: sorted(c) for t, c in pg_columns.items()} == sqlite_columns
        assert pg.schema_version == lite.schema_version == len(sqlite_files)
