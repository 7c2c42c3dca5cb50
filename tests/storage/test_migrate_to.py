"""`studybot db migrate-to`: a SQLite database with real history, copied into PostgreSQL."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from bot.storage.transfer import TABLES
from tests.conftest import START, TEST_PACKS, fresh_schema
from tests.helpers import member, schedule_command
from tests.test_cli import studybot

pytestmark = pytest.mark.slow


async def _history(path: Path) -> None:
    """A bot's worth of rows: schedules, posts, answers (scores, streaks, reviews), settings."""
    clock = SimulatedClock(START)
    async with await open_database(path) as db:
        built = build_services(db, clock, default_timezone="UTC", rng=random.Random(5))
        service = built.services
        await service.packs.sync(load_packs(TEST_PACKS).packs)
        admin = member("root", admin=True)
        await schedule_command(service, admin, "add", ["09:00"])
        for _day in range(3):
            draft = await service.quiz.post_question(admin)
            for name in ("ann", "bob", "cy"):
                for choice in ("A", "good"):
                    try:
                        await service.quiz.answer(member(name), draft.post.id, choice)
                        break
                    except Exception:
                        continue
            clock.advance(timedelta(days=1))


@pytest.fixture
async def target() -> AsyncIterator[str]:
    async with fresh_schema() as url:
        yield url


async def _contents(target: Path | str) -> dict[str, list[tuple[object, ...]]]:
    async with await open_database(target) as db:
        return {
            table: sorted(
                (tuple(row) for row in await db.fetchall(f"SELECT * FROM {table}")),
                key=repr,
            )
            for table in TABLES
        }


async def test_every_table_is_copied_row_for_row_and_checked(target: str, tmp_path: Path) -> None:
    source = tmp_path / "bot.sqlite3"
    await _history(source)
    proc = await asyncio.to_thread(studybot, "db", "migrate-to", target, "--db", str(source))
    assert proc.returncode == 0, proc.stderr
    assert "row counts and checks agree" in proc.stdout
    assert "answers: " in proc.stdout
    before, after = await _contents(source), await _contents(target)
    assert before["answers"], "the history has answers"
    for table in TABLES:
        assert before[table] == after[table], table
    # The copy leaves the planner its statistics: without them PostgreSQL took the copied
    # answers for a handful of rows and planned the group mastery's sums into seconds.
    async with await open_database(target) as db:
        unanalyzed = await db.fetchall(
            "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() "
            "AND last_analyze IS NULL AND last_autoanalyze IS NULL"
        )
    assert not unanalyzed, unanalyzed
    # The bot then runs on it: new rows get ids after the copied ones.
    async with await open_database(target) as db, db.write() as tx:
        new_id = await tx.fetchval(
            "INSERT INTO workspaces (platform, external_id, created_at) "
            "VALUES ('test', 'new', 'x') RETURNING id"
        )
        assert new_id > max(int(row[0]) for row in before["workspaces"])
    # The operator's tools then work on it through DATABASE_URL (no SQLite file needed).
    env = {"DATABASE_URL": target, "STUDYBOT_DB": str(tmp_path / "absent.sqlite3")}
    check = await asyncio.to_thread(studybot, "db", "check", env=env)
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith("ok: postgresql://")
    export = await asyncio.to_thread(studybot, "scores", "export", "--csv", env=env)
    from_file = await asyncio.to_thread(studybot, "scores", "export", "--csv", "--db", str(source))
    assert export.returncode == 0 and from_file.returncode == 0, export.stderr
    assert export.stdout == from_file.stdout  # the same grade book from either engine
    assert ",id-ann,ann," in export.stdout
    backup = await asyncio.to_thread(studybot, "db", "backup", f"{tmp_path / 'b'}/", env=env)
    assert backup.returncode == 0, backup.stderr  # the packs only, and it says so
    assert backup.stdout.startswith("PostgreSQL: backed up only the packs") and (
        "pg_dump" in backup.stdout
    )
    # A second copy into a database that is no longer empty is refused, and changes nothing.
    again = await asyncio.to_thread(studybot, "db", "migrate-to", target, "--db", str(source))
    assert again.returncode == 1
    assert "the target database is not empty: workspaces" in again.stderr


async def test_every_table_of_the_schema_is_in_the_copy_list(tmp_path: Path) -> None:
    async with await open_database(tmp_path / "s.sqlite3") as db:
        rows = await db.fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")
    assert {str(r[0]) for r in rows} == set(TABLES)


def test_a_url_that_is_not_postgresql_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "bot.sqlite3"
    asyncio.run(_history(source))
    proc = studybot("db", "migrate-to", "mysql://x", "--db", str(source))
    assert proc.returncode == 2
    assert "expected a postgresql://... URL" in proc.stderr
