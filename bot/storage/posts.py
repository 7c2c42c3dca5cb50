"""Posts: a question shown in a channel, its answer window, and the platform message it became."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from bot.core.models import Post
from bot.storage.database import Database, Row
from bot.storage.timefmt import from_db, from_db_opt, to_db, to_db_opt

__all__ = ["PostStore", "ScheduledPost"]

_SELECT = (
    "SELECT p.id, p.channel_id, p.question_version_id, q.slug, p.posted_at, p.closes_at, "
    "p.closed_at, p.requested_by, p.schedule_id, p.platform_message_id "
    "FROM posts p JOIN question_versions v ON v.id = p.question_version_id "
    "JOIN questions q ON q.id = v.question_id "
)

# The same columns, then the two only the scheduler needs (so ``_post`` reads either).
_SELECT_SCHEDULED = _SELECT.replace(" FROM posts p", ", p.occurrence, p.resent FROM posts p", 1)


def _post(row: Row) -> Post:
    return Post(
        id=int(row[0]),
        channel_id=int(row[1]),
        question_version_id=int(row[2]),
        question_id=str(row[3]),
        posted_at=from_db(row[4]),
        closes_at=from_db_opt(row[5]),
        closed_at=from_db_opt(row[6]),
        requested_by=row[7],
        schedule_id=row[8],
        platform_message_id=row[9],
    )


@dataclass(frozen=True, slots=True)
class ScheduledPost:
    """A post row of one schedule occurrence, with whether it was ever re-sent."""

    post: Post
    occurrence: str
    resent: bool


def _scheduled(row: Row) -> ScheduledPost:
    return ScheduledPost(_post(row), str(row[10]), bool(row[11]))


class PostStore:
    """Posts, with an in-memory cache of recent ones.

    A popular question is looked up once per click; thousands of identical reads queued on
    the reader thread cost far more than the answers themselves (each is a thread hop that
    waits for the GIL while the event loop is busy). Every change to a post goes through this
    class, so the cache is kept exact; the answer transaction re-checks the post anyway.
    """

    CACHE_SIZE = 4096

    def __init__(self, db: Database) -> None:
        self._db = db
        self._cache: OrderedDict[int, Post] = OrderedDict()

    def _remember(self, post: Post) -> Post:
        self._cache[post.id] = post
        self._cache.move_to_end(post.id)
        while len(self._cache) > self.CACHE_SIZE:
            self._cache.popitem(last=False)
        return post

    async def create(
        self,
        *,
        channel_id: int,
        version_id: int,
        now: datetime,
        requested_by: int | None = None,
        closes_at: datetime | None = None,
        schedule_id: int | None = None,
        occurrence: str | None = None,
    ) -> Post | None:
        """Insert the post row before anything is sent; ``None`` if the occurrence exists."""
        async with self._db.write() as conn:
            async with conn.execute(
                "INSERT INTO posts (channel_id, question_version_id, schedule_id, occurrence, "
                "requested_by, posted_at, closes_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (schedule_id, occurrence) DO NOTHING RETURNING id",
                (
                    channel_id,
                    version_id,
                    schedule_id,
                    occurrence,
                    requested_by,
                    to_db(now),
                    to_db_opt(closes_at),
                ),
            ) as cursor:
                row = await cursor.fetchone()
            if row is None:
                return None
            async with conn.execute(_SELECT + "WHERE p.id = ?", (row[0],)) as cursor:
                created = await cursor.fetchone()
        assert created is not None
        return self._remember(_post(created))

    async def attach_message(self, post_id: int, message_id: str) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "UPDATE posts SET platform_message_id = ? WHERE id = ?", (message_id, post_id)
            )
        if (cached := self._cache.get(post_id)) is not None:
            self._remember(replace(cached, platform_message_id=message_id))

    async def get(self, post_id: int) -> Post | None:
        if (cached := self._cache.get(post_id)) is not None:
            return cached
        row = await self._db.fetchone(_SELECT + "WHERE p.id = ?", (post_id,))
        return None if row is None else self._remember(_post(row))

    async def latest_open(self, channel_id: int) -> Post | None:
        row = await self._db.fetchone(
            _SELECT + "WHERE p.channel_id = ? AND p.closed_at IS NULL ORDER BY p.id DESC LIMIT 1",
            (channel_id,),
        )
        return None if row is None else _post(row)

    async def open_in_channel(self, channel_id: int) -> list[Post]:
        rows = await self._db.fetchall(
            _SELECT + "WHERE p.channel_id = ? AND p.closed_at IS NULL ORDER BY p.id", (channel_id,)
        )
        return [_post(r) for r in rows]

    async def close(self, post_id: int, now: datetime) -> Post | None:
        """Close an open post; ``None`` when it was already closed (reveal happens once)."""
        async with self._db.write() as conn:
            async with conn.execute(
                "UPDATE posts SET closed_at = ? WHERE id = ? AND closed_at IS NULL RETURNING id",
                (to_db(now), post_id),
            ) as cursor:
                changed = await cursor.fetchone()
            async with conn.execute(_SELECT + "WHERE p.id = ?", (post_id,)) as cursor:
                row = await cursor.fetchone()
        if row is not None:
            self._remember(_post(row))
        if changed is None or row is None:
            return None
        return _post(row)

    async def due_to_close(self, now: datetime) -> list[Post]:
        rows = await self._db.fetchall(
            _SELECT + "WHERE p.closed_at IS NULL AND p.closes_at IS NOT NULL "
            "AND p.closes_at <= ? ORDER BY p.closes_at",
            (to_db(now),),
        )
        return [_post(r) for r in rows]

    async def breakdown(self, post_id: int) -> dict[str, int]:
        """How many members picked each choice (or knew/forgot)."""
        rows = await self._db.fetchall(
            "SELECT choice, count(*) FROM answers WHERE post_id = ? GROUP BY choice", (post_id,)
        )
        return {str(r[0]): int(r[1]) for r in rows}

    # --- scheduled posts ---------------------------------------------------------------------

    async def unsent_scheduled(self) -> list[ScheduledPost]:
        """Open scheduled posts that were never confirmed as sent (a crash mid-send)."""
        rows = await self._db.fetchall(
            _SELECT_SCHEDULED + "WHERE p.schedule_id IS NOT NULL AND p.platform_message_id IS NULL "
            "AND p.closed_at IS NULL AND p.occurrence IS NOT NULL ORDER BY p.id"
        )
        return [_scheduled(r) for r in rows]

    async def by_occurrence(self, schedule_id: int, occurrence: str) -> ScheduledPost | None:
        """The post row of one schedule occurrence (whether or not it was sent)."""
        row = await self._db.fetchone(
            _SELECT_SCHEDULED + "WHERE p.schedule_id = ? AND p.occurrence = ?",
            (schedule_id, occurrence),
        )
        return None if row is None else _scheduled(row)

    async def claim_resend(self, post_id: int) -> bool:
        """Mark an unconfirmed post as re-sent; ``False`` if it already was (or got sent)."""
        async with (
            self._db.write() as conn,
            conn.execute(
                "UPDATE posts SET resent = 1 WHERE id = ? AND resent = 0 "
                "AND platform_message_id IS NULL AND closed_at IS NULL RETURNING id",
                (post_id,),
            ) as cursor,
        ):
            return await cursor.fetchone() is not None

    async def latest_of_schedule(self, schedule_id: int) -> int | None:
        value = await self._db.fetchval(
            "SELECT max(id) FROM posts WHERE schedule_id = ?", (schedule_id,)
        )
        return None if value is None else int(value)

    async def open_until_next(self, schedule_id: int, before_id: int) -> list[Post]:
        """Open posts of a schedule older than ``before_id`` whose answers stay open "until
        the next question posts" (no ``closes_at``): the ones a newer post closes."""
        rows = await self._db.fetchall(
            _SELECT + "WHERE p.schedule_id = ? AND p.closed_at IS NULL AND p.closes_at IS NULL "
            "AND p.id < ? ORDER BY p.id",
            (schedule_id, before_id),
        )
        return [_post(r) for r in rows]

    async def set_closes_at(self, post_ids: Sequence[int], at: datetime) -> None:
        """End the answer windows of open posts at ``at`` (the scheduler reveals them then)."""
        if not post_ids:
            return
        async with self._db.write() as conn:
            await conn.executemany(
                "UPDATE posts SET closes_at = ? WHERE id = ? AND closed_at IS NULL",
                [(to_db(at), post_id) for post_id in post_ids],
            )
        for post_id in post_ids:
            if (cached := self._cache.get(post_id)) is not None and cached.is_open:
                self._remember(replace(cached, closes_at=at))

    async def next_close(self) -> datetime | None:
        """When the next open post's answer window ends (the partial index makes this cheap)."""
        value = await self._db.fetchval(
            "SELECT min(closes_at) FROM posts WHERE closed_at IS NULL AND closes_at IS NOT NULL"
        )
        return None if value is None else from_db(str(value))
