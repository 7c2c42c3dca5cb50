"""Packs and questions in the database, synced from the pack files by content hash.

Sync is idempotent and keeps history: an edited item gets a new ``question_versions`` row (old
posts keep pointing at the text they showed); an item removed from its file is retired, not
deleted; an unchanged file is skipped by its hash without touching its items.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import TypeAdapter

from bot.questions.loader import LoadedPack, item_hash
from bot.questions.schema import Item
from bot.storage.database import Database
from bot.storage.dialect import Dialect
from bot.storage.timefmt import to_db

__all__ = ["Candidate", "PackStore", "PackSummary", "StoredQuestion", "SyncReport", "eligible"]

_ITEM: TypeAdapter[Item] = TypeAdapter(Item)


@dataclass(frozen=True, slots=True)
class SyncReport:
    packs: int
    added: int
    updated: int
    retired: int
    unchanged: int


@dataclass(frozen=True, slots=True)
class StoredQuestion:
    question_id: int
    version_id: int
    pack: str
    item: Item


@dataclass(frozen=True, slots=True)
class Candidate:
    version_id: int
    times_posted: int
    latest: bool = False  # the question of the channel's most recent post


def eligible(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates the no-repeat rule picks from: the least-posted ones, leaving out the
    channel's most recent question while there is any other (so a new round never starts
    with the question that ended the last one)."""
    pool = [c for c in candidates if not c.latest] or list(candidates)
    if not pool:
        return []
    fewest = min(c.times_posted for c in pool)
    return [c for c in pool if c.times_posted == fewest]


@dataclass(frozen=True, slots=True)
class PackSummary:
    slug: str
    title: str
    description: str | None
    questions: int


_CHANNEL_CHUNK = 500  # channels per candidates_many query
# The channel's most recent post (by the posts_channel index on channel_id, posted_at).
_LATEST_POST = (
    "SELECT p.question_version_id FROM posts p WHERE p.channel_id = :channel "
    "ORDER BY p.posted_at DESC, p.id DESC LIMIT 1"
)


def _filters(
    sql: Dialect,
    pack: str | None,
    difficulty: str | None,
    tags: Sequence[str],
    kinds: Sequence[str] = (),
    question: str | None = None,
) -> tuple[list[str], dict[str, object]]:
    """The WHERE terms (over ``q`` questions and ``k`` packs) a post's filters ask for."""
    where = ["q.retired_at IS NULL", "k.retired_at IS NULL"]
    params: dict[str, object] = {}
    if question is not None:  # one question by its id in the pack file (`/solve ex-hvp`)
        where.append("q.slug = :question")
        params["question"] = question
    if pack is not None:
        where.append("k.slug = :pack")
        params["pack"] = pack
    if difficulty is not None:
        where.append("q.difficulty = :difficulty")
        params["difficulty"] = difficulty
    for index, tag in enumerate(tags):
        where.append(sql.contains("q.tags", f":tag{index}"))  # not LIKE: `_` in a tag is literal
        params[f"tag{index}"] = f",{tag},"
    if kinds:
        where.append(f"q.kind {sql.in_list(':kinds')}")
        params["kinds"] = sql.list_value(kinds)
    return where, params


def _tags_column(tags: Sequence[str]) -> str:
    return "," + ",".join(tags) + "," if tags else ""


