"""Issue 18's evidence, end to end: three bot processes, two sandbox hosts, one PostgreSQL.

Everything is the real thing, on loopback: three `studybot run --platform slack --http` replicas
on one PostgreSQL (`DATABASE_URL`), behind a "load balancer" (this test: round robin, and the
next replica when one refuses the connection), two `studybot sandbox serve` hosts
(`SANDBOX_URLS`), and the local Slack fake. Schedules are added through different replicas, so
each replica learns of the others' schedules through the database.

Then, at once: a burst of answer clicks around a due minute, and snippet runs. One replica is
`kill -9`ed at the due instant and one sandbox host in the middle of the runs. Afterwards:
- every click is stored, each counted once: the replicas store a click before they ack it, so
  a click the dead replica acked is kept, and one it did not the balancer sent elsewhere;
- every scheduled channel got its question exactly once (a survivor takes over what the dead
  replica had claimed, once its lease runs out);
- every run got one reply: its output, or (lost with the host) the retry message, never both;
- `studybot db check` on the PostgreSQL database is clean.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest

from bot.adapters.slack.adapter import ACK_BUDGET
from bot.adapters.slack.manifest import RUN_MODAL_CALLBACK
from bot.sandbox.client.remote import LOST_RUN
from bot.storage.database import open_database
from tests.conftest import fresh_schema
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import post_signed
from tests.fakes.slack_requests import SlackRequest
from tests.helpers import free_port
from tests.sandbox.test_remote import TOKEN, _serve, _wait_healthy
from tests.test_cli import studybot
from tests.test_operations import Bot, quiz_question

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]
ADMIN = "U0ALICE"  # the fake's default user
SCHEDULED = ["C0SCHED1", "C0SCHED2", "C0SCHED3"]
CLICKERS = [f"U{n:04d}" for n in range(240)]
RUNNERS = [f"URUN{n:02d}" for n in range(6)]


class Replica(Bot):
    """One `studybot run --platform slack --http` process on the shared database."""

    ready_within = 90.0

    def __init__(self, fake: FakeSlack, url: str, sandboxes: list[str]) -> None:
        super().__init__(
            fake,
            Path(os.devnull),  # never used: DATABASE_URL wins
            DATABASE_URL=url,
            SANDBOX_ENABLED="true",
            SANDBOX_URLS=",".join(sandboxes),
            SANDBOX_TOKEN=TOKEN,
            SLACK_ADMIN_USERS=ADMIN,
        )

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(15)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.communicate(timeout=30)


class Balancer:
    """Round robin over the replicas; a refused connection goes to the next one (as any load
    balancer with health checks does). Returns the HTTP status Slack would see."""

    def __init__(self, replicas: list[Replica], fake: FakeSlack, http: aiohttp.ClientSession):
        self.replicas = replicas
        self.fake = fake
        self.http = http
        self._next = 0
        self.retried = 0  # requests a dead replica refused, sent to the next one
        self.answered_by: dict[str, tuple[Replica, float]] = {}  # key -> who acked, how fast

    async def send(self, request: SlackRequest, key: str | None = None) -> int:
        for _ in range(len(self.replicas) * 3):
            replica = self.replicas[self._next % len(self.replicas)]
            self._next += 1
            start = time.monotonic()
            try:
                status, _, _ = await post_signed(
                    replica.events, request, self.fake.signing_secret, session=self.http
                )
            except aiohttp.ClientError:
                self.retried += 1
                continue  # that replica is gone: the balancer tries the next
            if key is not None:
                self.answered_by[key] = (replica, time.monotonic() - start)
            return status
        raise AssertionError("no replica answered")


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with fresh_schema() as shared:
        yield shared


def _snippet(n: int) -> str:
    """A run that takes a moment and prints a marker its code does not contain."""
    return f'import time\ntime.sleep(2)\nprint("run-" + str({n} * 1001 + 5))'


def _due_minute() -> datetime:
    """The next whole minute at least 15 s away: time to set up the burst before it (the
    schedules, the question and the runs took about 3 s; the test prints what was to spare).
    The wait for the whole minute is most of this test's time: 35 s here made it 65 s on
    average."""
    soon = datetime.now(UTC) + timedelta(seconds=15)
    return soon.replace(second=0, microsecond=0) + timedelta(minutes=1)


async def test_three_replicas_two_sandbox_hosts_and_kill_9s(url: str, tmp_path: Path) -> None:
    hosts = []
    for _ in range(2):
        port = free_port()
        hosts.append((f"http://127.0.0.1:{port}", _serve(port)))
    # Real Slack voids a trigger id after 3 s; here a loaded machine may be slower than that
    # to open a modal, which is not what this test is about.
    async with FakeSlack(trigger_ttl=None) as fake:
        for user in [*CLICKERS, *RUNNERS]:
            fake.add_user(user, name=f"member{user}")
        for channel in SCHEDULED:
            fake.add_channel(channel, channel.lower())
        replicas: list[Replica] = []
        try:
            for host_url, _ in hosts:
                await asyncio.to_thread(_wait_healthy, host_url)
            replicas = [Replica(fake, url, [u for u, _ in hosts]) for _ in range(3)]
            connector = aiohttp.TCPConnector(limit=200)
            async with aiohttp.ClientSession(connector=connector) as http:
                for replica in replicas:
                    await replica.ready(http)
                lb = Balancer(replicas, fake, http)
                due = _due_minute()
                # One schedule per channel, each added through a different replica.
                for replica, channel in zip(replicas, SCHEDULED, strict=True):
                    status, _, _ = await post_signed(
                        replica.events,
                        fake.slash_command(text=f"schedule add {due:%H:%M}", channel_id=channel),
                        fake.signing_secret,
                        session=http,
                    )
                    assert status == 200
                ts, action = await quiz_question(lb.send, fake)

                # Snippet runs: each member opens the modal and submits a snippet that takes
                # a moment, so the sandbox host killed below is holding some of them.
                for runner in RUNNERS:
                    assert await lb.send(fake.slash_command(text="run", user_id=runner)) == 200
                await fake.wait_for(
                    lambda: len(fake.calls_to("views.open")) >= len(RUNNERS) or None,
                    timeout=30,
                    what="the run modals",
                )
                runs = [
                    asyncio.create_task(
                        lb.send(
                            fake.view_submission(
                                RUN_MODAL_CALLBACK,
                                {"code": {"code": _snippet(n)}},
                                view_id=fake.view(
                                    callback_id=RUN_MODAL_CALLBACK, user_id=runner
                                ).id,
                                user_id=runner,
                            )
                        )
                    )
                    for n, runner in enumerate(RUNNERS)
                ]
                await asyncio.sleep(1.0)
                hosts[1][1].kill()  # kill -9 a sandbox host while it holds runs

                # The click burst (40 a second) straddles the due minute; a replica dies at
                # the due instant, in the middle of it.
                spare = (due - datetime.now(UTC)).total_seconds() - 3
                print(f"set up with {spare:.1f} s to spare before the burst")
                await asyncio.sleep(max(0.0, spare))
                clicks = []
                for user in CLICKERS:
                    click = fake.block_action(action, user_id=user, message_ts=ts)
                    clicks.append(asyncio.create_task(lb.send(click, key=user)))
                    await asyncio.sleep(1 / 40)
                    if replicas[2].proc.poll() is None and datetime.now(UTC) >= due:
                        replicas[2].kill9()
                statuses = await asyncio.gather(*clicks)
                await asyncio.gather(*runs)
                assert all(s == 200 for s in statuses)
                assert replicas[2].proc.poll() is not None and lb.retried > 0  # it landed

                # Every scheduled channel gets its question, from a survivor if need be
                # (within the 45 s lease and the 5 s sync).
                await fake.wait_for(
                    lambda: all(fake.channel_messages(c) for c in SCHEDULED) or None,
                    timeout=90,
                    what="a question in every scheduled channel",
                )
                await asyncio.sleep(6)  # a sync later: nothing posts a second time
                posted = {c: len(fake.channel_messages(c)) for c in SCHEDULED}
                assert posted == dict.fromkeys(SCHEDULED, 1), posted

                # Every run got one reply: the output, or the lost-with-its-host message.
                def replies(n: int, runner: str) -> list[str]:
                    outputs = [m for m in fake.messages if f"run-{n * 1001 + 5}" in str(m.blocks)]
                    lost = [
                        e for e in fake.ephemerals_for(runner) if LOST_RUN in f"{e.text} {e.blocks}"
                    ]
                    return ["output"] * len(outputs) + ["lost"] * len(lost)

                await fake.wait_for(
                    lambda: all(replies(n, r) for n, r in enumerate(RUNNERS)) or None,
                    timeout=60,
                    what="a reply to every run",
                )
                outcomes = [replies(n, r) for n, r in enumerate(RUNNERS)]
                print("runs:", outcomes, "clicks re-sent:", lb.retried)
                assert all(len(o) == 1 for o in outcomes), outcomes
                assert ["output"] in outcomes  # the surviving host ran some
        finally:
            for replica in replicas:
                replica.stop()
            for _, proc in hosts:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(20)

    acknowledged = {
        user
        for user in CLICKERS
        if any("Correct" in (e.text or "") for e in fake.ephemerals_for(user))
    }
    async with await open_database(url) as db:
        rows = await db.fetchall(
            "SELECT m.external_id, a.post_id, count(*) FROM answers a "
            "JOIN members m ON m.id = a.member_id WHERE m.external_id LIKE 'U0___' "
            "GROUP BY m.external_id, a.post_id"
        )
    stored = {str(r[0]) for r in rows}
    assert acknowledged <= stored, sorted(acknowledged - stored)[:5]  # none told, then lost
    # 200 means stored (the click is kept before the ack), and the balancer re-sent what the
    # dead replica never answered: so every click is in, whichever side of the kill it fell.
    # The one documented exception: a click the dead replica acked only after ACK_BUDGET
    # (its database was slower than that) may have died with it.
    late = {
        user
        for user, (replica, took) in lb.answered_by.items()
        if replica is replicas[2] and took >= ACK_BUDGET
    }
    print("clicks acked late by the killed replica:", len(late))
    assert set(CLICKERS) - late <= stored <= set(CLICKERS)
    assert {int(r[2]) for r in rows} == {1}  # each counted once
    check = await asyncio.to_thread(studybot, "db", "check", env={"DATABASE_URL": url})
    assert check.returncode == 0, check.stdout + check.stderr
