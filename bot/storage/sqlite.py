"""The embedded engine: one writer connection serialised by a lock, one reader connection.

SQLite allows one writer at a time; a single aiosqlite connection shared by concurrent
coroutines would interleave their transactions, so every write goes through :meth:`write`
(``BEGIN IMMEDIATE`` ... ``COMMIT`` under an ``asyncio.Lock``). Reads use a second connection,
so they see only committed data (WAL snapshots) and never wait behind a long write.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite

from bot.log import get_logger
from bot.storage.dialect import SQLITE
from bot.storage.engine import Database, Params, Row, Tx
from bot.storage.migrate import apply_migrations

__all__ = ["SqliteDatabase"]

log = get_logger(__name__)
_AUTOCHECKPOINT = 1000  # pages: SQLite's default
_WORKER_STOP_TIMEOUT = 5.0  # seconds; the stop is one queued call, done in microseconds


async def _open(path: Path, **options: Any) -> aiosqlite.Connection:
    """``aiosqlite.connect``, but a file that cannot be opened leaves no thread behind."""
    connecting = aiosqlite.connect(path, **options)
    try:
        return await connecting
    except BaseException:
        await _worker_stopped(connecting)
        raise


async def _connect(path: Path) -> aiosqlite.Connection:
    conn = await _open(path, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        await conn.execute("PRAGMA foreign_keys = ON")
        await conn.execute("PRAGMA busy_timeout = 5000")
        # WAL + NORMAL: a commit survives a crash or kill -9 of this process (the WAL is
        # written before commit returns); only an OS crash may lose the last transactions.
        await conn.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        await conn.close()  # or its worker thread keeps the process alive
        raise
    return conn


async def _worker_stopped(conn: aiosqlite.Connection) -> None:
    """Wait for the worker thread of a connection that failed to open (a directory, no
    permission) to finish.

    aiosqlite queues the thread's stop but does not wait for it; the thread then reports back
    to this event loop, and if ``asyncio.run`` has closed the loop by then, it dies with a
    "RuntimeError: Event loop is closed" traceback printed after our one-line error.
    """
    thread = getattr(conn, "_thread", None)  # aiosqlite keeps no public handle on it
    if isinstance(thread, threading.Thread) and thread.is_alive():
        await asyncio.to_thread(thread.join, _WORKER_STOP_TIMEOUT)
    await asyncio.sleep(0)  # run the thread's last callback (its stop result) on this loop


class SqliteTx(Tx):
    """A write transaction on the writer connection (one trip to its thread per statement)."""

    sql = SQLITE

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        async with self._conn.execute(sql, params) as cursor:
            return cursor.rowcount

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        await self._conn.executemany(sql, rows)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return list(await self._conn.execute_fetchall(sql, params))

    async def reserve_ids(self, table: str, count: int) -> list[int]:
        # BEGIN IMMEDIATE holds the file's one write lock (against other processes too), so
        # nobody else can insert into `table` before this transaction commits.
        rows = await self._conn.execute_fetchall(f"SELECT coalesce(max(id), 0) FROM {table}")
        start = int(next(iter(rows))[0]) + 1
        return list(range(start, start + count))


class SqliteDatabase(Database):
    """The embedded file; open with ``open_database(path)``. Migrations run on open."""

    sql = SQLITE

    def __init__(self, path: Path, writer: aiosqlite.Connection, reader: aiosqlite.Connection):
        super().__init__()
        self.path = path
        self.target = str(path)
        self._writer = writer
        self._reader = reader

    @classmethod
    async def open_file(cls, path: Path) -> SqliteDatabase:
        path.parent.mkdir(parents=True, exist_ok=True)
        writer = await _connect(path)
        try:
            async with writer.execute("PRAGMA journal_mode = WAL") as cursor:
                mode = await cursor.fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                log.warning("database %s is not in WAL mode (%s)", path, mode and mode[0])
            version = await apply_migrations(writer)
            reader = await _connect(path)
        except BaseException:
            await writer.close()
            raise
        db = cls(path, writer, reader)
        db.schema_version = version
        return db

    async def close(self) -> None:
        async with self._lock:
            await self._reader.close()
            await self._writer.close()

    # --- writes ------------------------------------------------------------------------------

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Tx]:
        """``BEGIN IMMEDIATE`` .. commit on the writer; the caller holds the write lock.

        ``BEGIN`` is inside the ``try``: a task cancelled while it is in flight (a timeout, a
        shutdown) still has it run on the connection's thread, and the rollback queued after
        it undoes it, so the connection is never left in a transaction nobody owns.
        """
        conn = self._writer
        try:
            await conn.execute("BEGIN IMMEDIATE")
            yield SqliteTx(conn)
        except BaseException:
            await conn.rollback()
            raise
        else:
            await conn.commit()

    @asynccontextmanager
    async def checkpoints_held(self) -> AsyncIterator[None]:
        """Hold SQLite's automatic WAL checkpoints during a burst of writes, then run one.

        A checkpoint syncs the database file; landing in the middle of the scheduler's 09:00
        burst it delays the questions still to be sent. The WAL simply grows for a moment.
        """
        async with self._lock:
            await self._writer.execute("PRAGMA wal_autocheckpoint = 0")
        try:
            yield
        finally:
            async with self._lock:
                await self._writer.execute(f"PRAGMA wal_autocheckpoint = {_AUTOCHECKPOINT}")
                await self._writer.execute("PRAGMA wal_checkpoint(PASSIVE)")

    # --- reads -------------------------------------------------------------------------------

    # One trip to the connection's thread per query (execute, fetch and close together):
    # each trip costs far more than a small query itself.

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return list(await self._reader.execute_fetchall(sql, params))

    # --- maintenance -------------------------------------------------------------------------

    async def backup(self, destination: Path) -> None:
        """An online, consistent copy (SQLite backup API) while the bot keeps running.

        It reads through a connection of its own, from one snapshot, so answers keep being
        written and leaderboards read while the copy is made.
        """
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = destination.with_name(destination.name + ".partial")
        partial.unlink(missing_ok=True)
        try:
            source = await _open(self.path)
            try:
                target = await _open(partial)
                try:
                    # One step: SQLite restarts a stepwise backup whenever another connection
                    # writes, so a busy bot could keep it from ever finishing. In WAL mode the
                    # step's read snapshot blocks no writer, and it runs on its own thread.
                    await source.backup(target, pages=-1)
                finally:
                    await target.close()
            finally:
                await source.close()
            partial.replace(destination)
        except BaseException:
            partial.unlink(missing_ok=True)  # a failed copy leaves nothing behind
            raise

    async def reset_sequences(self) -> None:
        """Nothing to do: an ``INTEGER PRIMARY KEY`` takes the largest id plus one."""

    async def integrity_problems(self) -> list[str]:
        """``PRAGMA integrity_check`` and ``foreign_key_check``; empty when all is well."""
        problems = [
            str(row[0])
            for row in await self.fetchall("PRAGMA integrity_check")
            if str(row[0]) != "ok"
        ]
        for row in await self.fetchall("PRAGMA foreign_key_check"):
            problems.append(f"foreign key: {row[0]} row {row[1]} -> {row[2]}")
        return problems
