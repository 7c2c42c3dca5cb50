"""Benchmark: a live round under a crowd (issue 30's targets).

    .venv/bin/python bench/bench_rounds.py [--members 200] [--events 100000] [--rounds 5]

On a SQLite database that already holds ``--events`` score events (written in bulk, as a busy
workspace's history), each round of the benchmark:

- **answers**: ``--members`` members click a round question within 2 seconds (their clicks
  spread evenly over the 2 s, as a crowd arrives); every answer must be recorded, and each
  private reply's latency from its click is measured (target: p95 within 50 ms). Baseline: the
  same crowd on an ordinary ``/quiz`` question in the same run (no speed bonus to work out).
- **reveal**: the scheduler closes the question at its deadline; the post must be edited once.
- **next question**: how long the round's next step takes from its due instant to the
  question being sent (target: within 1 s). Baseline: a ``/quiz`` question posted and sent.

Figures are medians over rounds; the machine and date are printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine_line  # noqa: E402
from bot.app import Built, build_services, due_sources, timer_loop  # noqa: E402
from bot.core import replies  # noqa: E402
from bot.core.clock import SimulatedClock  # noqa: E402
from bot.core.messages import Message  # noqa: E402
from bot.core.models import ChatContext  # noqa: E402
from bot.core.requests import RoundStart  # noqa: E402
from bot.questions.loader import load_packs  # noqa: E402
from bot.services.rounds import READY  # noqa: E402
from bot.storage.database import Database, open_database  # noqa: E402
from bot.storage.timefmt import to_db  # noqa: E402

NOW = datetime(2026, 3, 4, 18, 0, tzinfo=UTC)
SPREAD = 2.0  # seconds over which the crowd's clicks arrive


class Chat:
    """A gateway that records sends and edits, as the in-process fakes would."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, Message]] = []
        self.edits: list[Message] = []

    async def send_post(self, channel: str, message: Message) -> str:
        self.sent.append((time.perf_counter(), message))
        return f"m{len(self.sent)}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        self.edits.append(message)


def person(i: int, channel: str = "study") -> ChatContext:
    return ChatContext(
        "bench", "ws", channel, f"u{i}", f"member{i}", channel_name=channel, is_admin=i == 0
    )


async def seed_history(db: Database, events: int) -> None:
    """``events`` score events of 2,000 members over 90 days, written in bulk."""
    ws = int(await db.fetchval("SELECT id FROM workspaces WHERE external_id = 'ws'"))
    rng = random.Random(9)
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO members (workspace_id, external_id, display_name, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [(ws, f"h{i}", f"history{i}", to_db(NOW)) for i in range(2000)],
        )
    ids = [
        int(r[0]) for r in await db.fetchall("SELECT id FROM members WHERE workspace_id = ?", (ws,))
    ]
    rows = [
        (ws, rng.choice(ids), None, "answer", rng.choice((10, 20, 30)),
         to_db(NOW - timedelta(days=rng.uniform(0, 90))))
        for _ in range(events)
    ]  # fmt: skip
    async with db.write() as conn:
        await conn.executemany(
            "INSERT INTO score_events (workspace_id, member_id, answer_id, reason, points, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            rows,
        )


async def crowd(built: Built, post_id: int, choice: str, members: int, base: int) -> list[float]:
    """``members`` clicks spread over :data:`SPREAD` seconds; each reply's latency in ms."""
    quiz = built.services.quiz

    async def click(i: int) -> float:
        await asyncio.sleep(SPREAD * i / members)
        began = time.perf_counter()
        await quiz.answer(person(base + i), post_id, choice)
        return (time.perf_counter() - began) * 1000

    return list(await asyncio.gather(*(click(i) for i in range(members))))


async def right_letter(built: Built, message: Message) -> str:
    assert message.post_id is not None
    row = await built.timed.posts.get(message.post_id)
    assert row is not None
    item = (await built.services.catalogue.question(row.question_version_id)).item
    return replies.correct_letter(item) or "A"


