"""Members' accommodations in the database (migration 0025)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.core.accommodations import Accommodation
from bot.storage.database import Database
from bot.storage.timefmt import to_db

__all__ = ["AccommodationStore"]


class AccommodationStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def set(
        self, workspace_id: int, member_id: int, given: Accommodation, by: str, now: datetime
    ) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "DELETE FROM accommodations WHERE workspace_id = ? AND member_id = ?",
                (workspace_id, member_id),
            )
            await conn.execute(
                "INSERT INTO accommodations (workspace_id, member_id, time_factor, "
                "fewer_choices, set_by, set_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    workspace_id,
                    member_id,
                    given.time_factor,
                    int(given.fewer_choices),
                    by,
                    to_db(now),
                ),
            )

    async def clear(self, workspace_id: int, member_id: int) -> bool:
        async with self._db.write() as conn:
            gone = await conn.fetchall(
                "DELETE FROM accommodations WHERE workspace_id = ? AND member_id = ? "
                "RETURNING member_id",
                (workspace_id, member_id),
            )
        return bool(list(gone))

    async def of(
        self, workspace_id: int, member_ids: Sequence[int] | None = None
    ) -> dict[int, Accommodation]:
        """The workspace's accommodations by member row id (``member_ids``: only theirs)."""
        rows = await self._db.fetchall(
            "SELECT member_id, time_factor, fewer_choices FROM accommodations "
            "WHERE workspace_id = ?",
            (workspace_id,),
        )
        wanted = None if member_ids is None else set(member_ids)
        return {
            int(str(r[0])): Accommodation(float(str(r[1])), bool(r[2]))
            for r in rows
            if wanted is None or int(str(r[0])) in wanted
        }

    async def of_member(self, member_id: int) -> Accommodation | None:
        """One member's (a member row belongs to one workspace)."""
        row = await self._db.fetchone(
            "SELECT time_factor, fewer_choices FROM accommodations WHERE member_id = ?",
            (member_id,),
        )
        return None if row is None else Accommodation(float(str(row[0])), bool(row[1]))

    async def workspaces_with_extra_time(self) -> frozenset[int]:
        """The workspaces where some member has extra time (most have none: one cheap read
        lets a pass of reveals skip every other workspace's posts)."""
        rows = await self._db.fetchall(
            "SELECT DISTINCT workspace_id FROM accommodations WHERE time_factor > 1"
        )
        return frozenset(int(str(r[0])) for r in rows)

    async def waiting(
        self, workspace_id: int, post_id: int, channel_id: int, since: datetime
    ) -> dict[int, float]:
        """The members with extra time a post in ``channel_id`` waits for: those who answered
        a question there since ``since`` and have not answered ``post_id``; member row id ->
        time factor. (One who never plays in a channel holds none of its questions open.)"""
        rows = await self._db.fetchall(
            "SELECT a.member_id, a.time_factor FROM accommodations a"
            " WHERE a.workspace_id = ? AND a.time_factor > 1 AND NOT EXISTS"
            " (SELECT 1 FROM answers x WHERE x.post_id = ? AND x.member_id = a.member_id)"
            " AND EXISTS (SELECT 1 FROM answers y JOIN posts p ON p.id = y.post_id"
            " WHERE y.member_id = a.member_id AND p.channel_id = ? AND y.answered_at >= ?)",
            (workspace_id, post_id, channel_id, to_db(since)),
        )
        return {int(str(r[0])): float(str(r[1])) for r in rows}

    async def named(self, workspace_id: int) -> list[tuple[str, Accommodation]]:
        """Every accommodation with its member's name, for the admins' list."""
        rows = await self._db.fetchall(
            "SELECT m.display_name, a.time_factor, a.fewer_choices FROM accommodations a "
            "JOIN members m ON m.id = a.member_id WHERE a.workspace_id = ? "
            "ORDER BY lower(m.display_name)",
            (workspace_id,),
        )
        return [(str(r[0]), Accommodation(float(str(r[1])), bool(r[2]))) for r in rows]
