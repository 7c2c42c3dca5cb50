"""Flags on questions, held until an admin resolves or dismisses them.

A flag is raised at most once per workspace, question version and rule: while it is open its
evidence follows the latest figures; once an admin ends it, it stays ended for that version,
so a dismissed flag does not nag again. A new version of the question (its file was fixed)
is judged afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.item_analysis import Rule
from bot.storage.database import Database
from bot.storage.timefmt import from_db, to_db

__all__ = ["HeldFlag", "ItemFlagStore"]


@dataclass(frozen=True, slots=True)
class HeldFlag:
    id: int
    question_id: int
    item_id: str
    pack: str
    rule: str
    evidence: str
    raised_at: datetime
    updated_at: datetime

    @property
    def heading(self) -> str:
        """The rule in an admin's words (a rule this version does not know: its name)."""
        try:
            return Rule(self.rule).heading
        except ValueError:
            return self.rule


class ItemFlagStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def raise_flags(
        self, workspace_id: int, found: list[tuple[int, int, str, str]], now: datetime
    ) -> int:
        """Raise each (question id, version id, rule, evidence) not raised before for that
        version; refresh the evidence of open ones. The number newly raised."""
        if not found:
            return 0
        at = to_db(now)
        raised = 0
        async with self._db.write() as tx:
            for question_id, version_id, rule, evidence in found:
                changed = await tx.execute(
                    "UPDATE question_flags SET evidence = ?, updated_at = ? "
                    "WHERE workspace_id = ? AND question_version_id = ? AND rule = ? "
                    "AND ended_at IS NULL AND evidence <> ?",
                    (evidence, at, workspace_id, version_id, rule, evidence),
                )
                if changed:
                    continue
                known = await tx.fetchval(
                    "SELECT count(*) FROM question_flags "
                    "WHERE workspace_id = ? AND question_version_id = ? AND rule = ?",
                    (workspace_id, version_id, rule),
                )
                if int(known):
                    continue
                await tx.execute(
                    "INSERT INTO question_flags (workspace_id, question_id, question_version_id,"
                    " rule, evidence, raised_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (workspace_id, question_id, version_id, rule, evidence, at, at),
                )
                raised += 1
        return raised

    async def ended(self, workspace_id: int) -> set[tuple[int, str]]:
        """(version id, rule) of every flag an admin resolved or dismissed."""
        rows = await self._db.fetchall(
            "SELECT question_version_id, rule FROM question_flags "
            "WHERE workspace_id = ? AND ended_at IS NOT NULL",
            (workspace_id,),
        )
        return {(int(r[0]), str(r[1])) for r in rows}

    async def open_flags(self, workspace_id: int) -> list[HeldFlag]:
        """Every open flag, by pack and question, oldest first."""
        rows = await self._db.fetchall(
            "SELECT f.id, f.question_id, q.slug, k.slug, f.rule, f.evidence, f.raised_at, "
            "f.updated_at FROM question_flags f JOIN questions q ON q.id = f.question_id "
            "JOIN packs k ON k.id = q.pack_id "
            "WHERE f.workspace_id = ? AND f.ended_at IS NULL "
            "ORDER BY k.slug, q.slug, f.raised_at, f.id",
            (workspace_id,),
        )
        return [
            HeldFlag(
                int(r[0]),
                int(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                str(r[5]),
                from_db(str(r[6])),
                from_db(str(r[7])),
            )
            for r in rows
        ]

    async def end(
        self, workspace_id: int, item_id: str, outcome: str, by: str, now: datetime
    ) -> int:
        """End the open flags on the question ``item_id`` (its id in the pack file)."""
        async with self._db.write() as tx:
            return await tx.execute(
                "UPDATE question_flags SET ended_at = ?, ended_by = ?, outcome = ? "
                "WHERE workspace_id = ? AND ended_at IS NULL AND question_id IN "
                "(SELECT id FROM questions WHERE slug = ?)",
                (to_db(now), by, outcome, workspace_id, item_id),
            )
