"""Numbered SQL migrations, one schema written for each engine.

SQLite's are ``migrations/NNNN_name.sql``, tracked by ``PRAGMA user_version``; PostgreSQL's
are ``migrations/postgresql/NNNN_name.sql`` (the same numbers and names: a test holds them to
it), tracked in the one-row table ``studybot_schema``. Each pending file runs in its own
transaction together with the version bump, so a failed migration leaves the database exactly
as it was. A database written by a newer studybot is refused rather than guessed at. On
PostgreSQL an advisory lock lets several bot processes start at once: one migrates, the others
wait and find nothing left to do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import aiosqlite
import asyncpg
from asyncpg import Record
from asyncpg.pool import PoolConnectionProxy

from bot.log import get_logger

__all__ = [
    "Migration",
    "MigrationError",
    "apply_migrations",
    "apply_postgres_migrations",
    "available_migrations",
]

log = get_logger(__name__)
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK_KEY = 0x5754_4459  # pg_advisory_lock key: "STDY"


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def available_migrations(engine: str = "sqlite") -> list[Migration]:
    folder = resources.files("bot.storage").joinpath("migrations")
    if engine == "postgresql":
        folder = folder.joinpath("postgresql")
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    for expected, migration in enumerate(found, start=1):
        if migration.version != expected:
            raise MigrationError(f"migration numbers must be 1..N without gaps; {migration.name}")
    return found


async def apply_migrations(conn: aiosqlite.Connection) -> int:
    """Bring the schema up to date; return the resulting version."""
    migrations = available_migrations()
    latest = migrations[-1].version if migrations else 0
    async with conn.execute("PRAGMA user_version") as cursor:
        row = await cursor.fetchone()
    current = int(row[0]) if row else 0
    if current > latest:
        raise _newer(current, latest)
    for migration in migrations[current:]:
        log.info("applying migration %04d_%s", migration.version, migration.name)
        script = (
            f"BEGIN IMMEDIATE;\n{migration.sql}\n"
            f"PRAGMA user_version = {migration.version};\nCOMMIT;"
        )
        try:
            await conn.executescript(script)
        except Exception as exc:
            if conn.in_transaction:
                await conn.rollback()
            raise MigrationError(
                f"migration {migration.version:04d}_{migration.name} failed: {exc}"
            ) from exc
    return latest


def _newer(current: int, latest: int) -> MigrationError:
    return MigrationError(
        f"database schema is version {current}, newer than this studybot knows ({latest}); "
        "upgrade studybot or restore a backup"
    )


async def apply_postgres_migrations(conn: PoolConnectionProxy[Record]) -> int:
    """Bring a PostgreSQL schema up to date; return the resulting version."""
    migrations = available_migrations("postgresql")
    latest = migrations[-1].version if migrations else 0
    await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS studybot_schema (version INTEGER NOT NULL)")
        current = await conn.fetchval("SELECT max(version) FROM studybot_schema") or 0
        if current > latest:
            raise _newer(current, latest)
        for migration in migrations[current:]:
            log.info("applying migration %04d_%s (postgresql)", migration.version, migration.name)
            try:
                async with conn.transaction():
                    await conn.execute(migration.sql)
                    await conn.execute("DELETE FROM studybot_schema")
                    await conn.execute(
                        "INSERT INTO studybot_schema (version) VALUES ($1)", migration.version
                    )
            except asyncpg.PostgresError as exc:
                raise MigrationError(
                    f"migration {migration.version:04d}_{migration.name} failed: {exc}"
                ) from exc
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
    return latest