class PackStore:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._versions: dict[int, StoredQuestion] = {}

    async def sync(self, loaded: Sequence[LoadedPack], now: datetime) -> SyncReport:
        added = updated = retired = unchanged = 0
        stamp = to_db(now)
        async with self._db.write() as conn:
            seen_packs: list[str] = []
            for lp in loaded:
                pack = lp.pack
                seen_packs.append(pack.pack)
                row = await conn.fetchone(
                    "SELECT id, content_hash, retired_at FROM packs WHERE slug = ?", (pack.pack,)
                )
                if row is not None and row[1] == lp.content_hash and row[2] is None:
                    unchanged += len(pack.items)
                    continue
                await conn.execute(
                    "INSERT INTO packs (slug, title, description, source_path, content_hash, "
                    "synced_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (slug) DO UPDATE SET "
                    "title = excluded.title, description = excluded.description, "
                    "source_path = excluded.source_path, content_hash = excluded.content_hash, "
                    "synced_at = excluded.synced_at, retired_at = NULL",
                    (pack.pack, pack.title, pack.description, lp.path, lp.content_hash, stamp),
                )
                pack_row = await conn.fetchone("SELECT id FROM packs WHERE slug = ?", (pack.pack,))
                assert pack_row is not None
                pack_id = int(pack_row[0])
                existing = {
                    str(r[1]): (int(r[0]), r[2], r[3])
                    for r in await conn.fetchall(
                        "SELECT q.id, q.slug, v.content_hash, q.retired_at FROM questions q "
                        "LEFT JOIN question_versions v ON v.id = q.current_version_id "
                        "WHERE q.pack_id = ?",
                        (pack_id,),
                    )
                }
                for item in pack.items:
                    digest = item_hash(item)
                    body = json.dumps(item.model_dump(mode="json"), ensure_ascii=False)
                    tags = _tags_column(item.tags)
                    current = existing.pop(item.id, None)
                    if current is not None and current[1] == digest and current[2] is None:
                        unchanged += 1
                        continue
                    if current is None:
                        qrow = await conn.fetchone(
                            "INSERT INTO questions (pack_id, slug, kind, difficulty, tags) "
                            "VALUES (?, ?, ?, ?, ?) RETURNING id",
                            (pack_id, item.id, item.kind, item.difficulty.value, tags),
                        )
                        assert qrow is not None
                        question_id = int(qrow[0])
                        added += 1
                    else:
                        question_id = current[0]
                        updated += 1
                    await conn.execute(
                        "INSERT INTO question_versions (question_id, content_hash, body, "
                        "created_at) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT (question_id, content_hash) DO NOTHING",
                        (question_id, digest, body, stamp),
                    )
                    await conn.execute(
                        "UPDATE questions SET kind = ?, difficulty = ?, tags = ?, "
                        "retired_at = NULL, current_version_id = (SELECT id FROM "
                        "question_versions WHERE question_id = ? AND content_hash = ?) "
                        "WHERE id = ?",
                        (item.kind, item.difficulty.value, tags, question_id, digest, question_id),
                    )
                for question_id, _digest, retired_at in existing.values():
                    if retired_at is None:
                        retired += 1
                        await conn.execute(
                            "UPDATE questions SET retired_at = ? WHERE id = ?", (stamp, question_id)
                        )
            kept = f"AND slug NOT IN ({','.join('?' * len(seen_packs))}) " if seen_packs else ""
            retired_packs = len(
                await conn.fetchall(
                    f"UPDATE packs SET retired_at = ? WHERE retired_at IS NULL {kept}RETURNING id",
                    (stamp, *seen_packs),
                )
            )
        return SyncReport(len(loaded), added, updated, retired + retired_packs, unchanged)

    async def candidates(
        self,
        channel_id: int,
        *,
        pack: str | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] = (),
        kinds: Sequence[str] = (),
        question: str | None = None,
    ) -> list[Candidate]:
        """Every live question that fits the filters, with how often this channel has seen it
        and whether it is the channel's most recent question."""
        where, params = _filters(self._db.sql, pack, difficulty, tags, kinds, question)
        params["channel"] = channel_id
        # The channel's history is read once and grouped (not once per question, as a
        # correlated subquery would): this runs for every post, and a busy channel has
        # thousands of posts.
        query = (
            "SELECT q.current_version_id, coalesce(t.times, 0), q.id = ("
            f"SELECT v.question_id FROM question_versions v WHERE v.id = ({_LATEST_POST})"
            ") FROM questions q JOIN packs k ON k.id = q.pack_id LEFT JOIN ("
            "SELECT v.question_id AS question_id, count(*) AS times FROM posts p "
            "JOIN question_versions v ON v.id = p.question_version_id "
            "WHERE p.channel_id = :channel GROUP BY v.question_id"
            ") t ON t.question_id = q.id "
            "WHERE NOT EXISTS (SELECT 1 FROM channel_packs cp WHERE cp.channel_id = :channel "
            f"AND cp.pack_id = k.id AND cp.enabled = 0) AND {' AND '.join(where)} ORDER BY q.id"
        )
        rows = await self._db.fetchall(query, params)
        return [Candidate(int(r[0]), int(r[1]), bool(r[2])) for r in rows]

    async def candidates_many(
        self,
        channel_ids: Sequence[int],
        *,
        pack: str | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] = (),
        kinds: Sequence[str] = (),
        fewest_only: bool = False,
    ) -> dict[int, list[Candidate]]:
        """:meth:`candidates` for many channels with the same filters (the scheduler posts to
        thousands of channels at 09:00). Channels with no candidate are absent.

        ``fewest_only`` keeps just each channel's :func:`eligible` candidates: all that picking
        a question by the no-repeat rule looks at. Four small queries per 500 channels; the
        history is counted straight from the ``(channel_id, question_version_id)`` index and
        joined to the questions here, which is several times faster than one SQL join.
        """
        sql = self._db.sql
        where, params = _filters(sql, pack, difficulty, tags, kinds)
        questions = [
            (int(r[0]), int(r[1]), int(r[2]))
            for r in await self._db.fetchall(
                "SELECT q.id, q.current_version_id, q.pack_id FROM questions q "
                f"JOIN packs k ON k.id = q.pack_id WHERE {' AND '.join(where)} ORDER BY q.id",
                params,
            )
        ]
        if not questions:
            return {}
        question_of = {
            int(r[0]): int(r[1])
            for r in await self._db.fetchall(
                f"SELECT id, question_id FROM question_versions WHERE question_id {sql.in_list()}",
                (sql.list_value([q[0] for q in questions]),),
            )
        }
        found: dict[int, list[Candidate]] = {}
        unique = sorted(set(channel_ids))
        for start in range(0, len(unique), _CHANNEL_CHUNK):
            chunk = sql.list_value(unique[start : start + _CHANNEL_CHUNK])
            disabled = {
                (int(r[0]), int(r[1]))
                for r in await self._db.fetchall(
                    "SELECT channel_id, pack_id FROM channel_packs WHERE enabled = 0 "
                    f"AND channel_id {sql.in_list()}",
                    (chunk,),
                )
            }
            latest = {
                int(channel): question_of.get(int(version))
                for channel, version in await self._db.fetchall(
                    "SELECT c.value, (SELECT p.question_version_id FROM posts p "
                    "WHERE p.channel_id = c.value ORDER BY p.posted_at DESC, p.id DESC LIMIT 1) "
                    f"FROM {sql.ids_table('c')}",
                    (chunk,),
                )
                if version is not None
            }
            seen: dict[int, dict[int, int]] = {}
            for channel, version, times in await self._db.fetchall(
                "SELECT channel_id, question_version_id, count(*) FROM posts "
                f"WHERE channel_id {sql.in_list()} "
                "GROUP BY channel_id, question_version_id",
                (chunk,),
            ):
                question = question_of.get(int(version))
                if question is not None:
                    counts = seen.setdefault(int(channel), {})
                    counts[question] = counts.get(question, 0) + int(times)
            for channel in unique[start : start + _CHANNEL_CHUNK]:
                counts = seen.get(channel, {})
                last = latest.get(channel)
                listed = [
                    Candidate(version, counts.get(question, 0), question == last)
                    for question, version, pack_id in questions
                    if (channel, pack_id) not in disabled
                ]
                if fewest_only:
                    listed = eligible(listed)
                if listed:
                    found[channel] = listed
        return found

    async def question(self, version_id: int) -> StoredQuestion:
        """The item exactly as a post showed it (versions are immutable, so cached forever)."""
        if (cached := self._versions.get(version_id)) is not None:
            return cached
        row = await self._db.fetchone(
            "SELECT v.question_id, v.body, k.slug FROM question_versions v "
            "JOIN questions q ON q.id = v.question_id JOIN packs k ON k.id = q.pack_id "
            "WHERE v.id = ?",
            (version_id,),
        )
        if row is None:
            raise LookupError(f"question version {version_id} does not exist")
        stored = StoredQuestion(
            int(row[0]), version_id, str(row[2]), _ITEM.validate_json(str(row[1]))
        )
        self._versions[version_id] = stored
        return stored

    async def summaries(self) -> list[PackSummary]:
        rows = await self._db.fetchall(
            "SELECT k.slug, k.title, k.description, count(q.id) FROM packs k "
            "LEFT JOIN questions q ON q.pack_id = k.id AND q.retired_at IS NULL "
            "WHERE k.retired_at IS NULL GROUP BY k.id ORDER BY k.slug"
        )
        return [PackSummary(str(r[0]), str(r[1]), r[2], int(r[3])) for r in rows]

    async def disabled_in(self, channel_id: int) -> set[str]:
        """The slugs of the packs switched off in a channel (no row means on)."""
        rows = await self._db.fetchall(
            "SELECT k.slug FROM channel_packs cp JOIN packs k ON k.id = cp.pack_id "
            "WHERE cp.channel_id = ? AND cp.enabled = 0",
            (channel_id,),
        )
        return {str(r[0]) for r in rows}

    async def set_enabled(self, channel_id: int, slug: str, enabled: bool) -> bool | None:
        """Switch a live pack on or off in one channel; returns whether it was on before.

        ``None`` when no live pack has that slug. Read and write happen in one transaction,
        so two admins flipping the same switch at once still get truthful "already" replies.
        """
        async with self._db.write() as conn:
            row = await conn.fetchone(
                "SELECT k.id, cp.enabled FROM packs k LEFT JOIN channel_packs cp "
                "ON cp.pack_id = k.id AND cp.channel_id = ? "
                "WHERE k.slug = ? AND k.retired_at IS NULL",
                (channel_id, slug),
            )
            if row is None:
                return None
            was_enabled = row[1] is None or bool(row[1])
            if was_enabled != enabled:
                await conn.execute(
                    "INSERT INTO channel_packs (channel_id, pack_id, enabled) VALUES (?, ?, ?) "
                    "ON CONFLICT (channel_id, pack_id) DO UPDATE SET enabled = excluded.enabled",
                    (channel_id, int(row[0]), int(enabled)),
                )
        return was_enabled
