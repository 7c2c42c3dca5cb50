"""Exam dates in the database: one per workspace and one per channel (migration 0023)."""

from __future__ import annotations

from datetime import date, datetime

from bot.core.exams import Exam
from bot.storage.database import Database, Row
from bot.storage.timefmt import to_db

__all__ = ["ExamStore"]


def _exam(row: Row) -> Exam:
    channel, on, tags, set_by = row[0], row[1], row[2], row[3]
    return Exam(
        on=date.fromisoformat(str(on)),
        tags=tuple(t for t in str(tags).split(",") if t),
        channel_id=None if channel is None else int(str(channel)),
        set_by=str(set_by),
    )


class ExamStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def set(self, workspace_id: int, exam: Exam, now: datetime) -> Exam | None:
        """Store ``exam`` for its scope (the workspace, or its channel), replacing the one
        there; the replaced one, if any (whatever its day)."""
        scope = "channel_id IS NULL" if exam.channel_id is None else "channel_id = ?"
        params: tuple[object, ...] = (
            (workspace_id,) if exam.channel_id is None else (workspace_id, exam.channel_id)
        )
        async with self._db.write() as conn:
            old = await conn.fetchone(
                f"SELECT channel_id, on_day, tags, set_by FROM exams WHERE workspace_id = ? "
                f"AND {scope}",
                params,
            )
            await conn.execute(f"DELETE FROM exams WHERE workspace_id = ? AND {scope}", params)
            await conn.execute(
                "INSERT INTO exams (workspace_id, channel_id, on_day, tags, set_by, set_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    workspace_id,
                    exam.channel_id,
                    exam.on.isoformat(),
                    ",".join(exam.tags),
                    exam.set_by,
                    to_db(now),
                ),
            )
        return None if old is None else _exam(old)

    async def clear(self, workspace_id: int, channel_id: int | None) -> bool:
        scope = "channel_id IS NULL" if channel_id is None else "channel_id = ?"
        params: tuple[object, ...] = (
            (workspace_id,) if channel_id is None else (workspace_id, channel_id)
        )
        async with self._db.write() as conn:
            gone = await conn.fetchall(
                f"DELETE FROM exams WHERE workspace_id = ? AND {scope} RETURNING id", params
            )
        return bool(list(gone))

    async def ahead(self, workspace_id: int, channel_id: int | None, today: date) -> Exam | None:
        """The exam a channel works toward from ``today``: its own, else the workspace's (a
        day that has passed is over: none). ``channel_id`` None: the workspace's only."""
        rows = await self._db.fetchall(
            "SELECT channel_id, on_day, tags, set_by FROM exams WHERE workspace_id = ? "
            "AND on_day >= ? AND (channel_id IS NULL OR channel_id = ?) "
            "ORDER BY channel_id IS NULL, on_day",
            (workspace_id, today.isoformat(), channel_id),
        )
        return None if not rows else _exam(rows[0])

    # --- exam prep reviews (migration 0028) ----------------------------------------------

    async def prepping(self, member_id: int) -> bool:
        """Whether the member opted into exam prep reviews."""
        value = await self._db.fetchval(
            "SELECT count(*) FROM exam_prep WHERE member_id = ?", (member_id,)
        )
        return bool(int(str(value or 0)))

    async def set_prep(self, member_id: int, on: bool, now: datetime) -> bool:
        """Opt the member in or out; False when they were so already."""
        async with self._db.write() as conn:
            if on:
                changed = await conn.fetchall(
                    "INSERT INTO exam_prep (member_id, since) VALUES (?, ?) "
                    "ON CONFLICT (member_id) DO NOTHING RETURNING member_id",
                    (member_id, to_db(now)),
                )
            else:
                changed = await conn.fetchall(
                    "DELETE FROM exam_prep WHERE member_id = ? RETURNING member_id", (member_id,)
                )
            return bool(list(changed))
