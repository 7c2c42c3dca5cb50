"""Several bot processes on one PostgreSQL, and `kill -9` in the middle (issue 18's evidence).

Real processes (tests/multiproc/worker.py: the real service and scheduler), a real PostgreSQL
and a real SIGKILL. One process claims the 09:00 occurrences and dies mid-send; another dies
in the middle of a burst of answers. The survivors must post every occurrence exactly once,
take the dead one's claims over once their lease runs out, and keep every acknowledged answer,
each counted once, with the scores and the review log consistent.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.storage.database import open_database
from bot.storage.reviews import ReviewStore
from bot.storage.scores import ScoreStore
from tests.conftest import TEST_PACKS, fresh_schema
from tests.helpers import member, schedule_command
from tests.multiproc.worker import START

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
CHANNELS = 12
WORKER = Path(__file__).parent / "multiproc" / "worker.py"


class Proc:
    def __init__(self, url: str, name: str, log: Path, *extra: str) -> None:
        root = Path(__file__).parents[1]
        self.name = name
        self.p = subprocess.Popen(
            [sys.executable, str(WORKER), url, name, str(log), *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
        self.lines: list[str] = []

    def send(self, line: str) -> None:
        assert self.p.stdin is not None
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def until(self, wanted: str) -> list[str]:
        """Lines up to and including the first that starts with ``wanted``."""
        assert self.p.stdout is not None
        seen: list[str] = []
        while line := self.p.stdout.readline():
            seen.append(line.strip())
            self.lines.append(line.strip())
            if line.startswith(wanted):
                return seen
        raise AssertionError(f"{self.name} exited ({self.p.wait()}) before {wanted!r}: {seen}")

    def kill9(self) -> None:
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()

    def finish(self) -> None:
        if self.p.poll() is None:
            assert self.p.stdin is not None
            self.p.stdin.close()
            self.p.wait(timeout=60)


@pytest.fixture
async def shared_url() -> AsyncIterator[str]:
    async with fresh_schema() as url:
        db = await open_database(url)
        built = build_services(
            db, SimulatedClock(START), default_timezone="UTC", rng=random.Random(1)
        )
        service = built.services
        await service.packs.sync(load_packs(TEST_PACKS).packs)
        for i in range(CHANNELS):
            reply = await schedule_command(
                service, member("root", admin=True, channel=f"c{i}"), "add", ["09:00"]
            )
            assert "Schedule #" in reply.message.plain_text()
        await db.close()
        yield url


async def test_a_killed_process_loses_no_post_and_no_acknowledged_answer(
    shared_url: str, tmp_path: Path
) -> None:
    log = tmp_path / "sends.log"
    doomed = Proc(shared_url, "doomed", log, "--hang")
    survivors = [Proc(shared_url, f"s{i}", log) for i in range(2)]
    answerer = Proc(shared_url, "answerer", log)
    everyone = [doomed, *survivors, answerer]
    try:
        for proc in everyone:
            proc.until("ready")
        # The doomed process is first at 09:00: it claims every occurrence, then hangs in the
        # first send and is killed there. The survivors, due at the same minute, find the
        # claims taken and must leave them alone while the lease holds.
        doomed.send("post")
        doomed.until("sending")
        for proc in survivors:
            proc.send("post")
        for proc in survivors:
            proc.until("posted")
        assert not log.exists() or "send" not in log.read_text(), "a claim was not respected"
        doomed.kill9()
        # Past the lease: the survivors take the dead process's claims over, once each.
        for proc in survivors:
            proc.send("later")
        for proc in survivors:
            proc.until("done")
        sends = [line.split() for line in log.read_text().splitlines() if line.startswith("send")]
        per_channel = Counter(channel for _, _, channel, _ in sends)
        assert per_channel == {f"c{i}": 1 for i in range(CHANNELS)}, per_channel
        assert {who for _, who, _, _ in sends} <= {"s0", "s1"}
        # A burst of answers through three processes; one is killed in the middle of it.
        answerer.send("answer 8")
        for proc in survivors:
            proc.send("answer 8")
        answerer.until("ack")
        for _ in range(15):
            answerer.until("ack")
        answerer.kill9()
        for proc in survivors:
            proc.until("answered")
    finally:
        for proc in everyone:
            if proc.p.poll() is None and proc in (doomed, answerer):
                proc.kill9()
        for proc in survivors:
            proc.finish()
    acked = {
        (int(line.split()[1]), line.split()[2])
        for proc in (*survivors, answerer)
        for line in proc.lines
        if line.startswith("ack ")
    }
    db = await open_database(shared_url)
    try:
        rows = await db.fetchall(
            "SELECT a.post_id, m.external_id FROM answers a JOIN members m ON m.id = a.member_id"
        )
        stored = Counter((int(r[0]), str(r[1])) for r in rows)
        assert acked <= set(stored), sorted(acked - set(stored))[:5]
        assert all(n == 1 for n in stored.values())  # each answer counted once
        assert len(stored) == CHANNELS * 8  # the survivors answered every post as everyone
        unsent = await db.fetchval("SELECT count(*) FROM posts WHERE platform_message_id IS NULL")
        assert unsent == 0
        assert await db.fetchval("SELECT count(*) FROM posts") == CHANNELS
        # `db check`: the scores add up and the review log replays to the stored cards.
        assert await db.integrity_problems() == []
        assert await ScoreStore(db).consistency_problems() == []
        assert await ReviewStore(db).replay_problems() == []
    finally:
        await db.close()
