"""`/run` through the service with the real sandbox: what a member sees for each outcome."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, RateLimited, Unavailable
from bot.core.snippets import RunLimits
from bot.sandbox import Sandbox, SandboxBusy
from bot.sandbox.result import RunResult
from bot.services.bundle import Services
from bot.storage.database import Database
from tests.helpers import member
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = pytest.mark.slow
ANN = member("ann")


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    """A real jail without the torch preload (starts in a fraction of a second)."""
    async with Sandbox(sandbox_config(pool_size=1, preload=(), timeout=3.0, memory_mb=128)) as sb:
        assert sb.available, sb.unavailable_reason
        yield sb


def _service(
    db: Database, clock: SimulatedClock, runner: Sandbox | None, **limits: int
) -> Services:
    run_limits = RunLimits(
        timeout_s=3.0,
        memory_mb=128,
        max_bytes=limits.get("max_bytes", 65536),
        per_minute=limits.get("per_minute", 20),
    )
    return build_services(
        db, clock, rng=random.Random(1), runner=runner, run_limits=run_limits
    ).services


async def test_output_is_shown_with_mentions_defused(
    db: Database, clock: SimulatedClock, sandbox: Sandbox
) -> None:
    service = _service(db, clock, sandbox)
    reply = await service.runs.run(ANN, 'print("hi @everyone <@123> ```")')
    text = reply.plain_text()
    assert not reply.ephemeral
    assert text.startswith("Snippet from ann\n\n✅ Ran in ")
    assert "@\u200beveryone" in text and "@everyone" not in text
    assert "<\u200b@123>" in text and "```" not in text


@pytest.mark.parametrize(
    ("code", "status", "detail"),
    [
        ("raise ValueError('boom')", "❌ Exited with code 1 after", "ValueError: boom"),
        ("import sys; sys.exit(3)", "❌ Exited with code 3 after", None),
        ("while True: pass", "⏱️ Timed out: stopped after the 3 s limit", None),
        (
            "x = bytearray(1 << 30); print(len(x))",
            "💥 Ran out of memory: the limit is 128 MiB.",
            None,
        ),
        (
            "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
            "💀 Killed by SIGSEGV after",
            None,
        ),
    ],
)
async def test_each_outcome_has_a_status_line_that_says_what_happened(
    db: Database,
    clock: SimulatedClock,
    sandbox: Sandbox,
    code: str,
    status: str,
    detail: str | None,
) -> None:
    text = (await _service(db, clock, sandbox).runs.run(ANN, code)).plain_text()
    assert status in text
    if detail:
        assert detail in text


async def test_long_output_is_cut_for_chat_and_attached_whole(
    db: Database, clock: SimulatedClock, sandbox: Sandbox
) -> None:
    reply = await _service(db, clock, sandbox).runs.run(ANN, "for i in range(500): print(i)")
    text = reply.plain_text()
    assert "    29\n" in text and "    30\n" not in text
    assert "Output cut for chat; the full output is attached." in text
    (attachment,) = reply.attachments
    assert attachment.filename == "output.txt"
    assert attachment.content.decode().splitlines()[-1] == "499"


async def test_rate_limit_and_one_run_at_a_time(
    db: Database, clock: SimulatedClock, sandbox: Sandbox
) -> None:
    service = _service(db, clock, sandbox, per_minute=2)
    slow, fast = (
        service.runs.run(ANN, "import time; time.sleep(1)"),
        service.runs.run(ANN, "print(1)"),
    )
    results = await asyncio.gather(slow, fast, return_exceptions=True)
    assert "Ran in" in results[0].plain_text()  # type: ignore[union-attr]
    assert isinstance(results[1], RateLimited) and "still running" in str(results[1])
    await service.runs.run(ANN, "print(2)")
    with pytest.raises(RateLimited, match=r"2 snippets a minute; try again in \d+ s"):
        await service.runs.run(ANN, "print(3)")
    await service.runs.run(member("bob"), "print(4)")  # others are not held back
    clock.advance(timedelta(minutes=1))
    await service.runs.run(ANN, "print(5)")


async def test_bad_input_is_refused_before_running(
    db: Database, clock: SimulatedClock, sandbox: Sandbox
) -> None:
    service = _service(db, clock, sandbox, max_bytes=100)
    with pytest.raises(BadInput, match="100"):
        await service.runs.run(ANN, "x = 1\n" * 50)
    with pytest.raises(BadInput, match="NUL"):
        await service.runs.run(ANN, "print(1)\x00")
    with pytest.raises(BadInput, match="no code"):
        await service.runs.run(ANN, "   \n")


async def test_without_isolation_nothing_runs(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    with pytest.raises(Unavailable, match="turned off"):
        await _service(db, clock, None).runs.run(ANN, "print(1)")
    missing = sandbox_config(bwrap=str(tmp_path / "no-bwrap"), preload=())
    async with Sandbox(missing) as broken:
        with pytest.raises(Unavailable, match=r"unavailable on this host: .*bwrap"):
            await _service(db, clock, broken).runs.run(ANN, "print(1)")


class BusySandbox:
    """A sandbox every jail of which stays busy (the real refusal is in test_sandbox_limits)."""

    available = True
    unavailable_reason = None

    async def run(self, code: str, *, timeout: float | None = None) -> RunResult:  # noqa: ASYNC109
        raise SandboxBusy("the sandbox is busy (4 snippets at a time) and no turn came in 10 s")


async def test_a_busy_sandbox_asks_the_member_to_try_again(
    db: Database, clock: SimulatedClock
) -> None:
    service = _service(db, clock, BusySandbox())  # type: ignore[arg-type]
    with pytest.raises(Unavailable) as refused:
        await service.runs.run(ANN, "print(1)")
    assert str(refused.value) == (
        "The sandbox is busy with other snippets right now; try again in a moment."
    )
    with pytest.raises(Unavailable):  # and it stays a retry, not a rate-limit strike
        await service.runs.run(ANN, "print(2)")
