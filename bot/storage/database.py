"""The database handle the stores are given, whichever engine is behind it.

``open_database(target)`` opens the embedded SQLite file (a path) or PostgreSQL (a
``postgresql://`` URL) and brings its schema up to date. Stores read with :meth:`fetchall` and
friends, and write inside ``async with db.write() as tx``: one transaction, committed on
success and rolled back on any exception, on either engine.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import asyncpg

from bot.core.database_url import is_postgres_url
from bot.storage.engine import WRITABLE_TIMEOUT, Database, Row, Tx
from bot.storage.postgres import PostgresDatabase
from bot.storage.sqlite import SqliteDatabase

__all__ = [
    "CHUNK",
    "INTEGRITY_ERRORS",
    "WRITABLE_TIMEOUT",
    "Database",
    "Row",
    "Tx",
    "chunks",
    "is_postgres_url",
    "open_database",
]

T = TypeVar("T")

#: What a broken constraint raises on either engine (a duplicate, a missing foreign row).
INTEGRITY_ERRORS: tuple[type[Exception], ...] = (
    sqlite3.IntegrityError,
    asyncpg.IntegrityConstraintViolationError,
)

#: Items per ``IN (...)`` list or multi-row statement: well under both engines' parameter limits.
CHUNK = 400


def chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


async def open_database(target: Path | str) -> Database:
    """The SQLite file at ``target``, or PostgreSQL when it is a ``postgresql://`` URL; the
    schema is brought up to date before it is returned."""
    if is_postgres_url(target):
        return await PostgresDatabase.connect(str(target))
    return await SqliteDatabase.open_file(Path(target))
