"""Role rewards: the thresholds admins set, who holds each, and the numbers they are judged on.

A holder row is claimed (inserted) before the role is given and released if the platform
refuses; a removal deletes it first. Either way only the process whose statement changed the
row acts and announces it, so a notice is sent once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from bot.core.rewards import Metric, Reward
from bot.core.scoring import StreakState
from bot.storage.database import Database, Row
from bot.storage.timefmt import to_db

__all__ = ["MemberNumbers", "RewardStore"]


@dataclass(frozen=True, slots=True)
class MemberNumbers:
    """A member's stored numbers; the service turns the streak into today's."""

    member_id: int
    member: str  # platform id
    name: str
    points: int
    streak: StreakState
    reviews: int


def _reward(row: Row) -> Reward:
    return Reward(
        id=int(row[0]),
        metric=Metric(str(row[1])),
        threshold=int(row[2]),
        role=str(row[3]),
        role_name=str(row[4]),
        channel=str(row[5]),
        suspended=None if row[6] is None else str(row[6]),
    )


class RewardStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add(
        self,
        workspace_id: int,
        metric: Metric,
        threshold: int,
        role: str,
        role_name: str,
        *,
        channel: str,
        by: str,
        now: datetime,
    ) -> int | None:
        """A new reward's id; ``None`` if this role has a reward already."""
        async with self._db.write() as conn:
            row = await conn.fetchone(
                "INSERT INTO rewards (workspace_id, metric, threshold, role, role_name, channel,"
                " created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (workspace_id, role) DO NOTHING RETURNING id",
                (workspace_id, metric.value, threshold, role, role_name, channel, by, to_db(now)),
            )
        return None if row is None else int(row[0])

    async def rewards(self, workspace_id: int) -> list[Reward]:
        """The workspace's rewards, by id."""
        rows = await self._db.fetchall(
            "SELECT id, metric, threshold, role, role_name, channel, suspended FROM rewards"
            " WHERE workspace_id = ? ORDER BY id",
            (workspace_id,),
        )
        return [_reward(r) for r in rows]

    async def marks(self) -> tuple[int, int, int]:
        """The newest score import, how many imports were undone, and the newest reward: when
        one moved and this process did not do it (``studybot scores import`` or
        ``undo-import``, another process), every member may have crossed a threshold."""
        row = await self._db.fetchone(
            "SELECT (SELECT coalesce(max(id), 0) FROM score_imports),"
            " (SELECT count(*) FROM score_imports WHERE undone_at IS NOT NULL),"
            " (SELECT coalesce(max(id), 0) FROM rewards)"
        )
        assert row is not None
        return int(str(row[0])), int(str(row[1])), int(str(row[2]))

    async def suspend(self, reward_id: int, reason: str) -> bool:
        """Stop applying a reward whose role gained power; ``True`` only for the call that
        suspended it (so the admins are told once, whichever process sees it first)."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE rewards SET suspended = ? WHERE id = ? AND suspended IS NULL",
                (reason, reward_id),
            )
        return changed > 0

    async def resume(self, reward_id: int) -> bool:
        """Apply a suspended reward again (its role lost the power); ``True`` only for the
        call that resumed it."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE rewards SET suspended = NULL WHERE id = ? AND suspended IS NOT NULL",
                (reward_id,),
            )
        return changed > 0

    async def workspaces(self) -> list[int]:
        """The workspaces that have a reward."""
        rows = await self._db.fetchall("SELECT DISTINCT workspace_id FROM rewards ORDER BY 1")
        return [int(r[0]) for r in rows]

    async def remove(self, workspace_id: int, reward_id: int) -> list[str] | None:
        """Delete a reward; the platform ids of those who held it (``None``: no such reward)."""
        async with self._db.write() as conn:
            found = await conn.fetchone(
                "SELECT id FROM rewards WHERE workspace_id = ? AND id = ?",
                (workspace_id, reward_id),
            )
            if found is None:
                return None
            rows = await conn.fetchall(
                "SELECT m.external_id FROM reward_holders h JOIN members m ON m.id = h.member_id"
                " WHERE h.reward_id = ?",
                (reward_id,),
            )
            await conn.execute("DELETE FROM reward_holders WHERE reward_id = ?", (reward_id,))
            await conn.execute("DELETE FROM rewards WHERE id = ?", (reward_id,))
        return sorted(str(r[0]) for r in rows)

    async def held(self, workspace_id: int) -> set[tuple[int, int]]:
        """Every ``(reward id, member id)`` held in the workspace."""
        rows = await self._db.fetchall(
            "SELECT h.reward_id, h.member_id FROM reward_holders h"
            " JOIN rewards r ON r.id = h.reward_id WHERE r.workspace_id = ?",
            (workspace_id,),
        )
        return {(int(r[0]), int(r[1])) for r in rows}

    async def claim(self, reward_id: int, member_id: int, now: datetime) -> bool:
        """Mark the reward held before the role is given; ``False``: it already was."""
        async with self._db.write() as conn:
            row = await conn.fetchone(
                "INSERT INTO reward_holders (reward_id, member_id, granted_at) VALUES (?, ?, ?)"
                " ON CONFLICT (reward_id, member_id) DO NOTHING RETURNING reward_id",
                (reward_id, member_id, to_db(now)),
            )
        return row is not None

    async def release(self, reward_id: int, member_id: int) -> bool:
        """The reward is no longer held; ``False``: it was not (another process took it)."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "DELETE FROM reward_holders WHERE reward_id = ? AND member_id = ?",
                (reward_id, member_id),
            )
        return changed > 0

    async def numbers(
        self, workspace_id: int, member_ids: Sequence[int] | None = None
    ) -> list[MemberNumbers]:
        """The stored numbers of the workspace's members (or of ``member_ids`` among them)."""
        where = ""
        params: tuple[object, ...] = (workspace_id,)
        if member_ids is not None:
            if not member_ids:
                return []
            where = f" AND m.id IN ({', '.join('?' for _ in member_ids)})"
            params += tuple(member_ids)
        rows = await self._db.fetchall(
            "SELECT m.id, m.external_id, m.display_name, coalesce(t.points, 0),"
            " m.streak_days, m.best_streak, m.streak_last_day, m.streak_freezes,"
            " m.freezes_used, (SELECT count(*) FROM reviews r WHERE r.member_id = m.id)"
            " FROM members m LEFT JOIN score_totals t ON t.workspace_id = m.workspace_id"
            "  AND t.period = 'all' AND t.member_id = m.id"
            " WHERE m.workspace_id = ?" + where + " ORDER BY lower(m.display_name), m.id",
            params,
        )
        return [
            MemberNumbers(
                member_id=int(r[0]),
                member=str(r[1]),
                name=str(r[2]),
                points=int(r[3]),
                streak=StreakState(
                    int(r[4]),
                    int(r[5]),
                    date.fromisoformat(str(r[6])) if r[6] else None,
                    int(r[7]),
                    int(r[8]),
                ),
                reviews=int(r[9]),
            )
            for r in rows
        ]
