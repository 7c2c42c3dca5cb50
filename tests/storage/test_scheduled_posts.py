"""The set-based storage the scheduler uses at 09:00, checked against the one-at-a-time
methods it stands in for, on a real SQLite file."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta
from pathlib import Path

import pytest

from bot.core.clock import SimulatedClock
from bot.core.schedule_spec import build_spec, encode_spec
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from bot.storage.database import Database
from bot.storage.posts import NewScheduledPost
from tests.conftest import TEST_PACKS
from tests.helpers import member


async def _channels(service: Services, count: int) -> list[int]:
    ids = []
    for i in range(count):
        draft = await service.quiz.post_question(member("root", channel=f"c{i}"))
        ids.append(draft.post.channel_id)
    return ids


async def test_candidates_many_agrees_with_candidates(
    timed: SchedulerParts, service: Services, db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    rng = random.Random(3)
    channels = await _channels(service, 12)
    for _ in range(60):  # an uneven history per channel
        i = rng.randrange(12)
        await service.quiz.post_question(member("root", channel=f"c{i}"))
    # A question edited in its file gets a second version; its history counts for both.
    edited = tmp_path / "packs"
    edited.mkdir()
    text = (TEST_PACKS / "mini.yaml").read_text()
    (edited / "mini.yaml").write_text(text.replace("When is the autograd graph built?", "When?"))
    await service.packs.sync(load_packs(edited).packs)
    for i in range(4):
        await service.quiz.post_question(member("root", channel=f"c{i}"), difficulty="medium")
    # A channel that switched the pack off has no candidates at all.
    async with db.write() as conn:
        await conn.execute(
            "INSERT INTO channel_packs (channel_id, pack_id, enabled) "
            "SELECT ?, id, 0 FROM packs WHERE slug = 'mini'",
            (channels[5],),
        )
    for filters in ({}, {"difficulty": "hard"}, {"tags": ("autograd",)}, {"pack": "mini"}):
        many = await timed.packs.candidates_many(channels, **filters)  # type: ignore[arg-type]
        for channel in channels:
            one = await timed.packs.candidates(channel, **filters)  # type: ignore[arg-type]
            assert many.get(channel, []) == one, (filters, channel)
        assert channels[5] not in many
        if not filters:  # every question is a candidate: the channel's last one among them
            assert all(sum(c.latest for c in many[ch]) == 1 for ch in many), filters
        fewest = await timed.packs.candidates_many(channels, fewest_only=True, **filters)  # type: ignore[arg-type]
        for channel, listed in many.items():
            # The least-posted, the channel's last question left out while there is another.
            others = [c for c in listed if not c.latest] or listed
            least = min(c.times_posted for c in others)
            assert fewest[channel] == [c for c in others if c.times_posted == least]


async def test_create_many_inserts_in_order_and_never_twice(
    timed: SchedulerParts, service: Services, db: Database, clock: SimulatedClock
) -> None:
    channel = (await _channels(service, 1))[0]
    version = int(await db.fetchval("SELECT current_version_id FROM questions LIMIT 1"))
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO schedules (channel_id, spec, created_at, updated_at) "
            "VALUES (?, ?, '2026-03-01T00:00:00.000000Z', '2026-03-01T00:00:00.000000Z')",
            [(channel, encode_spec(build_spec(time="09:00", timezone="UTC")))] * 3,
        )

    def row(schedule_id: int, occurrence: str) -> NewScheduledPost:
        return NewScheduledPost(channel, version, schedule_id, occurrence, None)

    first = await timed.posts.create_many([row(1, "A"), row(2, "A")], clock.now())
    assert [p.schedule_id if p else None for p in first] == [1, 2]
    again = await timed.posts.create_many(
        [row(2, "A"), row(3, "A"), row(3, "A"), row(1, "B")], clock.now()
    )
    assert [p.schedule_id if p else None for p in again] == [None, 3, None, 1]
    assert await db.fetchval("SELECT count(*) FROM posts WHERE schedule_id IS NOT NULL") == 4
    post = again[1]
    assert post is not None and await timed.posts.get(post.id) == post


async def test_close_many_reveals_each_post_once(
    timed: SchedulerParts, service: Services, clock: SimulatedClock
) -> None:
    drafts = [await service.quiz.post_question(member("ann")) for _ in range(5)]
    ids = [d.post.id for d in drafts]
    clock.advance(timedelta(minutes=1))
    edits = await service.quiz.reveal_many([ids[1], ids[0], ids[1]])
    assert [e.post.id for e in edits] == [ids[1], ids[0]]
    assert all(not e.post.is_open for e in edits)
    assert (await timed.posts.get(ids[0])) == edits[1].post  # the cache saw it close
    later = await service.quiz.reveal_many(ids)
    assert [e.post.id for e in later] == ids[2:]


async def test_concurrent_attaches_are_group_committed(
    timed: SchedulerParts, service: Services, db: Database
) -> None:
    drafts = [await service.quiz.post_question(member("ann")) for _ in range(50)]
    await asyncio.gather(
        *(service.posting.attach_message(d.post.id, f"m{d.post.id}") for d in drafts)
    )
    stored = await db.fetchall("SELECT id, platform_message_id FROM posts ORDER BY id")
    assert [(int(r[0]), r[1]) for r in stored] == [(d.post.id, f"m{d.post.id}") for d in drafts]
    cached = await timed.posts.get(drafts[-1].post.id)
    assert cached is not None and cached.platform_message_id == f"m{drafts[-1].post.id}"


async def test_channels_posted_since_a_watermark(timed: SchedulerParts, service: Services) -> None:
    channels = await _channels(service, 3)
    mark = await timed.posts.last_id()
    assert await timed.posts.channels_posted_since(mark) == set()
    await service.quiz.post_question(member("x", channel="c1"))
    assert await timed.posts.channels_posted_since(mark) == {channels[1]}


@pytest.mark.sqlite_only
async def test_checkpoints_are_held_during_a_burst_and_run_after(db: Database) -> None:
    async def setting() -> int:
        async with db.write() as conn:
            rows = list(await conn.fetchall("PRAGMA wal_autocheckpoint"))
        return int(rows[0][0])

    assert await setting() == 1000
    async with db.checkpoints_held():
        assert await setting() == 0
    assert await setting() == 1000
    with pytest.raises(RuntimeError):
        async with db.checkpoints_held():
            raise RuntimeError("a failed burst")
    assert await setting() == 1000
