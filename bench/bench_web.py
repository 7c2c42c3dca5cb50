"""Benchmark: the admin web page on a big workspace, and a schedule change reaching the timer.

Run from the repository root::

    .venv/bin/python bench/bench_web.py [--requests N] [--events N] [--schedules N]

On a SQLite file: one console workspace with 10 channels, ``--schedules`` (200) schedules and
``--events`` (100,000) score events of 2,000 members over 90 days, written in bulk; the real
app (``bot.web.app.create_app``) over the real services, requested in-process through httpx's
ASGI transport (the page's own time, no network), signed in by a one-time link.

1. every page, ``--requests`` (50) times each after one warm-up: median and p95 (target: p95
   within 50 ms);
2. a schedule added on the page while the real scheduler loop runs in the same process (as
   ``studybot run --web-port``): the time from the form's POST until the loop's plan has the
   new schedule's first posting (target: within 1 s, no restart). Median of 10.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from bot.app import build_services, due_sources, timer_loop
from bot.core.clock import SystemClock
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.core.schedule_spec import ScheduleForm
from bot.questions.loader import load_packs
from bot.services.web_access import Person
from bot.storage.database import Database, open_database
from bot.storage.timefmt import to_db
from bot.web.app import create_app

ROOT = Path(__file__).resolve().parent.parent
CHANNELS = 10
PAGES = ("", "schedules", "packs", "reports", "boards", "members", "settings", "audit")


class Chat:
    """An in-process gateway: what the scheduler sends goes nowhere."""

    async def send_post(self, channel: str, message: Message) -> str:
        return "m"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        return None

    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        return True


def admin(channel: str) -> ChatContext:
    return ChatContext(
        "console", "console", channel, "me", "me", is_admin=True, channel_name=channel
    )


async def seed(db: Database, services: object, schedules: int, events: int) -> int:
    from bot.services.bundle import Services

    assert isinstance(services, Services)
    per_channel = -(-schedules // CHANNELS)
    made = 0
    for c in range(CHANNELS):
        ctx = admin(f"c{c}")
        for n in range(per_channel):
            if made == schedules:
                break
            minute = (c * per_channel + n) % 1440
            form = ScheduleForm(time=f"{minute // 60:02d}:{minute % 60:02d}", timezone="UTC")
            await services.schedules.add(ctx, form)
            made += 1
    workspace = await services.places.workspace(admin("c0"))
    now = datetime.now(UTC)
    rng = random.Random(9)
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO members (workspace_id, external_id, display_name, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(workspace.id, f"h{i}", f"history{i}", to_db(now)) for i in range(2000)],
        )
    ids = [
        int(r[0])
        for r in await db.fetchall("SELECT id FROM members WHERE workspace_id = ?", (workspace.id,))
    ]
    rows = [
        (workspace.id, rng.choice(ids), None, "answer", rng.choice((10, 20, 30)),
         to_db(now - timedelta(days=rng.uniform(0, 90))))
        for _ in range(events)
    ]  # fmt: skip
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO score_events (workspace_id, member_id, answer_id, reason, points, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )
    return workspace.id


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = await open_database(Path(tmp) / "web.sqlite3")
        try:
            built = build_services(db, SystemClock(), default_timezone="UTC")
            services = built.services
            await services.packs.sync(load_packs(ROOT / "questions").packs)
            ws = await seed(db, services, args.schedules, args.events)
            app = create_app(services, secret=b"bench-secret-0123456789abcdef")
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as web:
                token = await services.web.make_link_token(Person("console", "me", "me"), [ws])
                form = await web.get(f"/signin?token={token}")
                csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
                assert csrf
                done = await web.post("/signin", data={"csrf": csrf[1], "token": token})
                assert done.status_code == 303, done.text
                home = await web.get("/")
                page_csrf = re.search(r'name="csrf" value="([^"]+)"', home.text)
                assert page_csrf
                timings: dict[str, list[float]] = {}
                for name in PAGES:
                    path = f"/w/{ws}/{name}" if name else "/"
                    assert (await web.get(path)).status_code == 200, path  # warm-up
                    samples = []
                    for _ in range(args.requests):
                        began = time.perf_counter()
                        response = await web.get(path)
                        samples.append((time.perf_counter() - began) * 1000)
                        assert response.status_code == 200, path
                    timings[name or "home"] = samples

                scheduler = timer_loop(built.timed, Chat(), SystemClock(), timedelta(hours=2))
                for source in due_sources(services, Chat()):
                    scheduler.add_source(source)
                reached: list[float] = []
                channel = await services.places.channel(admin("c0"))
                async with scheduler.running():
                    await scheduler.settle()
                    for n in range(10):
                        soon = datetime.now(UTC) + timedelta(minutes=2 + n)
                        data = {
                            "csrf": page_csrf[1],
                            "channel": str(channel[1].id),
                            "time": f"{soon:%H:%M}",
                            "timezone": "UTC",
                            "action": "add",
                        }
                        began = time.perf_counter()
                        added = await web.post(f"/w/{ws}/schedules", data=data)
                        assert added.status_code == 200, added.text
                        target = soon.replace(second=0, microsecond=0)
                        while (due := scheduler.next_due()) is None or due > target:
                            await asyncio.sleep(0.001)
                            if time.perf_counter() - began > 5:
                                raise AssertionError("the scheduler never planned the schedule")
                        reached.append((time.perf_counter() - began) * 1000)
                        sid = re.search(r"Schedule #(\d+) added", added.text)
                        assert sid
                        await services.schedules.remove(admin("c0"), int(sid[1]))
        finally:
            await db.close()
    print(f"date (UTC)  {datetime.now(UTC):%Y-%m-%d %H:%M}")
    print(
        f"machine     {os.cpu_count()} cores, {platform.platform()}, "
        f"Python {platform.python_version()}"
    )
    print(f"workspace   {args.schedules} schedules in {CHANNELS} channels, {args.events:,} events")
    for name, samples in timings.items():
        print(
            f"{name:<10}  median {statistics.median(samples):6.1f} ms  "
            f"p95 {percentile(samples, 0.95):6.1f} ms  ({len(samples)} requests)"
        )
    print(
        f"schedule added on the page -> planned by the running loop: median "
        f"{statistics.median(reached):.1f} ms, slowest {max(reached):.1f} ms (of {len(reached)})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--schedules", type=int, default=200)
    asyncio.run(main(parser.parse_args()))
