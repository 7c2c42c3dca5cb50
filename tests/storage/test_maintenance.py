"""Operating the database file while the bot writes: backups finish, /healthz's write probe."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest

from bot.storage.database import Database


async def _keep_writing(db: Database, stop: asyncio.Event) -> int:
    """Commit small writes back to back, as a busy bot does, until ``stop``."""
    commits = 0
    while not stop.is_set():
        async with db.write() as conn:
            await conn.execute(
                "INSERT INTO workspaces (platform, external_id, created_at) VALUES ('t', ?, 'x')",
                (f"w{commits}",),
            )
        commits += 1
        await asyncio.sleep(0)
    return commits


@pytest.mark.sqlite_only
async def test_a_backup_finishes_while_the_bot_keeps_writing(db: Database, tmp_path: Path) -> None:
    # ~8 MiB, so a copy takes many SQLite pages (a stepwise copy restarts on every write)
    async with db.write() as conn:
        await conn.execute("CREATE TABLE ballast (b BLOB)")
        await conn.executemany("INSERT INTO ballast VALUES (?)", [(b"x" * 8192,)] * 1000)
    stop = asyncio.Event()
    writer = asyncio.create_task(_keep_writing(db, stop))
    try:
        copy = tmp_path / "backups" / "busy.sqlite3"
        # A liveness bound, not a speed target: the copy takes well under a second; a
        # stepwise copy that restarts on every commit took 20 s and more here.
        await asyncio.wait_for(db.backup(copy), 10)
    finally:
        stop.set()
        commits = await writer
    assert commits > 0  # the bot really was writing during the copy
    with contextlib.closing(sqlite3.connect(copy)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*) FROM ballast").fetchone() == (1000,)


async def test_the_health_probe_writes_a_row(db: Database) -> None:
    assert await db.writable()
    assert await db.fetchval("SELECT count(*) FROM health_probe") == 1
    assert await db.writable()  # the same row, updated
    assert await db.fetchval("SELECT count(*) FROM health_probe") == 1


async def test_a_stuck_writer_fails_the_health_probe(db: Database) -> None:
    held, release = asyncio.Event(), asyncio.Event()

    async def stuck() -> None:
        async with db.write():
            held.set()
            await release.wait()

    task = asyncio.create_task(stuck())
    await held.wait()
    try:
        assert await db.writable(timeout=0.2) is False
    finally:
        release.set()
        await task
    assert await db.writable()


async def test_a_probe_at_its_deadline_leaves_writes_working(db: Database) -> None:
    """However the probe's timeout falls, no transaction is left open behind later writes."""
    for timeout in (0.0, 0.000_01, 0.001):
        await db.writable(timeout=timeout)
        async with db.write() as conn:
            await conn.execute(
                "INSERT INTO workspaces (platform, external_id, created_at) VALUES ('t', ?, 'x')",
                (f"after-{timeout}",),
            )
    assert await db.fetchval("SELECT count(*) FROM workspaces WHERE platform = 't'") == 3


async def test_a_write_cancelled_in_flight_is_rolled_back(db: Database) -> None:
    async def insert() -> None:
        async with db.write() as conn:
            await conn.execute(
                "INSERT INTO workspaces (platform, external_id, created_at) VALUES ('t', 'x', 'x')"
            )
            await asyncio.sleep(10)

    task = asyncio.create_task(insert())
    await asyncio.sleep(0.05)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    async with db.write() as conn:  # the writer is free and not inside a transaction
        await conn.execute("SELECT 1")
    assert await db.fetchval("SELECT count(*) FROM workspaces") == 0
