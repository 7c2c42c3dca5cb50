"""The fork server: fresh randomness, nothing shared between children, restarts, no leftovers.

Every test runs the real zygote in the real jail (bwrap, namespaces, cgroups, seccomp).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.sandbox import Sandbox
from bot.sandbox.result import Outcome
from tests.sandbox.sandbox_helpers import run, sandbox_config

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def _zygote_up(sb: Sandbox, within: float = 120.0) -> dict[str, object]:
    deadline = time.monotonic() + within
    while True:
        status = await sb.status()
        if status.get("zygote") == "up":
            return status
        assert time.monotonic() < deadline, f"the fork server did not come up: {status}"
        await asyncio.sleep(0.05)


@pytest_asyncio.fixture(loop_scope="session")
async def fresh() -> AsyncIterator[Sandbox]:
    """A bare fork server of its own, for tests that kill parts of it."""
    async with Sandbox(sandbox_config(preload=(), forks_ahead=2)) as sb:
        assert sb.available, sb.unavailable_reason
        await _zygote_up(sb)
        yield sb


async def test_every_run_gets_fresh_random_numbers(sandbox: Sandbox) -> None:
    """Forked generators would repeat their parent's numbers; each child is reseeded."""
    await _zygote_up(sandbox)
    code = (
        "import random, numpy, torch\n"
        "print(torch.randn(3).tolist(), numpy.random.rand(), random.random())\n"
    )
    outputs = []
    for _ in range(4):
        r = await run(sandbox, code)
        assert r.outcome is Outcome.OK, r
        outputs.append(r.stdout)
    status = await sandbox.status()
    assert status["cold_starts"] == 0 or status["runs"] > status["cold_starts"]
    torch_values = [o.split("]")[0] for o in outputs]
    assert len(set(torch_values)) == 4, outputs
    assert len({o.split("]")[1] for o in outputs}) == 4, outputs


async def test_a_run_sees_only_itself_and_its_init(bare: Sandbox) -> None:
    """Pid 2 of a fresh namespace: /proc holds its init (pid 1) and itself, nothing else."""
    await _zygote_up(bare)
    r = await run(
        bare,
        """
        import os, socket
        procs = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
        print(os.getpid(), os.getppid(), procs, socket.gethostname())
        """,
    )
    assert (r.outcome, r.stdout) == (Outcome.OK, "2 1 [1, 2] sandbox\n"), r


async def test_a_run_cannot_reach_the_zygote_or_a_concurrent_run(bare: Sandbox) -> None:
    """While one run waits, another tries every way to see, signal, trace or write it."""
    await _zygote_up(bare)
    waiting = asyncio.create_task(
        run(bare, "import time\ntime.sleep(1.5)\nprint('undisturbed')\n", timeout=10)
    )
    await asyncio.sleep(0.3)
    attacker = await run(
        bare,
        """
        import ctypes, json, os, signal
        seen = {}
        try:
            open('/proc/1/mem', 'r+b')
            seen['mem'] = 'opened'
        except OSError as exc:
            seen['mem'] = exc.errno
        libc = ctypes.CDLL(None, use_errno=True)
        seen['ptrace'] = libc.ptrace(16, 1, 0, 0), ctypes.get_errno()  # PTRACE_ATTACH
        for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGSTOP):
            os.kill(1, sig)
        try:
            os.kill(-1, signal.SIGKILL)  # reaches nobody outside this namespace
        except ProcessLookupError:
            pass
        seen['pids'] = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
        seen['init_alive'] = os.path.exists('/proc/1')
        print(json.dumps(seen))
        """,
    )
    assert attacker.outcome is Outcome.OK, attacker
    seen = json.loads(attacker.stdout)
    assert seen["mem"] == 13  # EACCES: its init is not dumpable, and it holds no capability
    assert seen["ptrace"] == [-1, 1]  # EPERM
    assert seen["pids"] == [1, 2]
    assert seen["init_alive"] is True
    victim = await waiting
    assert (victim.outcome, victim.stdout) == (Outcome.OK, "undisturbed\n"), victim
    assert (await bare.status())["zygote"] == "up"


async def test_limits_count_per_run(sandbox: Sandbox) -> None:
    """Two runs at once may each use most of SANDBOX_MEMORY_MB; one run may not exceed it."""
    await _zygote_up(sandbox)
    grab = "import numpy\na = numpy.ones({mb} * 2**20 // 8)\nprint(a.nbytes // 2**20)\n"
    both = await asyncio.gather(*(run(sandbox, grab.format(mb=300)) for _ in range(2)))
    assert [(r.outcome, r.stdout) for r in both] == [(Outcome.OK, "300\n")] * 2, both
    over = await run(sandbox, grab.format(mb=700))
    assert over.outcome is Outcome.MEMORY_LIMIT, over


