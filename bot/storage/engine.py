"""What the stores need from a database engine: a transaction handle and a row.

studybot runs on an embedded SQLite file by default and on PostgreSQL (``DATABASE_URL``) when
it outgrows one machine. The stores write one SQL dialect, the common part of the two (``?`` or
``:name`` placeholders, ``ON CONFLICT``, ``RETURNING``); each engine's :class:`Tx` runs it, so
no store knows which engine it is on. What cannot be common (migrations, backups, integrity
checks, holding checkpoints) lives in the engine's :class:`Database`.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

from bot.log import get_logger
from bot.storage.dialect import Dialect

__all__ = ["WRITABLE_TIMEOUT", "Database", "Params", "Queries", "Row", "Tx"]

log = get_logger(__name__)
WRITABLE_TIMEOUT = 2.0  # seconds /healthz waits for the write lock before calling it stuck
_PROBE = (
    "INSERT INTO health_probe (id, checked_at) VALUES (1, ?) "
    "ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at"
)

#: Positional (``?``) or named (``:name``) parameters.
Params = Sequence[Any] | Mapping[str, Any]


class Row(Protocol):
    """A result row, by position or by column name (``sqlite3.Row``, ``asyncpg.Record``)."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> Iterable[str]: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...


class Queries(ABC):
    """Reading rows, the same for a transaction and for the database's committed data."""

    sql: Dialect  # the phrases the engines spell differently

    @property
    def engine(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self.sql.name

    @abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run one statement and return its rows (a ``RETURNING`` clause included)."""

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]


class Tx(Queries):
    """One write transaction, on whichever engine. Commit and rollback are the database's."""

    @abstractmethod
    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return how many rows it changed."""

    @abstractmethod
    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once per parameter row."""

    @abstractmethod
    async def reserve_ids(self, table: str, count: int) -> list[int]:
        """``count`` new, increasing ids for rows about to be inserted into ``table`` with
        explicit ids (when the caller must know each row's id before it writes it)."""


class Database(Queries):
    """Open with ``async with await open_database(path_or_url) as db``.

    Writes in one process are serialised by one lock on either engine (SQLite allows one
    writer at a time anyway), so a store sees the same semantics on both; several processes
    meet in the database's own locks and constraints.
    """

    #: What was opened, for messages: the file path, or the URL without its password.
    target: str

    def __init__(self) -> None:
        self.schema_version = 0
        self._lock = asyncio.Lock()

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # --- the stores' interface -------------------------------------------------------------

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Tx]:
        """One write transaction; commits on success, rolls back on any exception."""
        async with self._lock, self._transaction() as tx:
            yield tx

    @abstractmethod
    def _transaction(self) -> AbstractAsyncContextManager[Tx]:
        """The engine's transaction; the caller holds the write lock."""

    @abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Committed data only: a read never sees a write transaction in flight."""

    # --- operations ----------------------------------------------------------------------------

    @abstractmethod
    def checkpoints_held(self) -> AbstractAsyncContextManager[None]:
        """Around a burst of writes (the scheduler's 09:00): defer the engine's housekeeping."""

    async def writable(self, timeout: float = WRITABLE_TIMEOUT) -> bool:  # noqa: ASYNC109
        """Whether the database takes a write now (for ``/healthz``).

        A real row is written and committed, so a full disk or a read-only file fails the
        check (by raising), and a writer that holds the lock longer than ``timeout`` makes
        it ``False`` instead of passing unnoticed.
        """
        try:
            async with asyncio.timeout(timeout):  # only the wait: never cut a write short
                await self._lock.acquire()
        except TimeoutError:
            log.warning("the database write lock was not free within %.1f s", timeout)
            return False
        try:
            async with self._transaction() as tx:
                await tx.execute(_PROBE, (datetime.now(UTC).isoformat(timespec="seconds"),))
        finally:
            self._lock.release()
        return True

    @abstractmethod
    async def backup(self, destination: Path) -> None:
        """An online, consistent copy to a file (SQLite only; PostgreSQL has ``pg_dump``)."""

    @abstractmethod
    async def integrity_problems(self) -> list[str]:
        """The engine's own consistency checks; empty when all is well."""

    @abstractmethod
    async def reset_sequences(self) -> None:
        """After rows were copied in with their ids: new rows must get ids above them."""
