"""Benchmark: judging coding exercises, against a plain warm /run and a cold ``import torch``.

Run from the repository root (with bwrap and cgroups as for the bot)::

    .venv/bin/python bench/bench_exercises.py [--repeat N] [--members N] [--cold N]

All figures come from one run, through the real services (``build_services``) on a SQLite
file and the real fork-server sandbox with the bot's default settings:

1. cold: ``python -c 'import torch; ...'`` as a plain subprocess, median of ``--cold``;
2. plain: one warm ``SnippetRuns.run`` of the exercise's solution as a /run snippet (the same
   code, calling the function once per check), median of ``--repeat``;
3. submission: ``Exercises.submit`` of a correct solution to an exercise with 10 checks, end
   to end (both runs, the comparison, the attempt and the score written), median of
   ``--repeat``; first with the reference's run cached (the member opened the editor first,
   which starts it), then with it run alongside (a new member each time);
4. crowd: ``--members`` (24) members submit at the same instant, each to their own seeded
   inputs (so 2 x 24 runs): all get verdicts; p95 and slowest.

Targets (issue 31): a submission within 3x one plain warm run; the crowd's p95 within 1/2 of
a cold ``import torch``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.app import build_services
from bot.core.clock import SystemClock
from bot.core.models import ChatContext
from bot.core.snippets import RunLimits
from bot.questions.loader import load_packs
from bot.sandbox import Sandbox, SandboxConfig
from bot.settings import Settings
from bot.storage.database import open_database

COLD = "import torch; print(torch.ones(3).sum().item())"
CHECKS = 9  # hidden, besides one example: 10 in all
PACK = (
    textwrap.dedent(
        """\
    pack: bench
    title: Bench
    items:
      - id: bench-silu
        kind: exercise
        difficulty: easy
        prompt: x * sigmoid(x), with its gradient.
        starter: |
          import torch
          def silu(x):
              return x
        entry: silu
        examples:
          - args: "torch.tensor([0.0, 1.0])"
            expect: "torch.tensor([0.0, 0.7311])"
        checks:
    """
    )
    + "".join(
        f'      - args: "torch.randn({4 + n}, generator=g).requires_grad_()"\n'
        "        compare: [result, grads]\n"
        "        backward: true\n"
        for n in range(CHECKS)
    )
    + textwrap.indent(
        textwrap.dedent(
            """\
        solution: |
          import torch
          def silu(x):
              return x * torch.sigmoid(x)
        """
        ),
        "    ",
    )
)
SOLUTION = "import torch\ndef silu(x):\n    return x * torch.sigmoid(x)\n"
# The same code as a plain /run: the function, called once per check with a backward.
PLAIN = SOLUTION + "".join(
    f"x = torch.randn({4 + n}).requires_grad_()\nsilu(x).backward(torch.randn({4 + n}))\n"
    for n in range(CHECKS + 1)
)


def cold_once() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", COLD], check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def member(n: int) -> ChatContext:
    return ChatContext("bench", "ws", "general", f"m{n}", f"member{n}", is_admin=n == 0)


async def main(args: argparse.Namespace) -> None:
    cold = statistics.median(cold_once() for _ in range(args.cold))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    config = SandboxConfig.from_settings(settings)
    with tempfile.TemporaryDirectory() as tmp:
        packs = Path(tmp) / "packs"
        packs.mkdir()
        (packs / "bench.yaml").write_text(PACK)
        loaded = load_packs(packs)
        assert not loaded.problems, loaded.problems
        async with Sandbox(config) as sandbox, await open_database(Path(tmp) / "b.db") as db:
            assert sandbox.available, sandbox.unavailable_reason
            await sandbox.wait_warm()
            limits = RunLimits(per_minute=10_000)
            svc = build_services(
                db, SystemClock(), rng=random.Random(1), runner=sandbox, run_limits=limits,
                packs_dir=packs,
            ).services  # fmt: skip
            await svc.packs.sync(loaded.packs)
            post = (await svc.quiz.post_question(member(0), kinds=["exercise"])).post.id

            async def timed(coro: object) -> float:
                started = time.perf_counter()
                await coro  # type: ignore[misc]
                return (time.perf_counter() - started) * 1000

            plain, cached, uncached = [], [], []
            for n in range(args.repeat):
                await sandbox.wait_warm()
                plain.append(await timed(svc.runs.run(member(1), PLAIN)))
                await sandbox.wait_warm()
                await svc.exercises.open_editor(member(1), post)  # the reference, in advance
                await asyncio.sleep(0.3)
                await sandbox.wait_warm()
                cached.append(await timed(svc.exercises.submit(member(1), post, SOLUTION)))
                await sandbox.wait_warm()
                uncached.append(await timed(svc.exercises.submit(member(1000 + n), post, SOLUTION)))

            async def one(who: ChatContext) -> tuple[float, str]:
                started = time.perf_counter()
                reply = await svc.exercises.submit(who, post, SOLUTION)
                return (time.perf_counter() - started) * 1000, reply.title or ""

            # As members do: each opened the editor (which runs the reference) before submitting.
            crowd_members = [member(2000 + n) for n in range(args.members)]
            for who in crowd_members:
                await svc.exercises.open_editor(who, post)
            await asyncio.sleep(1.0)
            await sandbox.wait_warm()
            started = time.perf_counter()
            crowd = await asyncio.gather(*(one(who) for who in crowd_members))
            all_done = (time.perf_counter() - started) * 1000
            # The worst case: nobody opened the editor, so 2 x N runs at once.
            await sandbox.wait_warm()
            cold_members = [member(3000 + n) for n in range(args.members)]
            started = time.perf_counter()
            worst = await asyncio.gather(*(one(who) for who in cold_members))
            worst_done = (time.perf_counter() - started) * 1000
    solved = sum(title.startswith("✅ Solved") for _, title in crowd)
    times = [ms for ms, _ in crowd]
    plain_ms, cached_ms, uncached_ms = (statistics.median(v) for v in (plain, cached, uncached))
    p95 = percentile(times, 0.95)
    print(f"date (UTC)      {datetime.now(UTC):%Y-%m-%d %H:%M}")
    print(
        f"machine         {os.cpu_count()} cores, {platform.platform()}, "
        f"Python {platform.python_version()}"
    )
    print(f"cold import     {cold:.0f} ms (median of {args.cold})")
    print(f"plain /run      {plain_ms:.1f} ms (median of {args.repeat}, 10 calls and backwards)")
    print(
        f"submission      {cached_ms:.1f} ms with the reference cached "
        f"({cached_ms / plain_ms:.2f}x plain), {uncached_ms:.1f} ms with it run alongside "
        f"({uncached_ms / plain_ms:.2f}x plain); 10 checks"
    )
    print(
        f"{args.members} at once      {solved} of {len(crowd)} solved; p95 {p95:.0f} ms "
        f"= cold/{cold / p95:.1f}; slowest {max(times):.0f} ms; all done in {all_done:.0f} ms"
        " (each had opened the editor: the reference ran then)"
    )
    worst_times = [ms for ms, _ in worst]
    worst_p95 = percentile(worst_times, 0.95)
    worst_solved = sum(title.startswith("✅ Solved") for _, title in worst)
    print(
        f"{args.members} at once, cold  {worst_solved} of {len(worst)} solved; p95 "
        f"{worst_p95:.0f} ms = cold/{cold / worst_p95:.1f}; all done in {worst_done:.0f} ms "
        "(nobody opened the editor: 2 runs each)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--members", type=int, default=24)
    parser.add_argument("--cold", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