def p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20)[-1]


async def one_round(
    built: Built, db: Database, clock: SimulatedClock, members: int, n: int
) -> dict[str, float]:
    services = built.services
    chat = Chat()
    scheduler = timer_loop(built.timed, chat, clock, timedelta(hours=2), concurrency=1)
    for source in due_sources(services, chat):
        scheduler.add_source(source)
    channel = f"round{n}"
    starter = person(0, channel)
    async with scheduler.running():
        await services.rounds.start(starter, RoundStart(questions=2, seconds=20))
        await scheduler.advance(clock, clock.now() + READY)  # the first question follows
        first = chat.sent[-1][1]
        assert first.post_id is not None
        letter = await right_letter(built, first)
        round_ms = await crowd(built, first.post_id, letter, members, base=100_000 * (n + 1))
        recorded = int(
            await db.fetchval("SELECT count(*) FROM answers WHERE post_id = ?", (first.post_id,))
        )
        assert recorded == members, (recorded, members)
        # The deadline: the scheduler reveals it (one edit); then the pause, then question 2.
        await scheduler.advance(clock, clock.now() + timedelta(seconds=21))
        edits = sum(1 for m in chat.edits if m.post_id == first.post_id)
        due = await services.rounds.next_time(clock.now())
        assert due is not None
        clock.set(due)
        began = time.perf_counter()
        await scheduler.settle()
        sent_at, second = chat.sent[-1]
        assert second.post_id not in (None, first.post_id)
        next_ms = (sent_at - began) * 1000
        await services.rounds.stop(starter)
    # Baseline: the same crowd on an ordinary /quiz question, and one /quiz posted and sent.
    began = time.perf_counter()
    draft = await services.quiz.post_question(person(0, f"quiz{n}"), kinds=("multiple_choice",))
    await services.posting.publish(draft, chat)
    quiz_post_ms = (time.perf_counter() - began) * 1000
    letter = await right_letter(built, draft.message)
    quiz_ms = await crowd(built, draft.post.id, letter, members, base=200_000 * (n + 1))
    return {
        "round_p95": p95(round_ms),
        "round_median": statistics.median(round_ms),
        "quiz_p95": p95(quiz_ms),
        "edits": float(edits),
        "next_ms": next_ms,
        "quiz_post_ms": quiz_post_ms,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--members", type=int, default=200)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        db = await open_database(Path(tmp) / "bench.sqlite3")
        clock = SimulatedClock(NOW)
        built = build_services(db, clock, default_timezone="UTC", rng=random.Random(3))
        await built.services.packs.sync(load_packs(ROOT / "questions").packs)
        await built.services.standings.stats(person(0), picture=False)  # the workspace
        await seed_history(db, args.events)
        events = int(await db.fetchval("SELECT count(*) FROM score_events"))
        for n in range(args.rounds):
            results.append(await one_round(built, db, clock, args.members, n))
        await db.close()

    def med(key: str) -> float:
        return statistics.median(r[key] for r in results)

    print(machine_line())
    print(f"{args.members} members click within {SPREAD:.0f} s, on {events:,} score events "
          f"(median of {args.rounds} rounds):")  # fmt: skip
    print(
        f"  round question: reply p95 {med('round_p95'):.1f} ms (median {med('round_median'):.1f}"
        f" ms); baseline /quiz question p95 {med('quiz_p95'):.1f} ms; ratio "
        f"{med('round_p95') / med('quiz_p95'):.2f}x"
    )
    print(f"  every answer recorded; reveal edits per question: {med('edits'):.0f}")
    print(
        f"  next question sent {med('next_ms'):.1f} ms after its due instant; baseline /quiz "
        f"post and send {med('quiz_post_ms'):.1f} ms; ratio "
        f"{med('next_ms') / med('quiz_post_ms'):.2f}x"
    )


if __name__ == "__main__":
    asyncio.run(main())
