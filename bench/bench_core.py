"""Benchmark: answers recorded per second, and leaderboard latency.

    .venv/bin/python bench/bench_core.py [--members 10000] [--events 100000] [--rounds 5]

Each figure is a median over rounds, next to a baseline measured in the same run on the same
machine, because these machines are shared and noisy:
- answers/s: 10,000 members answer one post concurrently through Services (group
  commit); baseline: the same inserts as one transaction per answer.
- leaderboard: the week/month/all-time board over >=100,000 score events written by the
  bot's own answer path; baseline: one trivial query's round trip through the same
  connection (the floor for any query).
"""

from __future__ import annotations

import argparse
import asyncio
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
from bot.storage.database import Database, open_database  # noqa: E402

PACKS = ROOT / "tests" / "data" / "packs"
NOW = datetime(2026, 3, 18, 12, 0, tzinfo=UTC)


def ctx(i: int) -> ChatContext:
    return ChatContext("bench", "ws", "general", f"u{i}", f"member{i}", channel_name="general")


async def answers_per_second(
    service: Services, db: Database, members: int, rounds: int
) -> list[float]:
    rates = []
    people = [ctx(i) for i in range(members)]
    for _ in range(rounds):
        draft = await service.quiz.post_question(people[0], pack="mini", difficulty="medium")
        start = time.perf_counter()
        replies = await asyncio.gather(
            *(service.quiz.answer(p, draft.post.id, "B") for p in people)
        )
        elapsed = time.perf_counter() - start
        assert len(replies) == members
        count = await db.fetchval(
            "SELECT count(*) FROM answers WHERE post_id = ?", (draft.post.id,)
        )
        assert count == members, count
        rates.append(members / elapsed)
    return rates


async def baseline_per_answer_txn(db: Database, n: int) -> float:
    async with db.write() as conn:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS bench_answers (post INT, member INT, "
            "choice TEXT, UNIQUE (post, member))"
        )
    start = time.perf_counter()
    for i in range(n):
        async with db.write() as conn:
            await conn.execute(
                "INSERT INTO bench_answers VALUES (1, ?, 'B') ON CONFLICT DO NOTHING", (i,)
            )
    return n / (time.perf_counter() - start)


async def seed_events(
    service: Services, clock: SimulatedClock, events: int, members: int
) -> ChatContext:
    """Score events made the real way: ``members`` answer ``events / members`` posts, spread
    over the 90 days before now, so the totals and streaks are what the bot itself writes."""
    people = [
        ChatContext("bench", "board", "general", f"b{i}", f"board{i}") for i in range(members)
    ]
    rounds = max(1, events // members)
    start = clock.now()
    clock.set(start - timedelta(days=90))
    rng = random.Random(5)
    done = 0
    while done < rounds:
        draft = await service.quiz.post_question(people[0], pack="mini")
        choices = draft.message.choices
        if not choices:
            continue  # an open prompt: nothing to score
        await asyncio.gather(
            *(service.quiz.answer(p, draft.post.id, rng.choice(choices)) for p in people)
        )
        clock.advance(timedelta(days=90) / rounds)
        done += 1
    clock.set(start)
    return people[1]


async def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        await fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        db = await open_database(Path(tmp) / "bench.sqlite3")
        clock = SimulatedClock(NOW)
        service = build_services(
            db, clock, default_timezone="Europe/Berlin", rng=random.Random(3)
        ).services
        await service.packs.sync(load_packs(PACKS).packs)

        rates = await answers_per_second(service, db, args.members, args.rounds)
        baseline = await baseline_per_answer_txn(db, 2000)

        viewer = await seed_events(service, clock, args.events, 2000)
        events = await db.fetchval(
            "SELECT count(*) FROM score_events e JOIN workspaces w ON w.id = e.workspace_id "
            "WHERE w.external_id = 'board'"
        )
        boards = {
            window: await timed(lambda w=window: service.standings.leaderboard(viewer, w), 31)
            for window in ("week", "month", "all")
        }
        floor = await timed(lambda: db.fetchval("SELECT 1"), 31)
        await db.close()

    print(
        f"machine: {platform.machine()} {platform.processor() or ''} "
        f"python {platform.python_version()}  date: {datetime.now(UTC):%Y-%m-%d}"
    )
    print(
        f"answers/s, {args.members} concurrent members on one post "
        f"(first round creates the members):"
    )
    print("  rounds: " + ", ".join(f"{r:,.0f}" for r in rates))
    median = statistics.median(rates)
    print(
        f"  median {median:,.0f}/s; baseline (one transaction per answer) {baseline:,.0f}/s;"
        f" ratio {median / baseline:.1f}x"
    )
    print(f"leaderboard over {events:,} score events, 2,000 members (median of 31):")
    floor_ms = statistics.median(floor)
    for window, samples in boards.items():
        med = statistics.median(samples)
        print(
            f"  {window:<5} {med:6.2f} ms  ({med / floor_ms:.0f}x the {floor_ms:.2f} ms "
            "round trip of SELECT 1)"
        )


if __name__ == "__main__":
    asyncio.run(main())
