"""Weekly recaps: each channel's recap schedule, the claim on each week's post, and the
week's figures a recap shows (the board comes from :mod:`bot.storage.scores`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time

from bot.storage.database import Database, Row
from bot.storage.timefmt import to_db

__all__ = ["MissedRow", "RecapSchedule", "RecapStore"]


@dataclass(frozen=True, slots=True)
class RecapSchedule:
    channel_id: int
    workspace_id: int
    channel_external: str
    channel_name: str | None
    weekday: int
    local_time: time
    enabled: bool


@dataclass(frozen=True, slots=True)
class MissedRow:
    post_id: int
    version_id: int
    missed: int
    answered: int
    choice_seed: int | None = None  # the post's choice order (bot.core.choice_order)


_SELECT = (
    "SELECT r.channel_id, c.workspace_id, c.external_id, c.name, r.weekday, r.local_time, "
    "r.enabled FROM recaps r JOIN channels c ON c.id = r.channel_id "
)


def _schedule(row: Row) -> RecapSchedule:
    values = tuple(row)
    hour, minute = (int(part) for part in str(values[5]).split(":"))
    return RecapSchedule(
        int(values[0]),
        int(values[1]),
        str(values[2]),
        None if values[3] is None else str(values[3]),
        int(values[4]),
        time(hour, minute),
        bool(values[6]),
    )


class RecapStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def set(self, channel_id: int, weekday: int, at: time, by: str, now: datetime) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO recaps (channel_id, weekday, local_time, enabled, changed_by, "
                "changed_at) VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT (channel_id) DO UPDATE SET "
                "weekday = excluded.weekday, local_time = excluded.local_time, enabled = 1, "
                "changed_by = excluded.changed_by, changed_at = excluded.changed_at",
                (channel_id, weekday, f"{at:%H:%M}", by, to_db(now)),
            )

    async def turn_off(self, channel_id: int, by: str, now: datetime) -> bool:
        async with self._db.write() as conn:
            changed = await conn.execute(
                "UPDATE recaps SET enabled = 0, changed_by = ?, changed_at = ? "
                "WHERE channel_id = ? AND enabled = 1",
                (by, to_db(now), channel_id),
            )
        return bool(changed)

    async def get(self, channel_id: int) -> RecapSchedule | None:
        row = await self._db.fetchone(_SELECT + "WHERE r.channel_id = ?", (channel_id,))
        return None if row is None else _schedule(row)

    async def enabled(self) -> list[RecapSchedule]:
        rows = await self._db.fetchall(_SELECT + "WHERE r.enabled = 1 ORDER BY r.channel_id")
        return [_schedule(row) for row in rows]

    async def claim(self, channel_id: int, week: str, now: datetime) -> bool:
        """Take this week's recap of the channel; ``False`` if it was already taken."""
        async with self._db.write() as conn:
            changed = await conn.execute(
                "INSERT INTO recap_posts (channel_id, week, posted_at) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (channel_id, week, to_db(now)),
            )
        return bool(changed)

    async def posted_weeks(self, channel_id: int) -> list[str]:
        rows = await self._db.fetchall(
            "SELECT week FROM recap_posts WHERE channel_id = ? ORDER BY week", (channel_id,)
        )
        return [str(r[0]) for r in rows]

    async def questions_in(self, channel_id: int, start: datetime, end: datetime) -> int:
        value = await self._db.fetchval(
            "SELECT count(*) FROM posts WHERE channel_id = ? AND posted_at >= ? AND posted_at < ?",
            (channel_id, to_db(start), to_db(end)),
        )
        return int(value or 0)

    async def most_missed(
        self, channel_id: int, start: datetime, end: datetime
    ) -> MissedRow | None:
        """The closed, scored question of the week that most members got wrong."""
        row = await self._db.fetchone(
            # `correct` is 0 or 1 here, so count(*) - sum(correct) is how many got it wrong.
            "SELECT p.id, p.question_version_id, count(*) - sum(a.correct), count(*), "
            "p.choice_seed "
            "FROM posts p JOIN answers a ON a.post_id = p.id "
            "WHERE p.channel_id = ? AND p.posted_at >= ? AND p.posted_at < ? "
            "AND p.closed_at IS NOT NULL AND a.correct IS NOT NULL "
            "GROUP BY p.id HAVING sum(a.correct) < count(*) "
            "ORDER BY 3 DESC, 1.0 * (count(*) - sum(a.correct)) / count(*) DESC, p.id "
            "LIMIT 1",
            (channel_id, to_db(start), to_db(end)),
        )
        if row is None:
            return None
        seed = None if row[4] is None else int(row[4])
        return MissedRow(int(row[0]), int(row[1]), int(row[2]), int(row[3]), seed)
