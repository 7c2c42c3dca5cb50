"""Benchmark: SQLite vs PostgreSQL, and one vs three bot processes on PostgreSQL.

    STUDYBOT_BENCH_POSTGRES=postgresql://... .venv/bin/python bench/bench_engines.py \
        [--members 2000] [--channels 500] [--rounds 5]

All figures are medians over rounds, measured in the same run on the same machine:
- answers/s: ``--members`` members answer one post concurrently through Services, on a
  SQLite file and on PostgreSQL (a fresh schema per run);
- the due minute: ``--channels`` schedules due at the same instant; the time from the due
  instant until the last post is recorded as sent, with one scheduler, and with three
  schedulers (three processes' worth: each its own pool) racing for the same occurrences on
  PostgreSQL. Sends go to an in-memory gateway, so this is the bot's and the database's share.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from tempfile import TemporaryDirectory

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402

from bench.bench_core import answers_per_second  # noqa: E402
from bot.adapters.text_commands import run_schedule_command  # noqa: E402
from bot.app import Built, build_services, timer_loop  # noqa: E402
from bot.core.clock import SimulatedClock  # noqa: E402
from bot.core.messages import Message  # noqa: E402
from bot.core.models import ChatContext  # noqa: E402
from bot.questions.loader import load_packs  # noqa: E402
from bot.storage.database import Database, open_database  # noqa: E402

PACKS = ROOT / "tests" / "data" / "packs"
START = datetime(2026, 3, 18, 8, 59, 50, tzinfo=UTC)
DUE = datetime(2026, 3, 18, 9, 0, tzinfo=UTC)


class Sink:
    def __init__(self) -> None:
        self.sent = 0

    async def send_post(self, channel: str, message: Message) -> str:
        self.sent += 1
        return f"m{self.sent}-{uuid.uuid4().hex[:6]}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        return None


@asynccontextmanager
async def target(engine: str, url: str, tmp: Path) -> AsyncIterator[str]:
    if engine == "sqlite":
        yield str(tmp / f"{uuid.uuid4().hex}.sqlite3")
        return
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(url)
    await admin.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{url}{'&' if '?' in url else '?'}search_path={schema}"
    finally:
        await admin.execute(f"DROP SCHEMA {schema} CASCADE")
        await admin.close()


async def service_on(where: str, clock: SimulatedClock) -> tuple[Database, Built]:
    db = await open_database(where)
    built = build_services(db, clock, default_timezone="UTC", rng=random.Random(2))
    await built.services.packs.sync(load_packs(PACKS).packs)
    return db, built


async def answers(where: str, members: int, rounds: int) -> float:
    db, built = await service_on(where, SimulatedClock(START))
    try:
        return statistics.median(await answers_per_second(built.services, db, members, rounds))
    finally:
        await db.close()


async def due_minute(where: str, channels: int, processes: int) -> float:
    """Seconds from the due instant until every occurrence's post is confirmed as sent."""
    db, built = await service_on(where, SimulatedClock(START))
    for i in range(channels):
        ctx = ChatContext("bench", "ws", f"c{i}", "admin", "admin", is_admin=True)
        await run_schedule_command(built.services.schedules, ctx, "add", ["09:00"])
    await db.close()
    shared = processes > 1 or where.startswith("postgresql")
    runs = []
    for _ in range(processes):
        clock = SimulatedClock(START)
        pdb, psvc = await service_on(where, clock)
        scheduler = timer_loop(
            psvc.timed,
            Sink(),
            clock,
            timedelta(minutes=10),
            lease=timedelta(seconds=45) if shared else None,
        )
        await scheduler.start()
        runs.append((pdb, clock, scheduler))
    began = time.perf_counter()
    await asyncio.gather(*(s.advance(c, DUE) for _, c, s in runs))
    elapsed = time.perf_counter() - began
    check, _ = await service_on(where, SimulatedClock(DUE))
    sent = await check.fetchval("SELECT count(*) FROM posts WHERE platform_message_id IS NOT NULL")
    await check.close()
    assert sent == channels, (sent, channels)
    for pdb, _, scheduler in runs:
        await scheduler.stop()
        await pdb.close()
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=2000)
    parser.add_argument("--channels", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    url = os.environ.get("STUDYBOT_BENCH_POSTGRES") or os.environ.get("STUDYBOT_TEST_POSTGRES")
    if not url:
        sys.exit("set STUDYBOT_BENCH_POSTGRES to a PostgreSQL URL (.ci/postgres start DIR)")
    when = f"{datetime.now(UTC):%Y-%m-%d}"
    print(f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus, {when}")
    results: dict[str, list[float]] = {}
    with TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for engine in ("sqlite", "postgresql"):
                async with target(engine, url, Path(tmp)) as where:
                    results.setdefault(f"answers/s {engine}", []).append(
                        await answers(where, args.members, 1)
                    )
                async with target(engine, url, Path(tmp)) as where:
                    results.setdefault(f"due minute {engine}, 1 process", []).append(
                        await due_minute(where, args.channels, 1)
                    )
            async with target("postgresql", url, Path(tmp)) as where:
                results.setdefault("due minute postgresql, 3 processes", []).append(
                    await due_minute(where, args.channels, 3)
                )
    for name, values in results.items():
        unit = "" if name.startswith("answers") else " s"
        print(f"{name:40} median {statistics.median(values):10.3f}{unit}  ({len(values)} rounds)")
    med = {name: statistics.median(values) for name, values in results.items()}
    one = med["due minute postgresql, 1 process"]
    ratio = med["answers/s postgresql"] / med["answers/s sqlite"]
    print(f"answers/s postgresql / sqlite: {ratio:.2f}")
    print(f"due minute postgresql / sqlite: {one / med['due minute sqlite, 1 process']:.2f}")
    three = med["due minute postgresql, 3 processes"]
    print(f"due minute 3 processes / 1 process (postgresql): {three / one:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
