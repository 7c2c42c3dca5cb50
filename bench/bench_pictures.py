"""Benchmark: ``/graph`` of a 50-node graph and ``/run`` with one PNG, against a plain ``/run``.

Run from the repository root::

    .venv/bin/python bench/bench_pictures.py [--runs N]

All three through the same sandbox (the bot's default settings: fork server, children ready
ahead), each end to end from the bot's side (``Sandbox.run``), interleaved so that load on the
shared machine hits them alike; medians of N (30), and the ratios to the plain run's median:

1. plain: ``/run`` of a small torch snippet (forward and backward of a tiny MLP);
2. png: the same snippet, then a matplotlib line plot shown with ``plt.show()``: one PNG back;
3. graph: ``/graph`` of the same kind of snippet, deep enough for a 50-node autograd graph
   (walked and drawn inside the jail, the PNG and the nodes returned).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.sandbox import Sandbox, SandboxConfig
from bot.sandbox.result import Outcome
from bot.settings import Settings

BASE = """
import torch
torch.manual_seed(0)
x = torch.randn(8, 4)
w1 = torch.randn(4, 16, requires_grad=True)
w2 = torch.randn(16, 1, requires_grad=True)
loss = (x @ w1).relu().matmul(w2).pow(2).mean()
loss.backward()
print(round(loss.item(), 3))
"""
PNG = (
    BASE
    + """
import matplotlib.pyplot as plt
plt.plot([1, 2, 3, 4], [1, 4, 9, 16])
plt.title('loss')
plt.show()
"""
)
# A chain of layers: 50 nodes in the walked graph (checked below).
GRAPH = """
import torch
h = torch.randn(2, 4)
weights = [torch.randn(4, 4, requires_grad=True) for _ in range(16)]
for w in weights:
    h = (h @ w).tanh()
out = h.sum()
"""


async def timed(sb: Sandbox, code: str, graph: tuple[str, ...] | None) -> tuple[float, int, int]:
    start = time.perf_counter()
    r = await sb.run(code, graph=graph)
    ms = (time.perf_counter() - start) * 1000
    assert r.outcome is Outcome.OK, r
    nodes = len(r.graph.nodes) if r.graph is not None else 0
    return ms, len(r.files), nodes


async def main(args: argparse.Namespace) -> int:
    load = os.getloadavg()
    print(f"date:    {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {platform.node()}: {os.cpu_count()} cores, Linux {platform.release()}, "
          f"Python {platform.python_version()}, load {load[0]:.1f}")  # fmt: skip
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    config = SandboxConfig.from_settings(Settings())
    times: dict[str, list[float]] = {"plain": [], "png": [], "graph": []}
    async with Sandbox(config) as sb:
        if not sb.available:
            print(f"sandbox unavailable: {sb.unavailable_reason}", file=sys.stderr)
            return 2
        await sb.wait_warm()
        _, files, nodes = await timed(sb, GRAPH, ())
        print(f"graph snippet: {nodes} nodes, {files} file(s)")
        _, png_files, _ = await timed(sb, PNG, None)
        print(f"png snippet: {png_files} file(s)")
        for _ in range(args.runs):
            for name, code, graph in (("plain", BASE, None), ("png", PNG, None),
                                      ("graph", GRAPH, ())):  # fmt: skip
                await sb.wait_warm()
                ms, _, _ = await timed(sb, code, graph)
                times[name].append(ms)
    plain = statistics.median(times["plain"])
    print()
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:6s} median {median:7.1f} ms  (min {min(values):.1f}, max {max(values):.1f})"
              f"  = {median / plain:.1f}x plain")  # fmt: skip
    return 0 if nodes == 50 else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    raise SystemExit(asyncio.run(main(parser.parse_args())))
