"""Operating the real process: health and metrics, SIGTERM, and kill -9 in an answer burst.

Each test starts `studybot run --platform slack --http PORT` as a subprocess, pointed at the
local Slack fake, and talks to it over loopback exactly as Slack and an orchestrator would.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest

from tests.conftest import TEST_PACKS
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_fixtures import post_signed
from tests.fakes.slack_requests import SlackRequest
from tests.helpers import free_port
from tests.test_cli import studybot

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]
ROOT = Path(__file__).parents[1]


class Bot:
    """One `studybot run --platform slack --http` process and the URLs to reach it.

    ``env`` adds to (or overrides) the settings below: the scale-out test points several of
    these at one PostgreSQL and at sandbox hosts.
    """

    ready_within = 60.0  # seconds for /healthz to say ok

    def __init__(self, fake: FakeSlack, db: Path, **env: str) -> None:
        self.fake = fake
        self.db = db
        self.port = free_port()
        self.health_port = free_port()
        environ = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD_"))}
        environ.update(
            SLACK_BOT_TOKEN=fake.bot_token,
            SLACK_SIGNING_SECRET=fake.signing_secret,
            SLACK_API_URL=fake.api_url,
            STUDYBOT_DB=str(db),
            STUDYBOT_PACKS=str(TEST_PACKS),
            SANDBOX_ENABLED="false",
            HEALTH_PORT=str(self.health_port),
            LOG_FORMAT="json",
        )
        environ.update(env)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "run", "--platform", "slack", "--http", str(self.port)],
            cwd=ROOT,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events = f"http://127.0.0.1:{self.port}/slack/events"
        self.health = f"http://127.0.0.1:{self.health_port}"

    async def ready(self, http: aiohttp.ClientSession) -> dict[str, object]:
        deadline = time.monotonic() + self.ready_within
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.communicate()
            try:
                async with http.get(f"{self.health}/healthz") as resp:
                    if resp.status == 200:
                        return dict(await resp.json())
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
        raise AssertionError("the bot never became healthy")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=30)


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as slack:
        yield slack


async def quiz_question(
    send: Callable[[SlackRequest], Awaitable[int]], fake: FakeSlack
) -> tuple[str, str]:
    """Post the test pack's multiple-choice question (correct: B) in the default channel.

    ``/study quiz mini`` picks a random question, so it is asked until that one comes up;
    ``send`` delivers a request (to one bot, or through a balancer) and returns its status.
    Returns the message ts and the right answer's action id.
    """
    for attempt in range(30):
        assert await send(fake.slash_command(text="quiz mini")) == 200
        call = await fake.wait_for_call("chat.postMessage", count=attempt + 1, timeout=20)
        message = fake.message(call.response["ts"])
        answers = [a for a in message.action_ids() if a.startswith("answer:") and a.endswith(":B")]
        if (
            answers
            and message.channel == fake.default_channel_id
            and "When is the autograd graph built?" in json.dumps(message.blocks)
        ):
            return message.ts, answers[0]
    raise AssertionError("the test question never came up")


def sender(bot: Bot, http: aiohttp.ClientSession) -> Callable[[SlackRequest], Awaitable[int]]:
    """Deliver signed requests to ``bot`` as Slack does; each returns the HTTP status."""

    async def send(request: SlackRequest) -> int:
        status, _, _ = await post_signed(bot.events, request, bot.fake.signing_secret, session=http)
        return status

    return send


async def test_health_metrics_and_a_clean_sigterm(fake: FakeSlack, tmp_path: Path) -> None:
    bot = Bot(fake, tmp_path / "bot.sqlite3")
    try:
        async with aiohttp.ClientSession() as http:
            health = await bot.ready(http)
            assert health == {
                "status": "ok",
                "checks": {"gateway": True, "scheduler": True, "database": True},
            }
            await quiz_question(sender(bot, http), fake)
            async with http.get(f"{bot.health}/metrics") as resp:
                metrics = await resp.text()
            assert 'studybot_posts_total{origin="asked"}' in metrics
            began = time.monotonic()
            bot.proc.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(bot.proc.wait, 15)
            took = time.monotonic() - began
    finally:
        bot.stop()
    assert code == 0
    assert took < 10, f"shutdown took {took:.1f} s"
    check = studybot("db", "check", "--db", str(bot.db))
    assert check.returncode == 0, check.stderr


async def test_kill_9_in_an_answer_burst_loses_no_acknowledged_answer(
    fake: FakeSlack, tmp_path: Path
) -> None:
    members = [f"U{n:04d}" for n in range(1500)]
    for user in members:
        fake.add_user(user, name=f"member{user}")
    bot = Bot(fake, tmp_path / "bot.sqlite3")
    try:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=400)) as http:
            await bot.ready(http)
            ts, action = await quiz_question(sender(bot, http), fake)
            clicks = [fake.block_action(action, user_id=user, message_ts=ts) for user in members]
            burst = [
                asyncio.create_task(
                    post_signed(bot.events, click, fake.signing_secret, session=http)
                )
                for click in clicks
            ]

            def acknowledged() -> set[str]:
                return {
                    user
                    for user in members
                    if any("Correct" in (e.text or "") for e in fake.ephemerals_for(user))
                }

            await fake.wait_for(
                lambda: acknowledged() if len(acknowledged()) >= 20 else None,
                timeout=60,
                what="20 acknowledged answers",
            )
            bot.proc.kill()  # SIGKILL in the middle of the burst
            await asyncio.to_thread(bot.proc.wait, 15)
            seen = acknowledged()  # nothing more can arrive from a dead process
            await asyncio.gather(*burst, return_exceptions=True)
    finally:
        bot.stop()
    assert 20 <= len(seen) < len(members), "the kill must land inside the burst"

    check = studybot("db", "check", "--db", str(bot.db))
    assert check.returncode == 0, check.stdout + check.stderr
    with sqlite3.connect(bot.db) as conn:
        stored = {
            row[0]
            for row in conn.execute(
                "SELECT m.external_id FROM answers a JOIN members m ON m.id = a.member_id"
            )
        }
        per_member = conn.execute(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM answers GROUP BY member_id, post_id)"
        ).fetchone()[0]
    assert seen <= stored, f"acknowledged but lost: {sorted(seen - stored)}"
    assert per_member == 1
