"""Exercise submissions in the database (migration 0011): every attempt, judged.

The verdict is decided before a row is written (``bot.core.exercises``); this store only
keeps what was decided, and answers the questions scoring asks: a member's best share while
the post was open, who tried and never solved it when it closes, and the counts /stats shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.storage.database import Database
from bot.storage.timefmt import from_db, to_db

__all__ = ["Attempt", "AttemptCounts", "Best", "ExerciseStore"]


@dataclass(frozen=True, slots=True)
class Attempt:
    post_id: int
    member_id: int
    submitted_at: datetime
    passed: int
    total: int
    solved: bool
    forbidden: tuple[str, ...]
    open: bool
    code: str
    failed: tuple[str, ...] = ()  # the labels of the checks it failed ("hidden check 2")


@dataclass(frozen=True, slots=True)
class Best:
    """A member's best submission to one post while it was open."""

    member_id: int
    passed: int
    total: int
    solved: bool
    attempts: int
    external_id: str = ""
    name: str = ""

    @property
    def share(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass(frozen=True, slots=True)
class AttemptCounts:
    tried: int  # exercises (posts) submitted to
    solved: int  # of those, solved
    attempts: int  # submissions in all


class ExerciseStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(self, attempt: Attempt) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO exercise_attempts (post_id, member_id, submitted_at, passed, total,"
                " solved, forbidden, open, code, failed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    attempt.post_id,
                    attempt.member_id,
                    to_db(attempt.submitted_at),
                    attempt.passed,
                    attempt.total,
                    int(attempt.solved),
                    ",".join(attempt.forbidden),
                    int(attempt.open),
                    attempt.code,
                    ",".join(attempt.failed),
                ),
            )

    async def best(self, post_id: int) -> list[Best]:
        """Each member's best open submission to ``post_id`` (a forbidden name counts 0)."""
        return await self._best(post_id)

    async def best_of(self, post_id: int, member_id: int) -> Best | None:
        """One member's best open submission to ``post_id``: asked on every submission, so
        the member is picked in SQL, not from everyone's."""
        found = await self._best(post_id, member_id)
        return found[0] if found else None

    async def _best(self, post_id: int, member_id: int | None = None) -> list[Best]:
        one = "" if member_id is None else " AND a.member_id = ?"
        rows = await self._db.fetchall(
            "SELECT a.member_id,"
            " max(CASE WHEN a.forbidden = '' THEN a.passed ELSE 0 END), max(a.total),"
            " max(a.solved), count(*), m.external_id, m.display_name"
            " FROM exercise_attempts a JOIN members m ON m.id = a.member_id"
            f" WHERE a.post_id = ? AND a.open = 1{one}"
            " GROUP BY a.member_id, m.external_id, m.display_name ORDER BY a.member_id",
            (post_id,) if member_id is None else (post_id, member_id),
        )
        return [
            Best(
                int(str(r[0])),
                int(str(r[1])),
                int(str(r[2])),
                bool(r[3]),
                int(str(r[4])),
                str(r[5]),
                str(r[6]),
            )
            for r in rows
        ]

    async def sharing(self, member_id: int) -> bool:
        """Whether the member lets /solutions show their passing solutions to others."""
        value = await self._db.fetchval(
            "SELECT share_solutions FROM members WHERE id = ?", (member_id,)
        )
        return bool(value)

    async def set_sharing(self, member_id: int, share: bool) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "UPDATE members SET share_solutions = ? WHERE id = ?", (int(share), member_id)
            )

    async def shared_solutions(self, post_id: int, limit: int = 3) -> list[tuple[str, str]]:
        """The shortest passing solutions to ``post_id`` by members who share them: one per
        member (their shortest), as (display name, code), shortest first."""
        rows = await self._db.fetchall(
            "SELECT m.display_name, a.code FROM exercise_attempts a"
            " JOIN members m ON m.id = a.member_id"
            " WHERE a.post_id = ? AND a.solved = 1 AND m.share_solutions = 1"
            " ORDER BY length(a.code), a.id",
            (post_id,),
        )
        shown: dict[str, str] = {}
        for name, code in rows:
            shown.setdefault(str(name), str(code))
        return list(shown.items())[:limit]

    async def counts(self, member_id: int) -> AttemptCounts:
        row = await self._db.fetchone(
            "SELECT count(DISTINCT post_id),"
            " count(DISTINCT CASE WHEN solved = 1 THEN post_id END), count(*)"
            " FROM exercise_attempts WHERE member_id = ?",
            (member_id,),
        )
        if row is None:
            return AttemptCounts(0, 0, 0)
        return AttemptCounts(int(str(row[0] or 0)), int(str(row[1] or 0)), int(str(row[2] or 0)))

    async def attempts(self, post_ids: Sequence[int]) -> dict[int, int]:
        """Submissions per post, for /history."""
        if not post_ids:
            return {}
        marks = ", ".join("?" for _ in post_ids)
        rows = await self._db.fetchall(
            f"SELECT post_id, count(*) FROM exercise_attempts WHERE post_id IN ({marks})"
            " GROUP BY post_id",
            tuple(post_ids),
        )
        return {int(str(r[0])): int(str(r[1])) for r in rows}

    async def of_member(self, post_id: int, member_id: int) -> list[Attempt]:
        rows = await self._db.fetchall(
            "SELECT post_id, member_id, submitted_at, passed, total, solved, forbidden, open,"
            " code FROM exercise_attempts WHERE post_id = ? AND member_id = ? ORDER BY id",
            (post_id, member_id),
        )
        return [
            Attempt(
                int(str(r[0])),
                int(str(r[1])),
                from_db(str(r[2])),
                int(str(r[3])),
                int(str(r[4])),
                bool(r[5]),
                tuple(n for n in str(r[6]).split(",") if n),
                bool(r[7]),
                str(r[8]),
            )
            for r in rows
        ]
