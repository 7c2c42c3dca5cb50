"""Posts: a question shown in a channel, its answer window, and the platform message it became."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar

from bot.core.choice_order import draw_seed
from bot.core.models import Post
from bot.storage.database import Database, Row, chunks
from bot.storage.timefmt import from_db, from_db_opt, to_db, to_db_opt

__all__ = ["NewScheduledPost", "PostStore", "ScheduledPost"]

T = TypeVar("T")

_SELECT = (
    "SELECT p.id, p.channel_id, p.question_version_id, q.slug, p.posted_at, p.closes_at, "
    "p.closed_at, p.requested_by, p.schedule_id, p.platform_message_id, p.round_id, "
    "p.choice_seed, p.window_ends_at FROM posts p "
    "JOIN question_versions v ON v.id = p.question_version_id "
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
        round_id=row[10],
        choice_seed=None if row[11] is None else int(row[11]),
        window_ends_at=from_db_opt(row[12]),
    )


@dataclass(frozen=True, slots=True)
class ScheduledPost:
    """A post row of one schedule occurrence, with whether it was ever re-sent."""

    post: Post
    occurrence: str
    resent: bool


def _scheduled(row: Row) -> ScheduledPost:
    return ScheduledPost(_post(row), str(row[13]), bool(row[14]))


@dataclass(frozen=True, slots=True)
class NewScheduledPost:
    """A post row to insert for one schedule occurrence (see :meth:`PostStore.create_many`)."""

    channel_id: int
    version_id: int
    schedule_id: int
    occurrence: str
    closes_at: datetime | None


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
        self._attaching: list[tuple[int, str, asyncio.Future[None]]] = []
        self._attacher: asyncio.Task[None] | None = None

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
        round_id: int | None = None,
    ) -> Post | None:
        """Insert the post row before anything is sent; ``None`` if the occurrence exists.

        The row draws its choice order's seed here, so no caller can forget it."""
        async with self._db.write() as conn:
            inserted = list(
                await conn.fetchall(
                    "INSERT INTO posts (channel_id, question_version_id, schedule_id, "
                    "occurrence, requested_by, posted_at, closes_at, round_id, choice_seed) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (schedule_id, occurrence) DO NOTHING RETURNING id",
                    (
                        channel_id,
                        version_id,
                        schedule_id,
                        occurrence,
                        requested_by,
                        to_db(now),
                        to_db_opt(closes_at),
                        round_id,
                        draw_seed(),
                    ),
                )
            )
            if not inserted:
                return None
            created = list(await conn.fetchall(_SELECT + "WHERE p.id = ?", (inserted[0][0],)))
        return self._remember(_post(created[0]))

    async def attach_message(self, post_id: int, message_id: str) -> None:
        """Record the platform's message id; returns once it is committed.

        Group commit: ids that arrive while a batch is being written go into the next one, so
        thousands of scheduled posts sent at 09:00 are confirmed in a handful of transactions,
        each one moments after its send (a crash mid-send then leaves almost nothing unsure).
        """
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._attaching.append((post_id, message_id, future))
        if self._attacher is None or self._attacher.done():
            self._attacher = asyncio.create_task(self._attach_batches(), name="post-attacher")
        await future

    async def _attach_batches(self) -> None:
        while self._attaching:
            batch, self._attaching = self._attaching, []
            try:
                async with self._db.write() as conn:
                    await conn.executemany(
                        "UPDATE posts SET platform_message_id = ? WHERE id = ?",
                        [(message_id, post_id) for post_id, message_id, _ in batch],
                    )
            except Exception as exc:
                for _, _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for post_id, message_id, future in batch:
                if (cached := self._cache.get(post_id)) is not None:
                    self._remember(replace(cached, platform_message_id=message_id))
                if not future.done():
                    future.set_result(None)

    async def get(self, post_id: int) -> Post | None:
        if (cached := self._cache.get(post_id)) is not None:
            return cached
        row = await self._db.fetchone(_SELECT + "WHERE p.id = ?", (post_id,))
        if row is None:
            return None
        # A close or attach that finished while this read was in flight has already put the
        # newer row in the cache; never overwrite it with this older snapshot.
        return self._cache.get(post_id) or self._remember(_post(row))

    async def as_of(self, post: Post, now: datetime) -> Post:
        """``post`` as it is at ``now``: read again, past the cache, when the cache says its
        window has ended but it is not closed (another process may have held it open for
        members with extra time: :mod:`bot.services.extra_time`)."""
        if not post.is_open or post.closes_at is None or now < post.closes_at:
            return post
        row = await self._db.fetchone(_SELECT + "WHERE p.id = ?", (post.id,))
        return post if row is None else self._remember(_post(row))

    async def latest(self, channel_id: int) -> Post | None:
        """The channel's most recent post, open or closed."""
        row = await self._db.fetchone(
            _SELECT + "WHERE p.channel_id = ? ORDER BY p.id DESC LIMIT 1", (channel_id,)
        )
        return None if row is None else _post(row)

    async def recent(self, channel_id: int, limit: int) -> list[Post]:
        """The channel's last ``limit`` posts, newest first (``/history``)."""
        rows = await self._db.fetchall(
            _SELECT + "WHERE p.channel_id = ? ORDER BY p.id DESC LIMIT ?", (channel_id, limit)
        )
        return [_post(row) for row in rows]

    async def latest_open(self, channel_id: int) -> Post | None:
        row = await self._db.fetchone(
            _SELECT + "WHERE p.channel_id = ? AND p.closed_at IS NULL ORDER BY p.id DESC LIMIT 1",
            (channel_id,),
        )
        return None if row is None else _post(row)

    async def close(self, post_id: int, now: datetime) -> Post | None:
        """Close an open post; ``None`` when it was already closed (reveal happens once)."""
        async with self._db.write() as conn:
            changed = list(
                await conn.fetchall(
                    "UPDATE posts SET closed_at = ? WHERE id = ? AND closed_at IS NULL "
                    "RETURNING id",
                    (to_db(now), post_id),
                )
            )
            rows = list(await conn.fetchall(_SELECT + "WHERE p.id = ?", (post_id,)))
        if rows:
            self._remember(_post(rows[0]))
        if not changed or not rows:
            return None
        return _post(rows[0])

    async def due_to_close(self, now: datetime) -> list[Post]:
        rows = await self._db.fetchall(
            _SELECT + "WHERE p.closed_at IS NULL AND p.closes_at IS NOT NULL "
            "AND p.closes_at <= ? ORDER BY p.closes_at",
            (to_db(now),),
        )
        return [_post(r) for r in rows]

    async def open_in_workspace(self, workspace_id: int, since: datetime) -> list[Post]:
        """The workspace's open posts posted at or after ``since``, newest first (App Home)."""
        rows = await self._db.fetchall(
            _SELECT + "JOIN channels c ON c.id = p.channel_id WHERE c.workspace_id = ? "
            "AND p.closed_at IS NULL AND p.posted_at >= ? ORDER BY p.id DESC LIMIT 20",
            (workspace_id, to_db(since)),
        )
        return [_post(r) for r in rows]

    async def answered_by(self, post_id: int, external_id: str) -> bool:
        """Whether the member (by platform id) has an answer on this post."""
        row = await self._db.fetchone(
            "SELECT 1 FROM answers a JOIN members m ON m.id = a.member_id"
            " WHERE a.post_id = ? AND m.external_id = ?",
            (post_id, external_id),
        )
        return row is not None

    async def breakdown(self, post_id: int) -> dict[str, int]:
        """How many members picked each choice (or knew/forgot)."""
        rows = await self._db.fetchall(
            "SELECT choice, count(*) FROM answers WHERE post_id = ? GROUP BY choice", (post_id,)
        )
        return {str(r[0]): int(r[1]) for r in rows}

    async def close_many(self, post_ids: Sequence[int], now: datetime) -> list[Post]:
        """Close many open posts in one transaction; returns the ones this call closed (each
        reveal happens once), in the order given."""
        closed: set[int] = set()
        rows: dict[int, Row] = {}
        async with self._db.write() as conn:
            for chunk in chunks(list(dict.fromkeys(post_ids))):
                marks = ",".join("?" * len(chunk))
                found = await conn.fetchall(
                    f"UPDATE posts SET closed_at = ? WHERE closed_at IS NULL AND id IN ({marks}) "
                    "RETURNING id",
                    (to_db(now), *chunk),
                )
                closed.update(int(r[0]) for r in found)
            for chunk in chunks(sorted(closed)):
                marks = ",".join("?" * len(chunk))
                for row in await conn.fetchall(_SELECT + f"WHERE p.id IN ({marks})", chunk):
                    rows[int(row[0])] = row
        return [self._remember(_post(rows[i])) for i in dict.fromkeys(post_ids) if i in rows]

    async def breakdowns(self, post_ids: Sequence[int]) -> dict[int, dict[str, int]]:
        """:meth:`breakdown` for many posts in one query each 400."""
        found: dict[int, dict[str, int]] = {post_id: {} for post_id in post_ids}
        for chunk in chunks(list(found)):
            marks = ",".join("?" * len(chunk))
            for row in await self._db.fetchall(
                f"SELECT post_id, choice, count(*) FROM answers WHERE post_id IN ({marks}) "
                "GROUP BY post_id, choice",
                chunk,
            ):
                found[int(row[0])][str(row[1])] = int(row[2])
        return found

    # --- scheduled posts ---------------------------------------------------------------------

    async def create_many(
        self,
        rows: Sequence[NewScheduledPost],
        now: datetime,
        *,
        lease_until: datetime | None = None,
    ) -> list[Post | None]:
        """Insert the rows of many occurrences in one transaction, before anything is sent.

        Returns a post for each row in order, or ``None`` where that occurrence already has
        its row (``UNIQUE(schedule_id, occurrence)``), including a repeat within ``rows``:
        across processes, the one whose row went in owns the occurrence. ``lease_until`` is
        how long nobody else may re-send the posts of this process (several processes).
        """
        created: dict[tuple[int, str], int] = {}
        fetched: dict[int, Row] = {}
        seen: set[tuple[int, str]] = set()
        unique = []
        for r in rows:
            if (r.schedule_id, r.occurrence) not in seen:
                seen.add((r.schedule_id, r.occurrence))
                unique.append(r)
        async with self._db.write() as conn:
            for chunk in chunks(unique):
                values = ",".join("(?, ?, ?, ?, ?, ?, ?, ?)" for _ in chunk)
                params: list[object] = []
                for r in chunk:
                    params += [
                        r.channel_id,
                        r.version_id,
                        r.schedule_id,
                        r.occurrence,
                        to_db(now),
                        to_db_opt(r.closes_at),
                        to_db_opt(lease_until),
                        draw_seed(),
                    ]
                for row in await conn.fetchall(
                    "INSERT INTO posts (channel_id, question_version_id, schedule_id, occurrence, "
                    f"posted_at, closes_at, lease_until, choice_seed) VALUES {values} "
                    "ON CONFLICT (schedule_id, occurrence) DO NOTHING "
                    "RETURNING id, schedule_id, occurrence",
                    params,
                ):
                    created[(int(row[1]), str(row[2]))] = int(row[0])
            for ids in chunks(sorted(created.values())):
                marks = ",".join("?" * len(ids))
                for row in await conn.fetchall(_SELECT + f"WHERE p.id IN ({marks})", ids):
                    fetched[int(row[0])] = row
        result: list[Post | None] = []
        for r in rows:
            post_id = created.pop((r.schedule_id, r.occurrence), None)
            result.append(None if post_id is None else self._remember(_post(fetched[post_id])))
        return result

    async def last_id(self) -> int:
        """The newest post's id: a watermark for "has anything posted since"."""
        value = await self._db.fetchval("SELECT max(id) FROM posts")
        return 0 if value is None else int(value)

    async def channels_posted_since(self, last_id: int) -> set[int]:
        """Channels that got a post after the watermark ``last_id`` (a rowid range scan)."""
        # No DISTINCT: SQLite would answer it by scanning a whole channel index.
        rows = await self._db.fetchall("SELECT channel_id FROM posts WHERE id > ?", (last_id,))
        return {int(r[0]) for r in rows}

    async def open_until_next_many(self, schedule_ids: Sequence[int]) -> list[Post]:
        """The open posts of these schedules whose answers stay open "until the next question
        posts" (no ``closes_at``), oldest first."""
        found: list[Post] = []
        source = f"FROM posts p {self._db.sql.use_index('posts_schedule_open')}"
        for chunk in chunks(sorted(set(schedule_ids))):
            marks = ",".join("?" * len(chunk))
            rows = await self._db.fetchall(
                _SELECT.replace("FROM posts p", source.rstrip(), 1)
                + f"WHERE p.schedule_id IN ({marks}) AND p.closed_at IS NULL "
                "AND p.closes_at IS NULL ORDER BY p.id",
                chunk,
            )
            found += [_post(r) for r in rows]
        return found

    async def unsent_scheduled(self, now: datetime) -> list[ScheduledPost]:
        """Open scheduled posts that were never confirmed as sent (a crash mid-send) and whose
        lease ran out before ``now`` (their process is gone; one process: no lease is taken)."""
        rows = await self._db.fetchall(
            _SELECT_SCHEDULED + "WHERE p.schedule_id IS NOT NULL AND p.platform_message_id IS NULL "
            "AND p.closed_at IS NULL AND p.occurrence IS NOT NULL "
            "AND (p.lease_until IS NULL OR p.lease_until < ?) ORDER BY p.id",
            (to_db(now),),
        )
        return [_scheduled(r) for r in rows]

    async def by_occurrence(self, schedule_id: int, occurrence: str) -> ScheduledPost | None:
        """The post row of one schedule occurrence (whether or not it was sent)."""
        row = await self._db.fetchone(
            _SELECT_SCHEDULED + "WHERE p.schedule_id = ? AND p.occurrence = ?",
            (schedule_id, occurrence),
        )
        return None if row is None else _scheduled(row)

    async def claim_resend(
        self, post_id: int, now: datetime, lease_until: datetime | None = None
    ) -> bool:
        """Mark an unconfirmed post as re-sent; ``False`` if it already was, got sent, or its
        lease has not run out before ``now`` (another process may still be sending it). The
        claim takes a new lease until ``lease_until``: one statement, so two survivors can
        never both re-send it."""
        async with self._db.write() as conn:
            claimed = await conn.fetchall(
                "UPDATE posts SET resent = 1, lease_until = ? WHERE id = ? AND resent = 0 "
                "AND platform_message_id IS NULL AND closed_at IS NULL "
                "AND (lease_until IS NULL OR lease_until < ?) RETURNING id",
                (to_db_opt(lease_until), post_id, to_db(now)),
            )
        return bool(claimed)

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

    async def extend(self, post: Post, closes_at: datetime) -> bool:
        """Hold ``post``'s answer window open until ``closes_at`` for members with extra time,
        keeping its usual end in ``window_ends_at``; False if it closed, moved or was extended
        already (once, however many processes see it due)."""
        assert post.closes_at is not None
        async with self._db.write() as conn:
            moved = await conn.fetchall(
                "UPDATE posts SET window_ends_at = closes_at, closes_at = ? WHERE id = ?"
                " AND closed_at IS NULL AND window_ends_at IS NULL AND closes_at = ? RETURNING id",
                (to_db(closes_at), post.id, to_db(post.closes_at)),
            )
            done = bool(list(moved))
        if done:
            self._remember(replace(post, closes_at=closes_at, window_ends_at=post.closes_at))
        return done

    async def next_close(self) -> datetime | None:
        """When the next open post's answer window ends (the partial index makes this cheap)."""
        value = await self._db.fetchval(
            "SELECT min(closes_at) FROM posts WHERE closed_at IS NULL AND closes_at IS NOT NULL"
        )
        return None if value is None else from_db(str(value))
