"""Benchmark: warm ``Sandbox.run`` of a torch snippet against a cold ``import torch``.

Run from the repository root::

    .venv/bin/python bench/bench_sandbox.py [--cold N] [--warm N] [--burst N] [--concurrent N]

Measured in one run, on the same machine and interpreter:

1. cold: ``python -c 'import torch; print(torch.ones(3).sum().item())'`` as a plain subprocess
   (no jail at all), median of N;
2. warm: end-to-end ``await sandbox.run(snippet)`` (client -> manager -> warm jail -> result),
   median of N, waiting before each run until the background refill has the pool full again;
3. burst: N runs back to back without waiting, so the pool drains and refills while running;
4. concurrent: N runs at once, each writing a random token to ``/tmp/mine`` and reading
   ``/tmp``; passes only if every run saw exactly its own file.

Target (docs/BENCHMARKS.md): warm median at least 30x faster than cold.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.sandbox import Sandbox, SandboxConfig
from bot.sandbox.result import Outcome
from bot.settings import Settings

SNIPPET = "import torch\nx = torch.arange(12.0).reshape(3, 4)\nprint((x @ x.T).trace().item())\n"
EXPECTED = "506.0\n"
COLD = "import torch; print(torch.ones(3).sum().item())"
ISOLATION = """
import json, os, time
me = os.urandom(8).hex()
open('/tmp/mine', 'w').write(me)
time.sleep(0.5)
print(json.dumps({'me': me, 'read': open('/tmp/mine').read(), 'tmp': os.listdir('/tmp')}))
"""


def cold_once() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", COLD], check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


async def timed_run(sandbox: Sandbox, code: str) -> tuple[float, str, Outcome]:
    start = time.perf_counter()
    result = await sandbox.run(code)
    return (time.perf_counter() - start) * 1000, result.stdout, result.outcome


def machine() -> str:
    load = os.getloadavg()
    cgroup = "v2" if Path("/sys/fs/cgroup/cgroup.controllers").exists() else "v1/hybrid"
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.node()}: {os.cpu_count()} cores ({cpu}), Linux {platform.release()}, "
        f"Python {platform.python_version()}, cgroup {cgroup}, load {load[0]:.1f}/{load[1]:.1f}"
    )


async def main(args: argparse.Namespace) -> int:
    print(f"date:    {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {machine()}")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")

    # The concurrent batch is meant to run all at once: SANDBOX_MAX_RUNNING is raised to its size.
    config = SandboxConfig.from_settings(
        Settings(), max_running=max(args.concurrent, Settings().sandbox_max_running)
    )
    print(f"config:  pool={config.pool_size} memory={config.memory_mb}MiB pids={config.pids} "
          f"timeout={config.timeout}s cpu_quota={config.cpu_quota} "
          f"max_running={config.max_running}")  # fmt: skip

    print(f"\ncold baseline: {args.cold} x python -c '{COLD}'")
    cold = [cold_once() for _ in range(args.cold)]
    cold_median = statistics.median(cold)
    print(f"  median {cold_median:.0f} ms  (min {min(cold):.0f}, max {max(cold):.0f})")

    async with Sandbox(config) as sandbox:
        if not sandbox.available:
            print(f"sandbox unavailable: {sandbox.unavailable_reason}", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        await sandbox.wait_warm()
        print(f"\npool of {config.pool_size} warm after {(time.perf_counter() - t0):.1f} s")

        warm: list[float] = []
        for _ in range(args.warm):
            await sandbox.wait_warm()
            ms, out, outcome = await timed_run(sandbox, SNIPPET)
            assert outcome is Outcome.OK, outcome
            assert out == EXPECTED, out
            warm.append(ms)
        warm_median = statistics.median(warm)
        print(f"warm Sandbox.run: {args.warm} runs, pool refilled before each")
        print(f"  median {warm_median:.1f} ms  (min {min(warm):.1f}, max {max(warm):.1f})")

        await sandbox.wait_warm()
        burst_start = time.perf_counter()
        burst = [(await timed_run(sandbox, SNIPPET))[0] for _ in range(args.burst)]
        burst_total = time.perf_counter() - burst_start
        print(f"burst: {args.burst} runs back to back (pool drains; cold starts appear)")
        print(f"  median {statistics.median(burst):.0f} ms, max {max(burst):.0f} ms, "
              f"total {burst_total:.1f} s")  # fmt: skip

        await sandbox.wait_warm()
        conc_start = time.perf_counter()
        results = await asyncio.gather(*(sandbox.run(ISOLATION) for _ in range(args.concurrent)))
        conc_total = time.perf_counter() - conc_start
        reports = [json.loads(r.stdout) for r in results if r.outcome is Outcome.OK]
        isolated = (
            len(reports) == args.concurrent
            and len({r["me"] for r in reports}) == args.concurrent
            and all(r["read"] == r["me"] and r["tmp"] == ["mine"] for r in reports)
        )
        print(f"concurrent: {args.concurrent} runs at once in {conc_total:.1f} s; "
              f"all isolated: {isolated}")  # fmt: skip
        status = await sandbox.status()
        print(f"pool: {status['runs']} runs, {status['cold_starts']} cold starts")

    ratio = cold_median / warm_median
    print(f"\nratio cold/warm (medians): {ratio:.0f}x  (target >= 30x: "
          f"{'met' if ratio >= 30 else 'NOT met'})")  # fmt: skip
    return 0 if ratio >= 30 and isolated else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--warm", type=int, default=20)
    parser.add_argument("--burst", type=int, default=6)
    parser.add_argument("--concurrent", type=int, default=8)
    raise SystemExit(asyncio.run(main(parser.parse_args())))
