"""Issue 27, finding 12: no run can open its namespace's pid 1's memory, on any path.

A snippet that could open ``/proc/1/mem`` for writing could rewrite its init, which holds the
run's descriptors and (as bwrap's init) sits outside the seccomp filter's reach of what it has
already done. Every path that runs member code is tried: the warm fork server, the single-use
jail (fork server off, and while the fork server restarts), ``studybot snippet run`` and a
sandbox host (``studybot sandbox serve``).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.sandbox import Sandbox
from bot.sandbox.result import Outcome
from tests.helpers import free_port
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = pytest.mark.slow
session_loop = pytest.mark.asyncio(loop_scope="session")

ROOT = Path(__file__).resolve().parents[2]

#: Tries pid 1's memory for writing and for reading; prints the errno of each (or "opened").
PROBE = """\
import json, os
seen = {"pid": os.getpid()}
for mode in ("r+b", "rb"):
    try:
        with open("/proc/1/mem", mode):
            seen[mode] = "opened"
    except OSError as exc:
        seen[mode] = exc.errno
print(json.dumps(seen))
"""
EACCES = 13


def _assert_refused(stdout: str) -> None:
    seen = json.loads(stdout.strip().splitlines()[-1])
    assert seen["pid"] != 1, seen  # the snippet is not the namespace's init itself
    assert (seen["r+b"], seen["rb"]) == (EACCES, EACCES), seen


async def _status_until(sb: Sandbox, ok: object, within: float = 120.0) -> dict[str, object]:
    deadline = time.monotonic() + within
    while True:
        status = await sb.status()
        if ok(status):  # type: ignore[operator]
            return status
        assert time.monotonic() < deadline, status
        await asyncio.sleep(0.05)


@session_loop
async def test_warm_fork_server() -> None:
    async with Sandbox(sandbox_config(preload=(), forks_ahead=1)) as sb:
        assert sb.available, sb.unavailable_reason
        await _status_until(sb, lambda s: s.get("zygote") == "up" and s.get("warm", 0) >= 1)
        r = await sb.run(PROBE)
        assert r.outcome is Outcome.OK, r
        _assert_refused(r.stdout)
        assert (await sb.status())["cold_starts"] == 0  # it did run in a fork-server child


@session_loop
@pytest.mark.parametrize("pool_size", [0, 1], ids=["cold", "warm pool"])
async def test_single_use_jail(pool_size: int) -> None:
    """SANDBOX_FORK_SERVER=false: every run has a whole jail of its own."""
    async with Sandbox(sandbox_config(preload=(), fork_server=False, pool_size=pool_size)) as sb:
        assert sb.available, sb.unavailable_reason
        if pool_size:
            await sb.wait_warm(pool_size, within=60)
        r = await sb.run(PROBE)
        assert r.outcome is Outcome.OK, r
        _assert_refused(r.stdout)


@session_loop
async def test_while_the_fork_server_restarts() -> None:
    """Runs taken while the zygote is down fall back to single-use jails."""
    async with Sandbox(sandbox_config(preload=(), forks_ahead=1)) as sb:
        assert sb.available, sb.unavailable_reason
        for _ in range(5):
            status = await _status_until(sb, lambda s: s.get("zygote") == "up")
            before = status["cold_starts"]
            os.kill(status["zygote_pid"], signal.SIGKILL)  # type: ignore[arg-type]
            await _status_until(sb, lambda s: s.get("zygote") != "up", within=30)
            r = await sb.run(PROBE)
            assert r.outcome is Outcome.OK, r
            _assert_refused(r.stdout)
            if (await sb.status())["cold_starts"] > before:  # type: ignore[operator]
                return
        pytest.fail("no run fell back to a single-use jail while the fork server restarted")


def _env(**extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), **extra}


def test_cli_snippet_run(tmp_path: Path) -> None:
    """``studybot snippet run``: one single-use jail, always."""
    snippet = tmp_path / "probe.py"
    snippet.write_text(PROBE)
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "snippet", "run", str(snippet), "--json"],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["outcome"] == "ok", result
    _assert_refused(result["stdout"])


@pytest.mark.parametrize("fork_server", ["true", "false"], ids=["fork server", "single-use"])
def test_sandbox_host(fork_server: str) -> None:
    """``studybot sandbox serve``: the same manager behind HTTP, both ways of running."""
    import urllib.request

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = _env(
        SANDBOX_TOKEN="pid1-token",
        SANDBOX_FORK_SERVER=fork_server,
        SANDBOX_FORKS_AHEAD="1",
        SANDBOX_POOL_SIZE="0",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "serve", "--listen", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "the sandbox host exited"
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                    health = json.loads(response.read())
                ready = health["status"].get("zygote") == "up" and health["status"]["warm"] >= 1
                if health["available"] and (fork_server == "false" or ready):
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the sandbox host did not become healthy"
            time.sleep(0.1)
        request = urllib.request.Request(
            f"{url}/run",
            data=json.dumps({"code": PROBE}).encode(),
            headers={"Authorization": "Bearer pid1-token", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            result = json.loads(response.read())["result"]
        assert result["outcome"] == "ok", result
        _assert_refused(result["stdout"])
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            status = json.loads(response.read())["status"]
        assert status["cold_starts"] == (1 if fork_server == "false" else 0), status
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
