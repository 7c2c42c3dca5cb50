"""Run a pack snippet for the tests: a fresh interpreter and next to nothing else.

The shipped packs' snippets are our own code, so this runs them directly, as a plain
subprocess of the test's interpreter (the venv's torch), isolated (``-I``), in an empty folder,
with an almost empty environment and a timeout: one test per item, naming it when it fails.
``test_check_sandbox.py`` runs the same snippets through the real jail (``questions check``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.questions.expectations import OutputMatch

__all__ = ["SNIPPET_TIMEOUT_S", "explain", "run_snippet"]

SNIPPET_TIMEOUT_S = 120  # importing torch takes seconds on a small, busy machine; compile more

# Passed through because on some processors older OpenBLAS builds need them to work at all.
PASSTHROUGH_ENV = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def run_snippet(code: str, workdir: Path) -> tuple[str, str, int | None]:
    """``(stdout, stderr, exit_code)``; ``exit_code`` is None when the run timed out."""
    env = {name: os.environ[name] for name in PASSTHROUGH_ENV if name in os.environ}
    env |= {"HOME": str(workdir), "TMPDIR": str(workdir), "LANG": "C.UTF-8"}
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", code],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=SNIPPET_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return _text(exc.stdout), _text(exc.stderr), None
    return done.stdout, done.stderr, done.returncode


def explain(verdict: OutputMatch, stderr: str) -> str:
    """A failure message an author can act on: the reason, both outputs, the end of stderr."""
    tail = "\n".join(stderr.strip().splitlines()[-15:])
    return (
        f"{verdict.reason}\n--- expected ---\n{verdict.expected}\n--- got ---\n{verdict.got}"
        f"\n--- stderr (last lines) ---\n{tail}"
    )


def _text(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        return output.decode("utf-8", "replace")
    return output or ""
