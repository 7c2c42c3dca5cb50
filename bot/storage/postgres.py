"""PostgreSQL through asyncpg, for a bot that outgrows one machine (``DATABASE_URL``).

The stores' SQL is written once, with SQLite's ``?`` and ``:name`` placeholders;
:func:`translate` turns it into PostgreSQL's ``$1`` form (once per statement text, cached).
Writes in one process still go through one lock, as on SQLite, so a store sees the same
semantics on both engines; several processes meet in PostgreSQL's row locks and unique
constraints (an occurrence's post, an answer), never in a lock of ours.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import asyncpg
from asyncpg import Record
from asyncpg.pool import PoolConnectionProxy

from bot.core.database_url import redact
from bot.log import get_logger
from bot.storage.dialect import POSTGRESQL
from bot.storage.engine import Database, Params, Row, Tx
from bot.storage.migrate import apply_postgres_migrations

__all__ = ["PostgresDatabase", "redact", "translate"]

log = get_logger(__name__)
POOL_SIZE = 10
# Quoted text and identifiers are copied as they are; a placeholder is `?` or `:name`.
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|::|\?|:([A-Za-z_][A-Za-z0-9_]*)")


@lru_cache(maxsize=1024)
def translate(sql: str) -> tuple[str, tuple[str, ...] | None]:
    """``sql`` with ``$n`` placeholders, and the parameter names in order (``None``: by position).

    >>> translate("SELECT * FROM t WHERE a = ? AND b = '?'")
    ("SELECT * FROM t WHERE a = $1 AND b = '?'", None)
    >>> translate("SELECT :x, :y, :x")
    ('SELECT $1, $2, $1', ('x', 'y'))
    """
    names: list[str] = []
    count = 0

    def placeholder(match: re.Match[str]) -> str:
        nonlocal count
        text = match.group(0)
        if text == "?":
            count += 1
            return f"${count}"
        name = match.group(1)
        if name is None:  # quoted text or a `::` cast
            return text
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    out = _TOKENS.sub(placeholder, sql)
    if names and count:
        raise ValueError(f"mixed ? and :name placeholders in {sql!r}")
    return out, (tuple(names) if names else None)


def _args(names: tuple[str, ...] | None, params: Params) -> list[Any]:
    if names is None:
        if isinstance(params, Mapping):
            if params:
                raise TypeError("named parameters given to a statement with ? placeholders")
            return []
        return list(params)
    if not isinstance(params, Mapping):
        raise TypeError("positional parameters given to a statement with :name placeholders")
    return [params[name] for name in names]


def _changed(status: str) -> int:
    """Rows changed, from a command tag such as ``INSERT 0 3`` or ``UPDATE 2``."""
    last = status.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


def _numeric(text: str) -> int | float:
    """``sum()`` and ``avg()`` of integers are ``numeric``: give the stores plain numbers, as
    SQLite does, instead of ``Decimal``."""
    return int(text) if text.lstrip("-").isdigit() else float(text)


async def _setup(conn: asyncpg.Connection[Record]) -> None:
    await conn.set_type_codec(
        "numeric", encoder=str, decoder=_numeric, schema="pg_catalog", format="text"
    )


class PostgresTx(Tx):
    """A write transaction on one pooled connection."""

    sql = POSTGRESQL

    def __init__(self, conn: PoolConnectionProxy[Record]) -> None:
        self._conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        text, names = translate(sql)
        return _changed(await self._conn.execute(text, *_args(names, params)))

    async def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        text, names = translate(sql)
        batch = [_args(names, row) for row in rows]
        if batch:
            await self._conn.executemany(text, batch)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        text, names = translate(sql)
        return list(await self._conn.fetch(text, *_args(names, params)))

    async def reserve_ids(self, table: str, count: int) -> list[int]:
        # From the table's identity sequence: no other process is handed the same ids.
        rows = await self._conn.fetch(
            "SELECT nextval(pg_get_serial_sequence($1, 'id')) FROM generate_series(1, $2)",
            table,
            count,
        )
        return sorted(int(row[0]) for row in rows)


class PostgresDatabase(Database):
    """A connection pool; migrations run (under an advisory lock) when it opens."""

    sql = POSTGRESQL

    def __init__(self, url: str, pool: asyncpg.Pool) -> None:
        super().__init__()
        self.url = url
        self.target = redact(url)
        self._pool = pool

    @classmethod
    async def connect(cls, url: str, *, pool_size: int = POOL_SIZE) -> PostgresDatabase:
        try:
            pool = await asyncpg.create_pool(url, min_size=1, max_size=pool_size, init=_setup)
        except (OSError, asyncpg.PostgresError) as exc:
            raise ConnectionError(f"cannot connect to {redact(url)}: {exc}") from exc
        try:
            async with pool.acquire() as conn:
                version = await apply_postgres_migrations(conn)
        except BaseException:
            await pool.close()
            raise
        db = cls(url, pool)
        db.schema_version = version
        return db

    async def close(self) -> None:
        async with self._lock:
            await self._pool.close()

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Tx]:
        async with self._pool.acquire() as conn, conn.transaction():
            yield PostgresTx(conn)

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        text, names = translate(sql)
        return list(await self._pool.fetch(text, *_args(names, params)))

    @asynccontextmanager
    async def raw_transaction(self) -> AsyncIterator[PoolConnectionProxy[Record]]:
        """A transaction on an asyncpg connection itself, for a bulk ``COPY`` (migrate-to)."""
        async with self._lock, self._pool.acquire() as conn, conn.transaction():
            yield conn

    @asynccontextmanager
    async def checkpoints_held(self) -> AsyncIterator[None]:
        """Nothing to hold: PostgreSQL's checkpoints do not stall a burst of commits."""
        yield

    async def backup(self, destination: Path) -> None:
        raise NotImplementedError(
            "studybot backs up its SQLite file; for PostgreSQL use pg_dump "
            f"(pg_dump --format=custom --file {destination} DATABASE_URL)"
        )

    async def integrity_problems(self) -> list[str]:
        """Constraints PostgreSQL was told to skip (``NOT VALID``); it enforces the rest itself."""
        rows = await self.fetchall(
            "SELECT conrelid::regclass::text, conname FROM pg_constraint "
            "WHERE NOT convalidated AND connamespace = current_schema()::regnamespace"
        )
        return [f"constraint {row[1]} on {row[0]} is not validated" for row in rows]

    async def analyze(self) -> None:
        """Gather the planner's statistics now. After a bulk copy the tables have none until
        autovacuum comes round, and without them PostgreSQL takes a 100,000-row table for a
        few rows: the group mastery's weekly sums picked a per-post index intersection that
        ran 24 s instead of 0.2 s."""
        async with self.raw_transaction() as conn:
            tables = await conn.fetch(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            )
            for row in tables:
                await conn.execute(f'ANALYZE "{row[0]}"')

    async def reset_sequences(self) -> None:
        async with self.write() as tx:
            tables = await tx.fetchall(
                "SELECT table_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND column_name = 'id' "
                "AND is_identity = 'YES'"
            )
            for row in tables:
                table = str(row[0])
                await tx.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"coalesce(max(id), 0) + 1, false) FROM {table}"
                )
