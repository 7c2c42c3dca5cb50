"""``studybot db migrate-to``: copy a SQLite database into an empty PostgreSQL one.

Tables are copied in foreign-key order, with their ids, in one PostgreSQL transaction (a
failure leaves the target empty). ``questions.current_version_id`` points forward into
``question_versions``, so it is filled in after both are there. Afterwards the identity
sequences are moved past the copied ids, and the caller compares row counts and runs the
``db check`` problems on both sides.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bot.storage.engine import Queries
from bot.storage.postgres import PostgresDatabase

__all__ = ["TABLES", "TransferError", "copy_sqlite_to_postgres", "row_counts"]

#: Every table, parents before children.
TABLES = (
    "workspaces",
    "channels",
    "members",
    "packs",
    "questions",
    "question_versions",
    "schedules",
    "rounds",
    "posts",
    "answers",
    "exercise_attempts",
    "round_hints",
    "round_skip_votes",
    "round_team_members",
    "score_imports",  # before the score events that name it
    "score_events",
    "score_totals",
    "channel_packs",
    "health_probe",
    "reviews",
    "cards",
    "card_holds",
    "review_settings",
    "review_reminders",
    "setting_changes",
    "question_reports",
    "question_flags",
    "hint_views",
    "recaps",
    "recap_posts",
    "suggestions",
    "web_signins",  # the admin page's links and sessions: hashes only, so safe to carry over
    "web_sessions",
    "rewards",
    "reward_holders",
    "audit_log",
    "community_items",
    "exams",
    "accommodations",
    "exam_prep",
    "exam_prep_done",
)
_BATCH = 5000
_DEFERRED = {"questions": "current_version_id"}  # filled in once its target table is copied


class TransferError(RuntimeError):
    pass


def _read(path: Path, table: str) -> tuple[list[str], Iterator[list[tuple[Any, ...]]]]:
    # Read in batches from worker threads, one batch at a time: never two threads at once.
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    cursor = conn.execute(f"SELECT * FROM {table}")
    columns = [d[0] for d in cursor.description]

    def batches() -> Iterator[list[tuple[Any, ...]]]:
        try:
            while rows := cursor.fetchmany(_BATCH):
                yield rows
        finally:
            conn.close()

    return columns, batches()


async def row_counts(db: Queries) -> dict[str, int]:
    return {table: int(await db.fetchval(f"SELECT count(*) FROM {table}")) for table in TABLES}


async def copy_sqlite_to_postgres(
    source: Path, target: PostgresDatabase, progress: Callable[[str, int], None] | None = None
) -> None:
    """Copy every table of ``source`` (already migrated to the current schema) into the empty
    ``target``; ``progress`` hears how many rows each table had."""
    existing = await row_counts(target)
    if any(existing.values()):
        busy = ", ".join(f"{t} ({n})" for t, n in existing.items() if n)
        raise TransferError(f"the target database is not empty: {busy}")
    pending: list[tuple[str, str, list[tuple[Any, Any]]]] = []
    async with target.raw_transaction() as conn:
        for table in TABLES:
            columns, batches = await asyncio.to_thread(_read, source, table)
            deferred = _DEFERRED.get(table)
            index = columns.index(deferred) if deferred else -1
            later: list[tuple[Any, Any]] = []
            total = 0
            while (batch := await asyncio.to_thread(next, batches, None)) is not None:
                if deferred:
                    later += [(row[0], row[index]) for row in batch if row[index] is not None]
                    batch = [(*row[:index], None, *row[index + 1 :]) for row in batch]
                await conn.copy_records_to_table(table, records=batch, columns=columns)
                total += len(batch)
            if deferred and later:
                pending.append((table, deferred, later))
            if progress is not None:
                progress(table, total)
        for table, column, values in pending:  # every table is there now
            await conn.executemany(f"UPDATE {table} SET {column} = $2 WHERE id = $1", values)
    await target.reset_sequences()
    await target.analyze()  # the copied tables' statistics, before the bot plans a query
