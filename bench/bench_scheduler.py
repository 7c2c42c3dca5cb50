"""Benchmark: the scheduler with 10,000 schedules across 2,000 channels.

    .venv/bin/python bench/bench_scheduler.py [--channels 2000] [--per-channel 5]
        [--history-days 30] [--rounds 5] [--idle 10]

Every channel has one 09:00 Europe/Berlin schedule ("until the next question"), so 2,000
questions fall due in the same second -- and 2,000 reveals of yesterday's questions with them;
its other schedules are spread over the day in eight timezones (none within 15 minutes of that
09:00). The database holds ``--history-days`` of posts for every schedule, as a running bot's
would. Each round runs in a fresh process on a fresh copy of the database, with a real clock
shifted so that 09:00 is three seconds after start-up, and a gateway that records every send.

Figures are medians over rounds, each next to a baseline measured in the same run:
- start-up: ``Scheduler.start()`` plus its first pass; baseline: the empty scheduler.
- memory: RSS growth from start-up; baseline: the empty scheduler.
- posting latency: from the due instant to each send (median, p99, last) for the due minute;
  baseline: the same 2,000 posts made directly through ``Services.post_in`` and the
  gateway with the same concurrency, no scheduler (the floor the scheduler adds to).
- idle CPU: process CPU time over ``--idle`` seconds while the scheduler sleeps with every
  schedule loaded; baseline: the same wait with the database open and no scheduler.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.app import Built, build_services, timer_loop  # noqa: E402
from bot.core.clock import SimulatedClock  # noqa: E402
from bot.core.messages import Message  # noqa: E402
from bot.core.schedule_spec import (  # noqa: E402
    build_spec,
    encode_spec,
    next_occurrence,
    occurrence_key,
)
from bot.questions.loader import load_packs  # noqa: E402
from bot.settings import default_packs_dir  # noqa: E402
from bot.storage.database import Database, open_database  # noqa: E402
from bot.storage.timefmt import to_db  # noqa: E402

PACKS = default_packs_dir()
DUE = datetime(2026, 3, 18, 8, 0, tzinfo=UTC)  # Wednesday 09:00 Europe/Berlin (CET)
LEAD = 15.0  # seconds from start-up to the due instant (the batch is prepared 10 s ahead)
CONCURRENCY = 16
ZONES = (
    "Europe/Berlin",
    "Europe/London",
    "America/New_York",
    "America/Los_Angeles",
    "Asia/Kolkata",
    "Asia/Tokyo",
    "Australia/Sydney",
    "UTC",
)
DAYS = ("daily", "weekdays", "weekends", "mon,wed,fri", "tue,thu")
WINDOWS = (None, "1h", "90m", "1d")
QUIET = timedelta(minutes=15)  # no other schedule posts this close to the due instant


# --- the pieces a round needs ----------------------------------------------------------------


class OffsetClock:
    """The real clock, shifted: time passes for real, but it is the benchmark's day."""

    def __init__(self, at: datetime) -> None:
        self._offset = at - datetime.now(UTC)

    def now(self) -> datetime:
        return datetime.now(UTC) + self._offset

    async def sleep_until(self, moment: datetime) -> None:
        while (remaining := (moment - self.now()).total_seconds()) > 0:  # noqa: ASYNC110
            await asyncio.sleep(min(remaining, 60.0))


class Recorder:
    """A gateway that records when each post was sent (``time.perf_counter``)."""

    def __init__(self) -> None:
        self.sent: list[float] = []
        self.edited: list[float] = []
        self.all_sent = asyncio.Event()
        self.expect = 0

    async def send_post(self, channel: str, message: Message) -> str:
        self.sent.append(time.perf_counter())
        if len(self.sent) >= self.expect:
            self.all_sent.set()
        return f"m{message.post_id}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        self.edited.append(time.perf_counter())


