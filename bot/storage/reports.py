"""Reports of wrong questions: written by members, read and resolved by admins."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.storage.database import Database
from bot.storage.timefmt import from_db, to_db

__all__ = ["OpenReport", "ReportStore"]


@dataclass(frozen=True, slots=True)
class OpenReport:
    question: str  # the item id in its pack file
    pack: str
    post_id: int | None
    member_name: str
    reason: str
    reported_at: datetime


class ReportStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(
        self,
        workspace_id: int,
        question_id: int,
        post_id: int | None,
        member_id: int,
        reason: str,
        now: datetime,
    ) -> bool:
        """Record a report; ``False`` if this member's open report was updated instead."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE question_reports SET reason = ?, reported_at = ?, post_id = ? "
                "WHERE workspace_id = ? AND question_id = ? AND member_id = ? "
                "AND resolved_at IS NULL",
                (reason, to_db(now), post_id, workspace_id, question_id, member_id),
            )
            if changed:
                return False
            await conn.execute(
                "INSERT INTO question_reports (workspace_id, question_id, post_id, member_id, "
                "reason, reported_at) VALUES (?, ?, ?, ?, ?, ?)",
                (workspace_id, question_id, post_id, member_id, reason, to_db(now)),
            )
        return True

    async def open_reports(self, workspace_id: int) -> list[OpenReport]:
        """Every open report, by pack and question, oldest first within each."""
        rows = await self._db.fetchall(
            "SELECT q.slug, k.slug, r.post_id, m.display_name, r.reason, r.reported_at "
            "FROM question_reports r JOIN questions q ON q.id = r.question_id "
            "JOIN packs k ON k.id = q.pack_id JOIN members m ON m.id = r.member_id "
            "WHERE r.workspace_id = ? AND r.resolved_at IS NULL "
            "ORDER BY k.slug, q.slug, r.id",
            (workspace_id,),
        )
        return [
            OpenReport(
                str(r[0]),
                str(r[1]),
                None if r[2] is None else int(r[2]),
                str(r[3]),
                str(r[4]),
                from_db(str(r[5])),
            )
            for r in rows
        ]

    async def counts_by_pack(self, workspace_id: int) -> dict[str, int]:
        """Open reports per pack slug (for `pack list`)."""
        rows = await self._db.fetchall(
            "SELECT k.slug, count(*) FROM question_reports r "
            "JOIN questions q ON q.id = r.question_id JOIN packs k ON k.id = q.pack_id "
            "WHERE r.workspace_id = ? AND r.resolved_at IS NULL GROUP BY k.slug",
            (workspace_id,),
        )
        return {str(r[0]): int(r[1]) for r in rows}

    async def resolve(self, workspace_id: int, question_slug: str, by: str, now: datetime) -> int:
        """Close the open reports on a question (by its item id); how many were closed."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE question_reports SET resolved_at = ?, resolved_by = ? "
                "WHERE workspace_id = ? AND resolved_at IS NULL AND question_id IN "
                "(SELECT id FROM questions WHERE slug = ?)",
                (to_db(now), by, workspace_id, question_slug),
            )
        return int(changed)
