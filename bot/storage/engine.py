"""What the stores need from a database engine: a transaction handle and a row.

studybot runs on an embedded SQLite file by default and on PostgreSQL (``DATABASE_URL``) when
it outgrows one machine. The stores write one SQL dialect, the common part of the two (``?`` or
``:name`` placeholders, ``ON CONFLICT``, ``RETURNING``); each engine's :class:`Tx` runs it, so
no store knows which engine it is on. What cannot be common (migrations, backups, integrity
checks, holding checkpoints) lives in the engine's :class:`Database`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

from bot.storage.dialect import Dialect

__all__ = ["WRITABLE_TIMEOUT", "Database", "Params", "Row", "Tx"]

WRITABLE_TIMEOUT = 2.0  # seconds /healthz waits for the write lock before calling it stuck

#: Positional (``?``) or named (``:name``) parameters.
Params = Sequence[Any] | Mapping[str, Any]


class Row(Protocol):
    """A result row, by position or by column name (``sqlite3.Row``, ``asyncpg.Record``)."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def keys(self) -> Iterable[str]: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Any]: ...


class Tx(ABC):
    """One write transaction, on whichever engine. Commit and rollback are the database's."""

    engine: str  # "sqlite" or "postgresql"
    sql: Dialect  # the phrases the engines spell differently

    @abstractmethod
    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; return how many rows it changed."""

    @abstractmethod
    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        """Run one statement once per parameter row."""

    @abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Run one statement and return its rows (a ``RETURNING`` clause included)."""

    @abstractmethod
    async def reserve_ids(self, table: str, count: int) -> list[int]:
        """``count`` new, increasing ids for rows about to be inserted into ``table`` with
        explicit ids (when the caller must know each row's id before it writes it)."""

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]


class Database(ABC):
    """Open with ``async with await open_database(path_or_url) as db``."""

    engine: str  # "sqlite" or "postgresql"
    sql: Dialect  # the phrases the engines spell differently
    #: What was opened, for messages: the file path, or the URL without its password.
    target: str

    def __init__(self) -> None:
        self.schema_version = 0

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

    @abstractmethod
    def write(self) -> AbstractAsyncContextManager[Tx]:
        """One write transaction; commits on success, rolls back on any exception."""

    @abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Committed data only: a read never sees a write transaction in flight."""

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None

    async def fetchval(self, sql: str, params: Params = ()) -> Any:
        row = await self.fetchone(sql, params)
        return None if row is None else row[0]

    # --- operations ----------------------------------------------------------------------------

    @abstractmethod
    def checkpoints_held(self) -> AbstractAsyncContextManager[None]:
        """Around a burst of writes (the scheduler's 09:00): defer the engine's housekeeping."""

    @abstractmethod
    async def writable(self, timeout: float = WRITABLE_TIMEOUT) -> bool:  # noqa: ASYNC109
        """Whether the database takes a write now (for ``/healthz``)."""

    @abstractmethod
    async def backup(self, destination: Path) -> None:
        """An online, consistent copy to a file (SQLite only; PostgreSQL has ``pg_dump``)."""

    @abstractmethod
    async def integrity_problems(self) -> list[str]:
        """The engine's own consistency checks; empty when all is well."""

    @abstractmethod
    async def reset_sequences(self) -> None:
        """After rows were copied in with their ids: new rows must get ids above them."""