class Prepared(logging.Handler):
    """Catches the scheduler's "prepared N question(s) ... in X ms" line."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.ms: float | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("prepared "):
            self.ms = float(record.args[-1])  # type: ignore[index]


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def open_service(path: Path, clock: object) -> tuple[Database, Built]:
    db = await open_database(path)
    built = build_services(db, clock, default_timezone="UTC", rng=random.Random(1))  # type: ignore[arg-type]
    await built.services.packs.sync(load_packs(PACKS).packs)
    return db, built


# --- seeding ---------------------------------------------------------------------------------


def other_spec(rng: random.Random) -> str:
    """A schedule at a random minute, zone and day rule, not within QUIET of the due instant."""
    while True:
        spec = build_spec(
            time=f"{rng.randrange(24):02d}:{rng.randrange(60):02d}",
            timezone=rng.choice(ZONES),
            days=rng.choice(DAYS),
            window=rng.choice(WINDOWS),
        )
        if abs(next_occurrence(spec, DUE - QUIET) - DUE) > QUIET:
            return encode_spec(spec)


async def seed(path: Path, channels: int, per_channel: int, history_days: int) -> None:
    rng = random.Random(42)
    created = DUE - timedelta(days=history_days + 1)
    db, built = await open_service(path, SimulatedClock(created))
    workspace = await built.timed.directory.workspace("bench", "ws", "bench", created)
    channel_ids = [
        (await built.timed.directory.channel(workspace, f"c{i}", f"c{i}", created)).id
        for i in range(channels)
    ]
    if per_channel == 0:
        await db.close()
        return
    versions = [int(r[0]) for r in await db.fetchall("SELECT current_version_id FROM questions")]
    heavy = encode_spec(build_spec(time="09:00", timezone="Europe/Berlin"))
    handled = to_db(DUE - QUIET)
    rows = []
    for channel_id in channel_ids:
        rows.append((channel_id, heavy))
        rows.extend((channel_id, other_spec(rng)) for _ in range(per_channel - 1))
    stamp = to_db(created)
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO schedules (channel_id, spec, created_at, updated_at, handled_until) "
            "VALUES (?, ?, ?, ?, ?)",
            [(channel_id, spec, stamp, stamp, handled) for channel_id, spec in rows],
        )
    # History: one post a day per schedule, all closed except yesterday's 09:00 questions,
    # which are open until today's post (so today's 2,000 posts each reveal one first).
    schedules = await db.fetchall("SELECT id, channel_id, spec FROM schedules ORDER BY id")
    history = []
    for schedule_id, channel_id, spec in schedules:
        is_heavy = spec == heavy
        for day in range(history_days, 0, -1):
            posted = DUE - timedelta(days=day, minutes=0 if is_heavy else rng.randrange(1, 1440))
            last_open = is_heavy and day == 1
            history.append(
                (
                    channel_id,
                    rng.choice(versions),
                    schedule_id,
                    occurrence_key(posted),
                    to_db(posted),
                    None if last_open else to_db(posted + timedelta(hours=1)),
                    f"m-{schedule_id}-{day}",
                )
            )
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO posts (channel_id, question_version_id, schedule_id, occurrence, "
            "posted_at, closed_at, platform_message_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            history,
        )
    await db.close()


# --- one round, in its own process ---------------------------------------------------------


async def round_scheduler(path: Path, expect: int, idle: float) -> dict[str, object]:
    rss_before = rss_kib()
    prepared = Prepared()
    logger = logging.getLogger("bot.scheduler")
    logger.addHandler(prepared)
    logger.setLevel(logging.INFO)
    clock = OffsetClock(DUE - timedelta(seconds=LEAD))
    db, built = await open_service(path, clock)
    gateway = Recorder()
    gateway.expect = max(expect, 1)
    scheduler = timer_loop(built.timed, gateway, clock, timedelta(hours=2), concurrency=CONCURRENCY)
    began = time.perf_counter()
    await scheduler.start()
    await scheduler.settle()
    startup = time.perf_counter() - began
    rss_after = rss_kib()
    result: dict[str, object] = {
        "startup_s": startup,
        "load_s": scheduler.loaded_in,
        "rss_kib": rss_after - rss_before,
        "early_sends": len(gateway.sent),
    }
    if expect:
        due_at = time.perf_counter() + (DUE - clock.now()).total_seconds()
        await asyncio.wait_for(gateway.all_sent.wait(), timeout=120)
        late = sorted(t - due_at for t in gateway.sent)
        result.update(
            sent=len(late),
            revealed=len(gateway.edited),
            median_s=statistics.median(late),
            p99_s=late[int(len(late) * 0.99) - 1],
            last_s=late[-1],
            prepare_ms=prepared.ms or 0.0,
        )
        await asyncio.sleep(1.0)  # let the pass finish its bookkeeping
    passes = scheduler.passes
    cpu = time.process_time()
    await asyncio.sleep(idle)
    result["idle_cpu_s"] = time.process_time() - cpu
    result["idle_passes"] = scheduler.passes - passes
    result["sent_total"] = len(gateway.sent)
    await scheduler.stop()
    await db.close()
    return result


async def round_service(path: Path, count: int, idle: float) -> dict[str, object]:
    """The baseline: the same posts through the service directly, no scheduler."""
    clock = OffsetClock(DUE)
    db, built = await open_service(path, clock)
    gateway = Recorder()
    cpu = time.process_time()
    await asyncio.sleep(idle)
    idle_cpu = time.process_time() - cpu
    workspace = await built.timed.directory.workspace("bench", "ws", "bench", clock.now())
    channels = [
        await built.timed.directory.channel(workspace, f"c{i}", None, DUE) for i in range(count)
    ]
    queue = list(reversed(channels))
    began = time.perf_counter()

    async def worker() -> None:
        while queue:
            channel = queue.pop()
            draft = await built.services.posting.post_in(workspace, channel, schedule_id=None)
            assert draft is not None
            message_id = await gateway.send_post(draft.channel, draft.message)
            await built.services.posting.attach_message(draft.post.id, message_id)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    late = sorted(t - began for t in gateway.sent)
    await db.close()
    return {
        "median_s": statistics.median(late),
        "p99_s": late[int(len(late) * 0.99) - 1],
        "last_s": late[-1],
        "idle_cpu_s": idle_cpu,
    }


def child(args: argparse.Namespace) -> None:
    path = Path(args.child)
    if args.mode == "service":
        result = asyncio.run(round_service(path, args.channels, args.idle))
    else:
        expect = args.channels if args.mode == "scheduler" else 0
        result = asyncio.run(round_scheduler(path, expect, args.idle))
    print(json.dumps(result))


def run_child(template: Path, work: Path, mode: str, args: argparse.Namespace) -> dict[str, float]:
    copy = work / f"round-{mode}.sqlite3"
    shutil.copyfile(template, copy)
    for suffix in ("-wal", "-shm"):
        Path(str(copy) + suffix).unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(copy), "--mode", mode,
         "--channels", str(args.channels), "--idle", str(args.idle)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"round {mode} failed:\n{proc.stderr}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def median(rounds: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rounds)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--channels", type=int, default=2000)
    parser.add_argument("--per-channel", type=int, default=5)
    parser.add_argument("--history-days", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        full, empty = work / "full.sqlite3", work / "empty.sqlite3"
        began = time.perf_counter()
        asyncio.run(seed(full, args.channels, args.per_channel, args.history_days))
        asyncio.run(seed(empty, args.channels, 0, 0))
        seeded = time.perf_counter() - began
        rounds: dict[str, list[dict[str, float]]] = {"scheduler": [], "empty": [], "service": []}
        for _ in range(args.rounds):
            for mode, results in rounds.items():
                results.append(run_child(full if mode != "empty" else empty, work, mode, args))
        size_mb = full.stat().st_size / 1e6

    total = args.channels * args.per_channel
    full_r, empty_r, service_r = rounds["scheduler"], rounds["empty"], rounds["service"]
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} "
        f"python {platform.python_version()}  date: {datetime.now(UTC):%Y-%m-%d}"
    )
    print(
        f"{total:,} schedules across {args.channels:,} channels, {args.history_days} days of "
        f"history ({size_mb:.0f} MB database, seeded in {seeded:.0f} s); medians of "
        f"{args.rounds} rounds, each in a fresh process"
    )
    print(
        f"start-up (start + first pass): {median(full_r, 'startup_s') * 1000:,.0f} ms "
        f"(loading the schedules: {median(full_r, 'load_s') * 1000:,.0f} ms); "
        f"baseline empty scheduler {median(empty_r, 'startup_s') * 1000:,.1f} ms"
    )
    print(
        f"memory (RSS growth at start-up): {median(full_r, 'rss_kib') / 1024:,.1f} MiB; "
        f"baseline empty scheduler {median(empty_r, 'rss_kib') / 1024:,.1f} MiB"
    )
    print(
        f"posting latency, {args.channels:,} posts due in the same minute (+ as many "
        f"until-next reveals): median {median(full_r, 'median_s') * 1000:,.0f} ms, "
        f"p99 {median(full_r, 'p99_s') * 1000:,.0f} ms, last {median(full_r, 'last_s') * 1000:,.0f}"
        f" ms after the due instant"
    )
    print(
        f"  baseline, the same posts straight through the service (no scheduler): median "
        f"{median(service_r, 'median_s') * 1000:,.0f} ms, last "
        f"{median(service_r, 'last_s') * 1000:,.0f} ms"
    )
    print("  rounds (last): " + ", ".join(f"{r['last_s'] * 1000:,.0f} ms" for r in full_r))
    print(
        f"  picked ahead, 10 s before the due instant: {median(full_r, 'prepare_ms'):,.0f} ms "
        "(not part of the latency)"
    )
    print(
        f"idle CPU over {args.idle:.0f} s: {median(full_r, 'idle_cpu_s') * 1000:,.1f} ms "
        f"with {total:,} schedules loaded ({median(full_r, 'idle_passes'):.0f} passes); "
        f"empty scheduler {median(empty_r, 'idle_cpu_s') * 1000:,.1f} ms; "
        f"baseline no scheduler {median(service_r, 'idle_cpu_s') * 1000:,.1f} ms"
    )
    assert all(r["early_sends"] == 0 for r in full_r), "something posted before it was due"
    assert all(r["sent_total"] == args.channels for r in full_r), "a post went missing or twice"


if __name__ == "__main__":
    main()
