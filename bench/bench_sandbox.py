"""Benchmark: the fork-server sandbox against a cold ``import torch``, all in one run.

Run from the repository root (as root or the bot's user, with bwrap and cgroups as for the bot)::

    .venv/bin/python bench/bench_sandbox.py [--cold N] [--single N] [--simultaneous N]
                                            [--sustained SECONDS] [--rate PER_SECOND] [--no-v1]

Scenarios, with the bot's default settings (``bot.settings.Settings``) unless said otherwise:

1. cold baseline: ``python -c 'import torch; ...'`` as a plain subprocess, median of N;
2. single: one warm ``await sandbox.run(snippet)`` end to end from the bot's side, median of N,
   waiting before each until the children forked ahead are all ready (target: <= 10 ms);
3. simultaneous: N runs (24) of the snippet at the same instant: all ``ok``, none refused, and
   p95 latency at most 1/5 of the cold start;
4. sustained: an open-loop load of RATE small runs per second (20) for SECONDS (60): every run
   answered ``ok``; reports the rate achieved and the latency percentiles;
5. memory: RSS and PSS (MiB) of every process of the sandbox (zygote and the children waiting),
   against one single-use warm jail of the old design measured here too;
6. isolation: 8 runs at once each write a random token to ``/tmp/mine``; every one must see
   exactly its own file;
7. v1 (unless ``--no-v1``): the simultaneous scenario again with ``SANDBOX_FORK_SERVER=false``,
   the design before the fork server, for the ratio.
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

from bot.sandbox import Sandbox, SandboxBusy, SandboxConfig
from bot.sandbox.result import Outcome
from bot.settings import Settings

SNIPPET = (
    "import torch\nx = torch.arange(12.0, requires_grad=True).reshape(3, 4)\n"
    "y = (x @ x.T).trace()\ny.backward()\nprint(y.item())\n"
)
EXPECTED = "506.0\n"
SMALL = "print(sum(range(10)))\n"
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


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


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


def sandbox_memory(manager_pid: int) -> tuple[float, float, int]:
    """(RSS MiB, PSS MiB, processes) of every process in the manager's cgroups."""
    pids: set[int] = set()
    for base in Path("/sys/fs/cgroup").glob(f"*/studybot-sandbox-{manager_pid}"):
        for procs in base.glob("*/cgroup.procs"):
            pids.update(int(p) for p in procs.read_text().split())
    if not pids:  # cgroup v2: one tree
        base = Path("/sys/fs/cgroup") / f"studybot-sandbox-{manager_pid}"
        for procs in base.glob("*/cgroup.procs"):
            pids.update(int(p) for p in procs.read_text().split())
    rss = pss = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            name, _, value = line.partition(":")
            if name == "Rss":
                rss += int(value.split()[0])
            elif name == "Pss":
                pss += int(value.split()[0])
    return rss / 1024, pss / 1024, len(pids)


async def timed(sandbox: Sandbox, code: str) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        result = await sandbox.run(code)
        label = result.outcome.value if result.stdout in (EXPECTED, "45\n") else "wrong output"
    except SandboxBusy:
        label = "refused"
    return (time.perf_counter() - start) * 1000, label


async def simultaneous(sandbox: Sandbox, n: int) -> tuple[list[float], list[str], float]:
    start = time.perf_counter()
    results = await asyncio.gather(*(timed(sandbox, SNIPPET) for _ in range(n)))
    return [r[0] for r in results], [r[1] for r in results], time.perf_counter() - start


async def sustained(sandbox: Sandbox, seconds: float, rate: float) -> dict[str, float]:
    """Open loop: start a run every 1/rate s whatever the others do, then wait for all."""
    tasks: list[asyncio.Task[tuple[float, str]]] = []
    start = time.perf_counter()
    i = 0
    while (now := time.perf_counter() - start) < seconds:
        due = i / rate
        if now < due:
            await asyncio.sleep(due - now)
        tasks.append(asyncio.create_task(timed(sandbox, SMALL)))
        i += 1
    results = await asyncio.gather(*tasks)
    total = time.perf_counter() - start
    lat = [r[0] for r in results]
    ok = sum(r[1] == "ok" for r in results)
    return {
        "runs": len(results),
        "ok": ok,
        "rate": ok / total,
        "total": total,
        "p50": statistics.median(lat),
        "p95": pct(lat, 0.95),
        "max": max(lat),
    }


def summary(label: str, lat: list[float], outcomes: list[str], total: float) -> str:
    counts = {o: outcomes.count(o) for o in sorted(set(outcomes))}
    return (
        f"{label}: {len(lat)} at once, {counts}, median {statistics.median(lat):.0f} ms, "
        f"p95 {pct(lat, 0.95):.0f} ms, all done in {total * 1000:.0f} ms"
    )


async def v1_figures(n: int) -> tuple[list[float], list[str], float, tuple[float, float, int]]:
    config = SandboxConfig.from_settings(Settings(), fork_server=False)
    async with Sandbox(config) as sandbox:
        await sandbox.wait_warm()
        assert sandbox._proc is not None
        memory = sandbox_memory(sandbox._proc.pid)
        lat, outcomes, total = await simultaneous(sandbox, n)
    return lat, outcomes, total, memory


