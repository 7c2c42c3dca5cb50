"""Numbered SQL migrations (``migrations/NNNN_name.sql``) tracked by ``PRAGMA user_version``.

Each pending file runs in its own transaction together with the version bump, so a failed
migration leaves the database exactly as it was. A database written by a newer studybot is
refused rather than guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import aiosqlite

from bot.log import get_logger

__all__ = ["Migration", "MigrationError", "apply_migrations", "available_migrations"]

log = get_logger(__name__)
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    found: list[Migration] = []
    for entry in resources.files("bot.storage").joinpath("migrations").iterdir():
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
        raise MigrationError(
            f"database schema is version {current}, newer than this studybot knows ({latest}); "
            "upgrade studybot or restore a backup"
        )
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
