"""Schedules: which channel gets a question when, and where the scheduler left off with each.

The spec itself is stored as JSON written and read by :mod:`bot.services.schedule_book`;
storage keeps it as text and decides nothing about it. Admin edits and the scheduler touch different
columns (``paused``/``skip_until``/``deleted_at`` versus ``handled_until``), and every change is
one statement, so concurrent edits and a running scheduler can never undo each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.storage.database import Database, Row, chunks
from bot.storage.timefmt import from_db, from_db_opt, to_db

__all__ = ["ScheduleRow", "ScheduleStore"]

_SELECT = (
    "SELECT s.id, s.channel_id, c.workspace_id, s.spec, s.paused, s.skip_until, "
    "s.handled_until, s.created_by, s.created_at, s.updated_at "
    "FROM schedules s JOIN channels c ON c.id = s.channel_id "
    "WHERE s.deleted_at IS NULL "
)


@dataclass(frozen=True, slots=True)
class ScheduleRow:
    """One live (not removed) schedule as stored; ``spec`` is its JSON text."""

    id: int
    channel_id: int
    workspace_id: int
    spec: str
    paused: bool
    skip_until: datetime | None  # occurrences at or before this are skipped
    handled_until: datetime | None  # the scheduler has dealt with everything up to here
    created_by: int | None
    created_at: datetime
    updated_at: datetime


def _row(row: Row) -> ScheduleRow:
    return ScheduleRow(
        id=int(row[0]),
        channel_id=int(row[1]),
        workspace_id=int(row[2]),
        spec=str(row[3]),
        paused=bool(row[4]),
        skip_until=from_db_opt(row[5]),
        handled_until=from_db_opt(row[6]),
        created_by=row[7],
        created_at=from_db(row[8]),
        updated_at=from_db(row[9]),
    )


class ScheduleStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(
        self, *, channel_id: int, spec: str, created_by: int | None, now: datetime, limit: int
    ) -> ScheduleRow | None:
        """Add a schedule; ``None`` if the channel already has ``limit`` of them.

        The count and the insert share one write transaction, so concurrent adds cannot
        overshoot the limit.
        """
        stamp = to_db(now)
        async with self._db.write() as conn:
            count = await conn.fetchone(
                "SELECT count(*) FROM schedules WHERE channel_id = ? AND deleted_at IS NULL",
                (channel_id,),
            )
            if count is not None and int(count[0]) >= limit:
                return None
            inserted = await conn.fetchone(
                "INSERT INTO schedules (channel_id, spec, created_by, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?) RETURNING id",
                (channel_id, spec, created_by, stamp, stamp),
            )
            assert inserted is not None
            row = await conn.fetchone(_SELECT + "AND s.id = ?", (inserted[0],))
        assert row is not None
        return _row(row)

    async def get(self, schedule_id: int) -> ScheduleRow | None:
        row = await self._db.fetchone(_SELECT + "AND s.id = ?", (schedule_id,))
        return None if row is None else _row(row)

    async def in_channel(self, channel_id: int) -> list[ScheduleRow]:
        rows = await self._db.fetchall(
            _SELECT + "AND s.channel_id = ? ORDER BY s.id", (channel_id,)
        )
        return [_row(r) for r in rows]

    async def in_workspace(self, workspace_id: int) -> list[ScheduleRow]:
        """Every schedule of the workspace's channels, paused ones too (App Home, admins)."""
        rows = await self._db.fetchall(
            _SELECT + "AND c.workspace_id = ? ORDER BY s.id", (workspace_id,)
        )
        return [_row(r) for r in rows]

    async def active(self) -> list[ScheduleRow]:
        """Every schedule that may post (not paused, not removed): the scheduler's start-up."""
        rows = await self._db.fetchall(_SELECT + "AND s.paused = 0 ORDER BY s.id")
        return [_row(r) for r in rows]

    async def changed_since(self, since: datetime) -> list[int]:
        """Schedules created or changed (paused, skipped, removed) at or after ``since``: how
        a process learns of the edits that reached another process."""
        rows = await self._db.fetchall(
            "SELECT id FROM schedules WHERE updated_at >= ? ORDER BY id", (to_db(since),)
        )
        return [int(r[0]) for r in rows]

    async def many(self, ids: Iterable[int]) -> dict[int, ScheduleRow]:
        """The live schedules among ``ids``; removed or unknown ids are simply absent."""
        wanted = sorted(set(ids))
        found: dict[int, ScheduleRow] = {}
        for chunk in chunks(wanted):
            marks = ",".join("?" * len(chunk))
            for row in await self._db.fetchall(_SELECT + f"AND s.id IN ({marks})", chunk):
                found[int(row[0])] = _row(row)
        return found

    async def set_spec(self, schedule_id: int, spec: str, now: datetime) -> ScheduleRow | None:
        """Change what a live schedule posts and when (an admin's edit); its history stays."""
        async with self._db.write() as conn:
            changed = await conn.fetchone(
                "UPDATE schedules SET spec = ?, updated_at = ? "
                "WHERE id = ? AND deleted_at IS NULL RETURNING id",
                (spec, to_db(now), schedule_id),
            )
            if changed is None:
                return None
            row = await conn.fetchone(_SELECT + "AND s.id = ?", (schedule_id,))
        return None if row is None else _row(row)

    async def set_paused(self, schedule_id: int, paused: bool, now: datetime) -> ScheduleRow | None:
        """Pause or resume. Resuming moves ``skip_until`` up to now: a resumed schedule posts
        from now on and never makes up for the days it was paused."""
        stamp = to_db(now)
        sql = self._db.sql
        async with self._db.write() as conn:
            changed = await conn.fetchone(
                "UPDATE schedules SET paused = ?, updated_at = ?, skip_until = CASE WHEN ? = 1 "
                f"THEN skip_until ELSE {sql.later('skip_until')} END "
                "WHERE id = ? AND deleted_at IS NULL RETURNING id",
                (int(paused), stamp, int(paused), stamp, schedule_id),
            )
            if changed is None:
                return None
            row = await conn.fetchone(_SELECT + "AND s.id = ?", (schedule_id,))
        return None if row is None else _row(row)

    async def skip_until(
        self, schedule_id: int, until: datetime, now: datetime
    ) -> ScheduleRow | None:
        """Skip every occurrence at or before ``until`` (never moves the mark backwards)."""
        async with self._db.write() as conn:
            changed = await conn.fetchone(
                f"UPDATE schedules SET skip_until = {self._db.sql.later('skip_until')}, "
                "updated_at = ? WHERE id = ? AND deleted_at IS NULL RETURNING id",
                (to_db(until), to_db(now), schedule_id),
            )
            if changed is None:
                return None
            row = await conn.fetchone(_SELECT + "AND s.id = ?", (schedule_id,))
        return None if row is None else _row(row)

    async def delete(self, schedule_id: int, now: datetime) -> bool:
        """Remove a schedule (kept as history: its posts still point at it)."""
        stamp = to_db(now)
        async with self._db.write() as conn:
            row = await conn.fetchone(
                "UPDATE schedules SET deleted_at = ?, updated_at = ? "
                "WHERE id = ? AND deleted_at IS NULL RETURNING id",
                (stamp, stamp, schedule_id),
            )
        return row is not None

    async def mark_handled(self, marks: Sequence[tuple[int, datetime]]) -> None:
        """Record, in one transaction, how far the scheduler got with each schedule."""
        if not marks:
            return
        async with self._db.write() as conn:
            await conn.executemany(
                f"UPDATE schedules SET handled_until = {self._db.sql.later('handled_until')} "
                "WHERE id = ?",
                [(to_db(until), schedule_id) for schedule_id, until in marks],
            )
