"""One bot process for tests/test_several_processes.py: the real service and scheduler on a
shared PostgreSQL, driven line by line over stdin, reporting over stdout.

Commands: ``post`` (advance the simulated clock to 09:00, the due minute), ``later`` (advance
to 09:01: past every lease), ``answer N`` (answer every open post as members m0..mN-1). The
gateway appends each send to a log file the test reads; ``--hang`` makes every send hang, as
in a process that dies mid-send.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.app import build_services, timer_loop
from bot.core.clock import SimulatedClock
from bot.core.errors import AlreadyAnswered, BadInput
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.questions.loader import load_packs
from bot.storage.database import open_database

START = datetime(2026, 3, 4, 8, 59, 30, tzinfo=UTC)
DUE = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)
LATER = datetime(2026, 3, 4, 9, 1, tzinfo=UTC)
PACKS = Path(__file__).parents[1] / "data" / "packs"


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class LogGateway:
    """Sends are lines in a shared log (O_APPEND: whole lines, whatever the interleaving)."""

    def __init__(self, name: str, log: Path, hang: bool) -> None:
        self.name = name
        self.fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        self.hang = hang
        self.count = 0

    async def send_post(self, channel: str, message: Message) -> str:
        if self.hang:
            say("sending")
            await asyncio.Event().wait()  # never returns: the test kills this process
        self.count += 1
        os.write(self.fd, f"send {self.name} {channel} {message.post_id}\n".encode())
        return f"{self.name}-{self.count}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        os.write(self.fd, f"edit {self.name} {channel} {message_id}\n".encode())


def who(member: str, channel: str) -> ChatContext:
    return ChatContext(
        platform="test",
        workspace="ws1",
        channel=channel,
        member=f"id-{member}",
        member_name=member,
        is_admin=False,
        channel_name=channel,
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("name")
    parser.add_argument("log", type=Path)
    parser.add_argument("--hang", action="store_true")
    parser.add_argument("--lease", type=float, default=45.0)
    args = parser.parse_args()

    db = await open_database(args.url)
    clock = SimulatedClock(START)
    built = build_services(db, clock, default_timezone="UTC", rng=random.Random(os.getpid()))
    await built.services.packs.sync(load_packs(PACKS).packs)
    gateway = LogGateway(args.name, args.log, args.hang)
    scheduler = timer_loop(
        built.timed,
        gateway,
        clock,
        timedelta(minutes=10),
        lease=timedelta(seconds=args.lease),
        sync_every=timedelta(seconds=5),
    )
    await scheduler.start()
    say("ready")
    loop = asyncio.get_running_loop()
    while line := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
        verb, *rest = line.split()
        if verb == "post":
            await scheduler.advance(clock, DUE)
            say("posted")
        elif verb == "later":
            await scheduler.advance(clock, LATER)
            say("done")
        elif verb == "answer":
            rows = await db.fetchall(
                "SELECT p.id, c.external_id FROM posts p JOIN channels c ON c.id = p.channel_id "
                "WHERE p.closed_at IS NULL ORDER BY p.id"
            )
            for index in range(int(rest[0])):
                for post_id, channel in rows:
                    ctx = who(f"m{index}", str(channel))
                    try:
                        try:
                            await built.services.quiz.answer(ctx, int(post_id), "A")
                        except BadInput:  # a flashcard: graded, not chosen
                            await built.services.quiz.answer(ctx, int(post_id), "good")
                    except AlreadyAnswered:
                        pass  # through another process first: that answer is the one kept
                    say(f"ack {post_id} id-m{index}")
            say("answered")
    await scheduler.stop()
    await db.close()


if __name__ == "__main__":
    asyncio.run(main())
