"""The audit log in the database (migration 0016): who changed what, when, from where."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.storage.database import Database
from bot.storage.timefmt import from_db, to_db

__all__ = ["AuditEntry", "AuditStore"]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: datetime
    actor: str
    actor_name: str
    via: str
    action: str
    detail: str


class AuditStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, workspace_id: int, entry: AuditEntry) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO audit_log (workspace_id, at, actor, actor_name, via, action, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    workspace_id,
                    to_db(entry.at),
                    entry.actor,
                    entry.actor_name,
                    entry.via,
                    entry.action,
                    entry.detail,
                ),
            )

    async def recent(self, workspace_id: int, limit: int = 200) -> list[AuditEntry]:
        rows = await self._db.fetchall(
            "SELECT at, actor, actor_name, via, action, detail FROM audit_log"
            " WHERE workspace_id = ? ORDER BY id DESC LIMIT ?",
            (workspace_id, limit),
        )
        return [
            AuditEntry(from_db(str(r[0])), str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]))
            for r in rows
        ]
