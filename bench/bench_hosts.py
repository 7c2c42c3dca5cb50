"""Benchmark: the 24-member burst through 1 and through 2 sandbox services (``SANDBOX_URLS``).

Run from the repository root::

    .venv/bin/python bench/bench_hosts.py [--burst 24] [--rounds 5]

Starts ``studybot sandbox serve`` services on loopback (default settings each: fork server, 24
children ready ahead), then sends the burst through :class:`RemoteSandbox` to one service, and
to two; rounds interleaved, medians reported. Also the same burst through the embedded manager
(no HTTP) as the baseline. On one machine the services share its cores, so the figure shows the
cost of the HTTP hop and of routing, not the gain of a second machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.sandbox import Sandbox, SandboxConfig
from bot.sandbox.client.remote import RemoteSandbox
from bot.settings import Settings

ROOT = Path(__file__).resolve().parent.parent

SNIPPET = (
    "import torch\nx = torch.arange(12.0, requires_grad=True).reshape(3, 4)\n"
    "y = (x @ x.T).trace()\ny.backward()\nprint(y.item())\n"
)
TOKEN = "bench-token"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start() -> tuple[str, subprocess.Popen[bytes]]:
    port = _port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "sandbox", "serve", "--listen", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env={"PATH": os.environ.get("PATH", ""), "SANDBOX_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
                status = json.loads(r.read())["status"]
                if status.get("zygote") == "up" and status.get("warm", 0) >= 24:
                    return url, proc
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


async def burst(runner: Sandbox | RemoteSandbox, n: int) -> list[float]:
    async def one() -> float:
        start = time.perf_counter()
        r = await runner.run(SNIPPET)
        assert r.stdout == "506.0\n", r
        return (time.perf_counter() - start) * 1000

    return list(await asyncio.gather(*(one() for _ in range(n))))


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def main(args: argparse.Namespace) -> int:
    load = os.getloadavg()
    print(f"date:    {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {platform.node()}: {os.cpu_count()} cores, Linux {platform.release()}, "
          f"Python {platform.python_version()}, load {load[0]:.1f}")  # fmt: skip
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    hosts = [_start(), _start()]
    results: dict[str, list[float]] = {"embedded": [], "1 service": [], "2 services": []}
    try:
        async with (
            Sandbox(SandboxConfig.from_settings(Settings())) as local,
            RemoteSandbox([hosts[0][0]], TOKEN) as one,
            RemoteSandbox([u for u, _ in hosts], TOKEN) as two,
        ):
            await local.wait_warm()
            for _ in range(args.rounds):
                for name, runner in (("embedded", local), ("1 service", one), ("2 services", two)):
                    await asyncio.sleep(1.5)  # let every host fork its children ahead again
                    results[name].append(p95(await burst(runner, args.burst)))
    finally:
        for _, proc in hosts:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    base = statistics.median(results["embedded"])
    print(f"\n{args.burst} runs at once, p95 per round, median of {args.rounds} rounds:")
    for name, values in results.items():
        median = statistics.median(values)
        print(f"  {name:11s} {median:6.0f} ms  ({median / base:.2f}x embedded)  rounds: "
              + ", ".join(f"{v:.0f}" for v in values))  # fmt: skip
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burst", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=5)
    raise SystemExit(asyncio.run(main(parser.parse_args())))