async def test_the_zygote_is_killed_and_comes_back(fresh: Sandbox) -> None:
    status = await _zygote_up(fresh)
    pid = status["zygote_pid"]
    assert isinstance(pid, int)
    os.kill(pid, signal.SIGKILL)
    # While it is down, /run still answers (a single-use jail, or the restarted zygote).
    during = await run(fresh, "print('still here')")
    assert (during.outcome, during.stdout) == (Outcome.OK, "still here\n"), during
    deadline = time.monotonic() + 60
    while True:
        status = await fresh.status()
        if status["zygote_restarts"] == 1 and status["zygote"] == "up":
            break
        assert time.monotonic() < deadline, status
        await asyncio.sleep(0.05)
    assert status["zygote_pid"] != pid
    await fresh.wait_warm(2, within=30)
    after = await run(fresh, "print('back')")
    assert (after.outcome, after.stdout) == (Outcome.OK, "back\n"), after
    assert (await fresh.status())["runs"] >= 2


def _cgroup_processes(manager_pid: int) -> list[int]:
    found: set[int] = set()
    while True:
        try:
            for base in Path("/sys/fs/cgroup").glob(f"**/studybot-sandbox-{manager_pid}"):
                for procs in base.glob("**/cgroup.procs"):
                    with contextlib.suppress(OSError):
                        found.update(int(p) for p in procs.read_text().split())
            return sorted(found)
        except FileNotFoundError:  # another manager removed a dead one's tree as we walked
            continue


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found.update(int(p) for p in task.read_text().split())
    return found


def _gone(pids: set[int]) -> set[int]:
    """The pids still alive (and not zombies) among ``pids``."""
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.mark.parametrize(
    "stage", ["starting", "children ready", "running", "single-use jail starting"]
)
async def test_killing_the_manager_leaves_no_jail_behind(stage: str) -> None:
    """SIGKILL the manager at each stage: within seconds no process of its jails is left."""
    fork_server = stage != "single-use jail starting"
    config = sandbox_config(preload=("numpy",), forks_ahead=2, fork_server=fork_server)
    sb = Sandbox(config)
    await sb.start()
    try:
        assert sb.available, sb.unavailable_reason
        assert sb._proc is not None
        manager = sb._proc.pid
        running: asyncio.Task[object] | None = None
        if stage == "children ready":
            await sb.wait_warm(2, within=60)
        elif stage == "running":
            await _zygote_up(sb)
            running = asyncio.create_task(sb.run("import time\ntime.sleep(30)\n", timeout=60))
            for _ in range(100):  # the run reaches its jail within moments
                if (await sb.status())["running"] == 1:
                    break
                await asyncio.sleep(0.1)
            assert (await sb.status())["running"] == 1
        elif stage == "single-use jail starting":
            running = asyncio.create_task(sb.run("print(1)"))
            await asyncio.sleep(0.3)  # bwrap launched, numpy importing
        await asyncio.sleep(0.1 if stage == "starting" else 0)
        before = set(_cgroup_processes(manager)) | _children(manager)
        assert before, "no jail process was found to watch"
        os.kill(manager, signal.SIGKILL)
        if running is not None:
            with contextlib.suppress(Exception):
                await running
        deadline = time.monotonic() + 10
        while left := _gone(before) | set(_cgroup_processes(manager)):
            assert time.monotonic() < deadline, f"left behind after the manager died: {left}"
            await asyncio.sleep(0.1)
    finally:
        await sb.close()


async def test_a_run_while_the_fork_server_starts_waits_for_it() -> None:
    """The first /run (or exercise) after start comes while the zygote imports torch: it
    waits for the zygote instead of cold-starting a whole jail that would import torch beside
    it on the same cores (and come no sooner)."""
    async with Sandbox(sandbox_config(forks_ahead=2)) as sb:
        assert sb.available, sb.unavailable_reason
        assert (await sb.status()).get("zygote") != "up"  # still starting: the case here
        results = await asyncio.gather(run(sb, "print(1)"), run(sb, "print(2)"))
        assert [r.outcome for r in results] == [Outcome.OK, Outcome.OK], results
        status = await sb.status()
        assert status["cold_starts"] == 0, status  # both ran in fork-server children