async def main(args: argparse.Namespace) -> int:
    print(f"date:    {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {machine()}")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    config = SandboxConfig.from_settings(Settings())
    print(f"config:  defaults: fork_server={config.fork_server} pool={config.pool_size} "
          f"max_running={config.max_running} memory={config.memory_mb}MiB pids={config.pids} "
          f"timeout={config.timeout}s cpu_quota={config.cpu_quota}")  # fmt: skip

    print(f"\n1. cold baseline: {args.cold} x python -c '{COLD}'")
    cold = [cold_once() for _ in range(args.cold)]
    cold_median = statistics.median(cold)
    print(f"   median {cold_median:.0f} ms  (min {min(cold):.0f}, max {max(cold):.0f})")
    verdicts: dict[str, bool] = {}

    async with Sandbox(config) as sandbox:
        if not sandbox.available:
            print(f"sandbox unavailable: {sandbox.unavailable_reason}", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        await sandbox.wait_warm()
        status = await sandbox.status()
        print(f"\n   zygote {status.get('zygote')}, {status['warm']} children ready after "
              f"{time.perf_counter() - t0:.1f} s")  # fmt: skip

        single: list[float] = []
        for _ in range(args.single):
            await sandbox.wait_warm()
            ms, label = await timed(sandbox, SNIPPET)
            assert label == "ok", label
            single.append(ms)
        single_median = statistics.median(single)
        verdicts["single <= 10 ms"] = single_median <= 10
        print(f"2. single warm run: median {single_median:.1f} ms of {args.single} "
              f"(min {min(single):.1f}, max {max(single):.1f}); "
              f"cold/single {cold_median / single_median:.0f}x")  # fmt: skip

        await sandbox.wait_warm()
        lat, outcomes, total = await simultaneous(sandbox, args.simultaneous)
        p95 = pct(lat, 0.95)
        verdicts["simultaneous all ok"] = outcomes.count("ok") == args.simultaneous
        verdicts["simultaneous p95 <= cold/5"] = p95 <= cold_median / 5
        print("3. " + summary("simultaneous", lat, outcomes, total))
        print(f"   p95/cold = 1/{cold_median / p95:.1f} (target at most 1/5)")

        await sandbox.wait_warm()
        assert sandbox._proc is not None
        rss, pss, procs = sandbox_memory(sandbox._proc.pid)
        print(f"5. memory with {status['warm']} children ready: RSS {rss:.0f} MiB, "
              f"PSS {pss:.0f} MiB over {procs} processes")  # fmt: skip

        if args.sustained:
            s = await sustained(sandbox, args.sustained, args.rate)
            verdicts["sustained all answered"] = s["ok"] == s["runs"]
            verdicts[f"sustained >= {args.rate:g}/s"] = s["rate"] >= args.rate * 0.98
            print(f"4. sustained: {s['runs']:.0f} runs offered at {args.rate:g}/s for "
                  f"{args.sustained:g} s: {s['ok']:.0f} ok, {s['rate']:.1f} answered/s; "
                  f"latency median {s['p50']:.0f} ms, p95 {s['p95']:.0f} ms, "
                  f"max {s['max']:.0f} ms")  # fmt: skip

        await sandbox.wait_warm()
        results = await asyncio.gather(*(sandbox.run(ISOLATION) for _ in range(8)))
        reports = [json.loads(r.stdout) for r in results if r.outcome is Outcome.OK]
        isolated = len(reports) == 8 and all(
            r["read"] == r["me"] and r["tmp"] == ["mine"] for r in reports
        )
        verdicts["isolated"] = isolated
        print(f"6. isolation: 8 at once, each saw only its own /tmp file: {isolated}")
        status = await sandbox.status()
        print(f"   status: {status['runs']} runs, {status['cold_starts']} cold starts, "
              f"zygote restarts {status.get('zygote_restarts')}")  # fmt: skip

    if args.v1:
        v1_lat, v1_out, v1_total, (v1_rss, v1_pss, v1_procs) = await v1_figures(args.simultaneous)
        print("7. " + summary("v1 (one jail per run)", v1_lat, v1_out, v1_total))
        print(f"   v1 memory with {config.pool_size} warm jails: RSS {v1_rss:.0f} MiB, "
              f"PSS {v1_pss:.0f} MiB over {v1_procs} processes "
              f"({v1_pss / max(1, config.pool_size):.0f} MiB PSS per warm jail)")  # fmt: skip
        print(f"   p95 v1/fork server: {pct(v1_lat, 0.95) / p95:.0f}x")

    print()
    for name, ok in verdicts.items():
        print(f"   {'met' if ok else 'NOT met'}: {name}")
    return 0 if all(verdicts.values()) else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--single", type=int, default=30)
    parser.add_argument("--simultaneous", type=int, default=24)
    parser.add_argument("--sustained", type=float, default=60.0)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--no-v1", dest="v1", action="store_false")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
