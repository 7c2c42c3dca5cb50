"""Sandbox hosts as a service (issue 18): ``studybot sandbox serve`` and ``SANDBOX_URLS``.

Two real services (each a real manager, fork server and jails) on loopback, started as the
operator would, and the bot's :class:`RemoteSandbox` in front of them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio

from bot.sandbox.client.remote import LOST_RUN, RemoteSandbox
from bot.sandbox.errors import SandboxUnavailable
from bot.sandbox.exercise import CheckJob, ExerciseJob
from bot.sandbox.result import Outcome
from tests.helpers import free_port

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "test-sandbox-token"
session_loop = pytest.mark.asyncio(loop_scope="session")


def _serve(port: int, token: str = TOKEN) -> subprocess.Popen[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "SANDBOX_TOKEN": token,
        "SANDBOX_FORKS_AHEAD": "2",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "serve", "--listen", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_healthy(url: str, within: float = 90) -> None:
    import json
    import urllib.request

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                body = json.loads(response.read())
                if body["available"] and body["status"].get("zygote") == "up":
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{url} did not become healthy")


@pytest.fixture(scope="module")
def hosts() -> Iterator[list[tuple[str, subprocess.Popen[str]]]]:
    started = []
    for _ in range(2):
        port = free_port()
        started.append((f"http://127.0.0.1:{port}", _serve(port)))
    try:
        for url, _proc in started:
            _wait_healthy(url)
        yield started
    finally:
        for _, proc in started:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()


@pytest_asyncio.fixture(loop_scope="session")
async def remote(hosts: list[tuple[str, subprocess.Popen[str]]]) -> AsyncIterator[RemoteSandbox]:
    async with RemoteSandbox([u for u, _ in hosts], TOKEN) as sb:
        assert sb.available, sb.unavailable_reason
        yield sb


@session_loop
async def test_runs_are_spread_over_the_hosts(remote: RemoteSandbox) -> None:
    code = "import torch\nprint(torch.ones(3).sum().item())\n"
    results = await asyncio.gather(*(remote.run(code) for _ in range(8)))
    assert [(r.outcome, r.stdout) for r in results] == [(Outcome.OK, "3.0\n")] * 8
    runs = [h["runs"] for h in (await remote.status())["hosts"]]
    assert all(n >= 2 for n in runs), runs  # both hosts took a share


@session_loop
async def test_a_graph_and_its_picture_cross_the_wire(remote: RemoteSandbox) -> None:
    r = await remote.run(
        "import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n", graph=()
    )
    assert r.outcome is Outcome.OK, r
    assert r.graph is not None and [n.label for n in r.graph.nodes][:2] == [
        "y",
        "MulBackward0",
    ]
    assert r.files and r.files[0].data.startswith(b"\x89PNG")


@session_loop
async def test_an_exercise_job_crosses_the_wire_typed_and_a_malformed_one_is_refused(
    remote: RemoteSandbox, hosts: list[tuple[str, subprocess.Popen[str]]]
) -> None:
    job = ExerciseJob(
        "double", 5, (CheckJob("example 1", "(torch.arange(3.0),)"), CheckJob("c", "(2,)"))
    )
    r = await remote.run("import torch\ndef double(x):\n    return x * 2\n", exercise=job)
    assert r.outcome is Outcome.OK, r
    assert r.exercise is not None and len(r.exercise.results) == 2
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with aiohttp.ClientSession() as session:
        bad = {"code": "print(1)", "exercise": {"entry": "double", "seed": "5", "checks": []}}
        async with session.post(f"{hosts[0][0]}/run", json=bad, headers=headers) as response:
            assert response.status == 400
            assert "seed is not a whole number" in (await response.json())["error"]


@session_loop
async def test_a_wrong_token_is_refused(hosts: list[tuple[str, subprocess.Popen[str]]]) -> None:
    url = hosts[0][0]
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{url}/run", json={"code": "print(1)"}) as response:
            assert response.status == 401
        headers = {"Authorization": "Bearer wrong"}
        async with session.post(f"{url}/run", json={"code": "print(1)"}, headers=headers) as r:
            assert r.status == 401
        async with session.get(f"{url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}) as m:
            assert m.status == 200
            assert "sandbox_runs_total" in await m.text()
    async with RemoteSandbox([url], "wrong") as sb:
        assert sb.available  # /healthz is open: the token only matters for runs
        with pytest.raises(SandboxUnavailable, match="refused our SANDBOX_TOKEN"):
            await sb.run("print(1)")


def test_the_service_refuses_to_start_without_a_token() -> None:
    proc = _serve(free_port(), token="")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "set SANDBOX_TOKEN" in err


@session_loop
async def test_a_dead_host_is_skipped_and_a_run_it_held_is_never_rerun() -> None:
    """kill -9 a host mid-run: that run gets the retry message (not a second run elsewhere);
    the next runs go to the survivor."""
    ports = [free_port(), free_port()]
    procs = [_serve(p) for p in ports]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    try:
        for url in urls:
            _wait_healthy(url)
        async with RemoteSandbox(urls, TOKEN) as sb:
            slow = "import time\ntime.sleep(5)\nprint('finished')\n"
            first = asyncio.create_task(sb.run(slow))
            await asyncio.sleep(1.0)
            busy_host = next(h for h in sb.hosts if h.in_flight == 1)
            victim = procs[urls.index(busy_host.url)]
            survivor_url = next(u for u in urls if u != busy_host.url)
            victim.kill()  # SIGKILL: no goodbye
            with pytest.raises(SandboxUnavailable) as lost:
                await first
            assert str(lost.value) == LOST_RUN
            before = next(h.runs for h in sb.hosts if h.url == survivor_url)
            assert before == 0  # the lost run was not tried again on the other host
            after = await asyncio.gather(*(sb.run("print('ok')") for _ in range(3)))
            assert [r.stdout for r in after] == ["ok\n"] * 3
            assert next(h.runs for h in sb.hosts if h.url == survivor_url) == 3
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()


def test_the_bot_runs_snippets_on_its_sandbox_hosts(
    hosts: list[tuple[str, subprocess.Popen[str]]], tmp_path: Path
) -> None:
    """SANDBOX_URLS set: the console's /run goes to a service, not to a local manager."""
    before = _host_runs(hosts)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "SANDBOX_URLS": ",".join(u for u, _ in hosts),
        "SANDBOX_TOKEN": TOKEN,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--db", str(tmp_path / "r.sqlite3")],
        input="/run import os; print(os.getpid(), 6 * 7)\n/quit\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 42" in proc.stdout  # pid 2 of a fork-server child
    assert _host_runs(hosts) == before + 1  # ... on one of the hosts


def _host_runs(hosts: list[tuple[str, subprocess.Popen[str]]]) -> int:
    import json
    import urllib.request

    total = 0
    for url, _ in hosts:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            total += int(json.loads(response.read())["status"]["runs"])
    return total
