"""Daily backups: one a day whatever the restarts, the newest N kept, each a usable database."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from datetime import timedelta
from pathlib import Path

from bot.backups import BackupJob, backup_name
from bot.core.clock import SimulatedClock
from bot.storage.database import Database, open_database


async def test_backups_are_daily_and_pruned(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    job = BackupJob(db, clock, folder, keep=3)
    task = asyncio.create_task(job.run())

    async def todays_copy_is_done() -> None:
        """Wait (real time, generously) for the job to write and prune today's copy."""
        today = folder / backup_name(clock.now())
        for _ in range(3000):  # up to 30 s
            if today.exists() and not list(folder.glob("*.partial*")) and len(job.backups()) <= 3:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {today.name} after 30 s: {sorted(folder.iterdir())}")

    try:
        for _ in range(5):
            await todays_copy_is_done()
            clock.advance(timedelta(days=1))
        await todays_copy_is_done()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "studybot-20260307-090000.sqlite3",
        "studybot-20260308-090000.sqlite3",
        "studybot-20260309-090000.sqlite3",
    ]
    with sqlite3.connect(folder / names[-1]) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_restart_does_not_make_an_extra_copy(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    await BackupJob(db, clock, folder, keep=7).backup_once()
    clock.advance(timedelta(hours=5))
    restarted = BackupJob(db, clock, folder, keep=7)
    assert restarted.next_due() == clock.now() + timedelta(hours=19)
    (folder / "notes.txt").write_text("not a backup")
    assert len(restarted.backups()) == 1


async def test_a_backup_that_fails_at_the_end_leaves_no_partial_file(tmp_path: Path) -> None:
    db_path = tmp_path / "bot.sqlite3"
    destination = tmp_path / "taken"
    destination.mkdir()
    (destination / "keep").write_text("a folder in the way")  # the final rename must fail
    async with await open_database(db_path) as db:
        try:
            await db.backup(destination)
        except OSError:
            pass
        else:
            raise AssertionError("a backup onto a non-empty folder must fail")
    leftovers = await asyncio.to_thread(lambda: [p.name for p in tmp_path.glob("*.partial")])
    assert leftovers == []
