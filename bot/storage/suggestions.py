"""The suggestion queue: members' valid ``/write`` questions, waiting for an admin.

A suggestion is claimed by the admin who decides it (``status`` moves on from ``pending`` in
one ``UPDATE ... WHERE status = 'pending'``), so two admins approving at once add the question
once. An approved one remembers its id in the ``community`` pack, which is how every post of
that question finds its author (:meth:`SuggestionStore.credit`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from bot.storage.database import Database, Row
from bot.storage.timefmt import from_db, to_db

__all__ = ["Credit", "Status", "Suggestion", "SuggestionStore"]


class Status(enum.StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class Suggestion:
    id: int
    workspace_id: int
    member_id: int
    author: str  # the author's platform id
    author_name: str
    channel: str  # the platform id of the channel it was written in
    question: str  # the written question, as JSON
    prompt: str
    status: Status
    reason: str | None
    item_id: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Credit:
    """Who suggested a question of the ``community`` pack."""

    workspace_id: int
    author: str  # platform id
    author_name: str


_SELECT = (
    "SELECT s.id, s.workspace_id, s.member_id, m.external_id, m.display_name, s.channel,"
    " s.question, s.prompt, s.status, s.reason, s.item_id, s.created_at"
    " FROM suggestions s JOIN members m ON m.id = s.member_id "
)


def _suggestion(row: Row) -> Suggestion:
    return Suggestion(
        id=int(row[0]),
        workspace_id=int(row[1]),
        member_id=int(row[2]),
        author=str(row[3]),
        author_name=str(row[4]),
        channel=str(row[5]),
        question=str(row[6]),
        prompt=str(row[7]),
        status=Status(str(row[8])),
        reason=None if row[9] is None else str(row[9]),
        item_id=None if row[10] is None else str(row[10]),
        created_at=from_db(str(row[11])),
    )


class SuggestionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(
        self,
        workspace_id: int,
        member_id: int,
        channel: str,
        question: str,
        prompt: str,
        now: datetime,
    ) -> int:
        """Queue a suggestion; its id (what admins type to decide it)."""
        async with self._db.write() as conn:
            rows = await conn.fetchall(
                "INSERT INTO suggestions (workspace_id, member_id, channel, question, prompt,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (workspace_id, member_id, channel, question, prompt, to_db(now)),
            )
        return int(rows[0][0])

    async def pending_by(self, member_id: int) -> int:
        """How many of this member's suggestions are waiting."""
        count = await self._db.fetchval(
            "SELECT count(*) FROM suggestions WHERE member_id = ? AND status = 'pending'",
            (member_id,),
        )
        return int(count or 0)

    async def pending(self, workspace_id: int) -> list[Suggestion]:
        """The workspace's suggestions waiting for a decision, oldest first."""
        rows = await self._db.fetchall(
            _SELECT + "WHERE s.workspace_id = ? AND s.status = 'pending' ORDER BY s.id",
            (workspace_id,),
        )
        return [_suggestion(r) for r in rows]

    async def get(self, workspace_id: int, suggestion_id: int) -> Suggestion | None:
        """One suggestion of this workspace (another workspace's is not found)."""
        row = await self._db.fetchone(
            _SELECT + "WHERE s.workspace_id = ? AND s.id = ?", (workspace_id, suggestion_id)
        )
        return None if row is None else _suggestion(row)

    async def claim(
        self,
        suggestion_id: int,
        status: Status,
        by: str,
        now: datetime,
        reason: str | None = None,
    ) -> bool:
        """Decide a pending suggestion; ``False`` if it was decided already."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE suggestions SET status = ?, reason = ?, decided_by = ?, decided_at = ?"
                " WHERE id = ? AND status = 'pending'",
                (status.value, reason, by, to_db(now), suggestion_id),
            )
        return changed > 0

    async def added_as(self, suggestion_id: int, item_id: str) -> None:
        """An approved suggestion is now ``item_id`` in the community pack."""
        async with self._db.write() as conn:
            await conn.execute(
                "UPDATE suggestions SET item_id = ? WHERE id = ?", (item_id, suggestion_id)
            )

    async def release(self, suggestion_id: int) -> None:
        """Put a claimed suggestion back in the queue (its question could not be added)."""
        async with self._db.write() as conn:
            await conn.execute(
                "UPDATE suggestions SET status = 'pending', reason = NULL, decided_by = NULL,"
                " decided_at = NULL WHERE id = ?",
                (suggestion_id,),
            )

    async def credit(self, item_id: str) -> Credit | None:
        """Who suggested the ``community`` pack's ``item_id`` (None: nobody, or an admin wrote
        it in directly)."""
        row = await self._db.fetchone(
            "SELECT s.workspace_id, m.external_id, m.display_name FROM suggestions s"
            " JOIN members m ON m.id = s.member_id"
            " WHERE s.item_id = ? AND s.status = 'approved' ORDER BY s.id DESC LIMIT 1",
            (item_id,),
        )
        return None if row is None else Credit(int(row[0]), str(row[1]), str(row[2]))
