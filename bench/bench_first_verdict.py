"""Benchmark: the first exercise verdict after the bot starts, against the first ``/run``.

    .venv/bin/python bench/bench_first_verdict.py [--repeat N] [--cold N]

Each repetition starts the console twice, the way a member meets a fresh bot (a new SQLite
file, the exercise test pack, default sandbox settings), and times from the process's start:

1. **first run**: ``/run print(12345)`` typed at once; until its reply;
2. **first verdict**: ``/quiz --kinds exercise`` then ``/solve #1 --file right.py`` typed at
   once; until the verdict (the reference's run and the member's, both in the sandbox).

The two alternate, so the machine's load falls on both alike. Also a cold ``python -c
'import torch'`` (median of ``--cold``) for scale. Issue 46's target: the first verdict no
later than the first run plus 0.5 s (medians). Printed: each pair, then the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine_line  # noqa: E402

PACKS = ROOT / "tests" / "data" / "exercise_packs"
RIGHT = "import torch\n\ndef affine(x):\n    return 3 * x + 1\n"


def cold_import() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - start


def until(script: str, done: str, folder: Path, name: str) -> float:
    """Seconds from starting the console with ``script`` on its stdin to the first output
    line whose text contains ``done``; the console is then closed."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "bot", "console", "--json",
            "--db", str(folder / f"{name}.sqlite3"), "--packs", str(PACKS),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write(script)
    proc.stdin.flush()
    try:
        for line in proc.stdout:
            if done in str(json.loads(line).get("text", "")):
                return time.perf_counter() - start
        raise RuntimeError(f"the console ended without {done!r}")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cold", type=int, default=3)
    args = parser.parse_args()
    print(machine_line())
    cold = statistics.median(cold_import() for _ in range(args.cold))
    print(f"cold import torch: {cold:.2f} s (median of {args.cold})")
    runs, verdicts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        right = folder / "right.py"
        right.write_text(RIGHT)
        for n in range(args.repeat):
            first_run = until("/run print(12345)\n", "12345", folder, f"run{n}")
            verdict = until(
                f"/quiz --kinds exercise\n/solve #1 --file {right}\n",
                "checks passed",
                folder,
                f"solve{n}",
            )
            runs.append(first_run)
            verdicts.append(verdict)
            print(f"  {n + 1}: first run {first_run:.2f} s, first verdict {verdict:.2f} s")
    run_median, verdict_median = statistics.median(runs), statistics.median(verdicts)
    gap = verdict_median - run_median
    print(
        f"first run after start: median {run_median:.2f} s; first verdict: median "
        f"{verdict_median:.2f} s; the verdict comes {gap:+.2f} s after the run "
        f"({'met' if gap <= 0.5 else 'missed'}: at most +0.50 s)"
    )


if __name__ == "__main__":
    main()
