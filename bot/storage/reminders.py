"""``/review remind``: one row per member, the local time of a daily DM about due cards."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from bot.storage.database import Database

__all__ = ["Reminder", "ReminderStore"]


@dataclass(frozen=True, slots=True)
class Reminder:
    member_id: int
    workspace_id: int
    member_external: str
    local_time: str  # HH:MM
    timezone: str
    enabled: bool
    last_sent_day: date | None
    off_reason: str | None
    told: bool


_SELECT = (
    "SELECT r.member_id, m.workspace_id, m.external_id, r.local_time, r.timezone, r.enabled, "
    "r.last_sent_day, r.off_reason, r.told FROM review_reminders r "
    "JOIN members m ON m.id = r.member_id"
)


def _reminder(row: tuple[object, ...]) -> Reminder:
    return Reminder(
        member_id=int(str(row[0])),
        workspace_id=int(str(row[1])),
        member_external=str(row[2]),
        local_time=str(row[3]),
        timezone=str(row[4]),
        enabled=bool(row[5]),
        last_sent_day=None if row[6] is None else date.fromisoformat(str(row[6])),
        off_reason=None if row[7] is None else str(row[7]),
        told=bool(row[8]),
    )


class ReminderStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def set(self, member_id: int, local_time: str, timezone: str, today: date) -> None:
        """Turn a member's reminder on at ``local_time`` (from tomorrow if that time has
        passed today: ``today`` counts as handled when it is given)."""
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO review_reminders (member_id, local_time, timezone, enabled, "
                "last_sent_day, off_reason, told) VALUES (?, ?, ?, 1, ?, NULL, 1) "
                "ON CONFLICT (member_id) DO UPDATE SET local_time = excluded.local_time, "
                "timezone = excluded.timezone, enabled = 1, "
                "last_sent_day = excluded.last_sent_day, off_reason = NULL, told = 1",
                (member_id, local_time, timezone, today.isoformat()),
            )

    async def turn_off(self, member_id: int, reason: str | None = None) -> bool:
        """Off by the member (``reason`` None) or by the bot (``dm_closed``: told later)."""
        async with self._db.write() as conn:
            rows = await conn.fetchall(
                "UPDATE review_reminders SET enabled = 0, off_reason = ?, told = ? "
                "WHERE member_id = ? AND enabled = 1 RETURNING member_id",
                (reason, 1 if reason is None else 0, member_id),
            )
        return bool(rows)

    async def get(self, member_id: int) -> Reminder | None:
        row = await self._db.fetchone(f"{_SELECT} WHERE r.member_id = ?", (member_id,))
        return None if row is None else _reminder(tuple(row))

    async def enabled(self) -> list[Reminder]:
        rows = await self._db.fetchall(f"{_SELECT} WHERE r.enabled = 1 ORDER BY r.member_id")
        return [_reminder(tuple(r)) for r in rows]

    async def claim_day(self, member_id: int, day: date) -> bool:
        """Take ``day``'s reminder of the member; ``False`` if it was already taken (by this
        process or another): one statement, so a reminder goes out once per day."""
        async with self._db.write() as conn:
            taken = await conn.fetchall(
                "UPDATE review_reminders SET last_sent_day = ? WHERE member_id = ? "
                "AND (last_sent_day IS NULL OR last_sent_day < ?) RETURNING member_id",
                (day.isoformat(), member_id, day.isoformat()),
            )
        return bool(taken)

    async def mark_told(self, member_id: int) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "UPDATE review_reminders SET told = 1 WHERE member_id = ?", (member_id,)
            )
