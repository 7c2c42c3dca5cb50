"""Benchmark: one member's due cards among 100,000 card states, and the /stats picture.

Run from the repository root::

    .venv/bin/python bench/bench_review.py [--members 2400] [--runs 51]

Spaced repetition must stay fast for one member however many cards the whole server holds,
and /stats must not make a member wait for its picture. Medians of ``--runs``, each next to a
baseline measured in the same run:

1. **due cards**: ``ReviewService.next`` (what ``/review`` does: the member's most
   overdue card, its question, the buttons) for one member of a database holding
   ``members x questions`` card states (2,400 x 42 bundled questions = 100,800), and the bare
   ``ReviewStore.due_count``. Baseline: the same calls on a database of 24 members (1,008
   cards), so the ratio says whether the cost grows with everyone else's cards.
2. **heatmap**: ``draw_study_chart`` of a member who studied most days of the last 26 weeks,
   with 8 tags (matplotlib on the Agg canvas, PNG encoded); the first render (matplotlib
   imported) is reported separately. And ``/stats`` end to end with the picture. Baseline:
   ``/stats`` without the picture (the same queries and text).

Cards and review rows are written with SQL in bulk (through the bot's own migrations and
schema), because writing 100,000 reviews through the answer path would measure that path
(see bench_core.py), not these reads.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.app import build_services  # noqa: E402
from bot.core.clock import SimulatedClock  # noqa: E402
from bot.core.models import ChatContext  # noqa: E402
from bot.questions.loader import load_packs  # noqa: E402
from bot.services.bundle import Services  # noqa: E402
from bot.services.studychart import StudyChart, TagBar, draw_study_chart  # noqa: E402
from bot.storage.database import Database, open_database  # noqa: E402
from bot.storage.reviews import ReviewStore  # noqa: E402
from bot.storage.timefmt import to_db  # noqa: E402

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def ctx(i: int) -> ChatContext:
    return ChatContext("bench", "ws", "general", f"u{i}", f"member{i}", channel_name="general")


async def fill(path: Path, members: int) -> tuple[Services, Database, int]:
    """A database of ``members`` members, each with a card for every bundled question."""
    db = await open_database(path)
    service = build_services(
        db, SimulatedClock(NOW), default_timezone="UTC", rng=random.Random(1)
    ).services
    await service.packs.sync(load_packs(ROOT / "questions").packs)
    await service.standings.stats(ctx(0), picture=False)  # creates the workspace and member 0
    ws = int(await db.fetchval("SELECT id FROM workspaces"))
    questions = [int(r[0]) for r in await db.fetchall("SELECT id FROM questions ORDER BY id")]
    rng = random.Random(7)
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO members (workspace_id, external_id, display_name, created_at) "
            "VALUES (?, ?, ?, ?)",
            [(ws, f"u{i}", f"member{i}", to_db(NOW)) for i in range(1, members)],
        )
        ids = [int(r[0]) for r in await conn.fetchall("SELECT id FROM members")]
        reviews, cards = [], []
        review_id = 0
        for member in ids:
            for question in questions:
                review_id += 1
                last = NOW - timedelta(days=rng.uniform(1, 60))
                due = last + timedelta(days=rng.uniform(0.5, 90))
                reviews.append((review_id, ws, member, question, 3, to_db(last), 2.0))
                state = (2, None, 10.0, 5.0, to_db(due), to_db(last), 2, review_id)
                cards.append((member, question, ws, *state))
        await conn.executemany(
            "INSERT INTO reviews (id, workspace_id, member_id, question_id, rating, "
            "reviewed_at, elapsed_days) VALUES (?, ?, ?, ?, ?, ?, ?)",
            reviews,
        )
        await conn.executemany(
            "INSERT INTO cards (member_id, question_id, workspace_id, state, step, stability, "
            "difficulty, due, last_review, reviews, last_review_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            cards,
        )
    return service, db, ws


async def median_ms(call: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def chart(rng: random.Random) -> StudyChart:
    today = NOW.date()
    days = {today - timedelta(days=d): rng.randint(1, 9) for d in range(182) if rng.random() < 0.7}
    tags = [
        TagBar(f"tag-{i}", rng.randint(2, 20), rng.randint(3, 9), 10, rng.random())
        for i in range(8)
    ]
    return StudyChart("member 7", today, days, tags, 0.9)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=2400)
    parser.add_argument("--runs", type=int, default=51)
    args = parser.parse_args()
    print(
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC · {platform.processor() or platform.machine()} · "
        f"{os.cpu_count()} cores · Python {platform.python_version()} · "
        f"load {os.getloadavg()[0]:.1f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        small, small_db, small_ws = await fill(Path(tmp) / "small.sqlite3", 24)
        big, big_db, big_ws = await fill(Path(tmp) / "big.sqlite3", args.members)
        n_big = int(await big_db.fetchval("SELECT count(*) FROM cards"))
        n_small = int(await small_db.fetchval("SELECT count(*) FROM cards"))
        who = ctx(7)
        due_big = await big.review.next(who)
        due_small = await small.review.next(who)
        assert due_big.key is not None, "member 7 has cards due"
        assert due_small.key is not None, "member 7 has cards due"
        rows = []
        for name, service, db, ws in (
            ("small", small, small_db, small_ws),
            ("big", big, big_db, big_ws),
        ):
            member = int(await db.fetchval("SELECT id FROM members WHERE external_id = 'u7'"))
            store = ReviewStore(db)
            due = await store.due_count(ws, member, NOW)
            assert 0 < due < 42, f"member 7 has {due} of 42 cards due"
            rows.append(
                (
                    name,
                    await median_ms(lambda s=service: s.review.next(who), args.runs),
                    await median_ms(
                        lambda s=store, m=member, w=ws: s.due_count(w, m, NOW), args.runs
                    ),
                )
            )
        (_, next_small, count_small), (_, next_big, count_big) = rows
        print(f"\ndue cards for one member: {n_big:,} card states vs {n_small:,} (baseline)")
        print(f"  /review next card: {next_big:.2f} ms vs {next_small:.2f} ms "
              f"({next_big / next_small:.2f}x)")  # fmt: skip
        print(f"  due_count:         {count_big:.2f} ms vs {count_small:.2f} ms "
              f"({count_big / count_small:.2f}x)")  # fmt: skip

        rng = random.Random(3)
        start = time.perf_counter()
        png = draw_study_chart(chart(rng))
        first = (time.perf_counter() - start) * 1000
        charts = [chart(rng) for _ in range(args.runs)]
        times = []
        for c in charts:
            start = time.perf_counter()
            draw_study_chart(c)
            times.append((time.perf_counter() - start) * 1000)
        render = statistics.median(times)
        with_picture = await median_ms(lambda: big.standings.stats(who), max(11, args.runs // 3))
        text_only = await median_ms(lambda: big.standings.stats(who, picture=False), args.runs)
        print(f"\nheatmap: first render {first:.0f} ms (imports matplotlib), then median "
              f"{render:.0f} ms, {len(png) // 1024} KiB PNG")  # fmt: skip
        print(f"  /stats with picture {with_picture:.0f} ms vs text only {text_only:.1f} ms "
              f"({with_picture / text_only:.1f}x)")  # fmt: skip
        await small_db.close()
        await big_db.close()


if __name__ == "__main__":
    asyncio.run(main())
