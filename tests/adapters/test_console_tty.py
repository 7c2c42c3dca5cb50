"""The console on a real terminal (a pseudo-terminal): Ctrl-C clears the line, not the bot."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(90)


class Terminal:
    """``studybot console`` on a pseudo-terminal: type keys, wait for what it shows."""

    def __init__(self, db: Path) -> None:
        master, slave = pty.openpty()
        env = {
            **os.environ,
            "TERM": "xterm",
            "PROMPT_TOOLKIT_NO_CPR": "1",  # no terminal here to answer cursor queries
            "STUDYBOT_DB": str(db),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", "console", "--clock", "2026-03-04T09:00:00Z"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self.seen = ""
        self.typed_at = 0

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        """Wait until ``text`` shows after what was typed last."""
        end = time.monotonic() + timeout
        while text not in self.seen[self.typed_at :]:
            left = end - time.monotonic()
            assert left > 0, f"never saw {text!r}; the screen so far:\n{self.seen[-2000:]}"
            ready, _, _ = select.select([self.master], [], [], min(left, 0.2))
            if ready:
                try:
                    self.seen += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:
                    break

    def type(self, keys: str) -> None:
        self.typed_at = len(self.seen)
        os.write(self.master, keys.encode())

    def close(self) -> None:
        os.close(self.master)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def test_ctrl_c_clears_the_line_and_ctrl_d_leaves(tmp_path: Path) -> None:
    term = Terminal(tmp_path / "tty.sqlite3")
    try:
        term.wait_for("[#general as me] >")
        term.type("/quiz mini")
        term.wait_for("/quiz mini")
        term.type("\x03")  # Ctrl-C: the typed line is dropped, the bot keeps running
        term.type("/stats\r")
        term.wait_for("Points: 0 all time")
        assert "Mini pack" not in term.seen  # the cleared /quiz never ran
        term.type("/run\r")
        term.wait_for("...")  # the continuation prompt: a code block is being collected
        term.type("\x03")  # Ctrl-C in a code block: the block is cancelled
        term.wait_for("(code block cancelled)")
        term.typed_at = term.seen.index("(code block cancelled)", term.typed_at)
        term.wait_for("[#general as me] >")  # a fresh prompt after the note
        term.type("\x04")  # Ctrl-D on an empty line: leave
        assert term.proc.wait(timeout=60) == 0
    finally:
        term.close()


def test_solve_collects_code_under_a_continuation_prompt(tmp_path: Path) -> None:
    """Typing a /solve, the prompt is ``...`` as for a /run block, not the command prompt on
    every line; Ctrl-C cancels the submission."""
    term = Terminal(tmp_path / "solve.sqlite3")
    try:
        term.wait_for("[#general as me] >")
        term.type("/quiz --kinds exercise\r")
        term.wait_for("/solve")
        term.wait_for("[#general as me] >")
        term.type("/solve\r")
        term.wait_for("/end")
        term.wait_for("...")
        term.type("import torch\r")
        term.wait_for("...")
        assert "as me] >" not in term.seen[term.typed_at :]
        term.type("\x03")
        term.wait_for("/solve cancelled; nothing was submitted")
        term.wait_for("[#general as me] >")
        # Leaving with Ctrl-D is test_ctrl_c_clears_the_line_and_ctrl_d_leaves's; here an
        # exercise was posted, and leaving while its sandbox still warms up on a loaded machine
        # took over 60 s twice (left for the sandbox work, issue 46).
    finally:
        term.close()
