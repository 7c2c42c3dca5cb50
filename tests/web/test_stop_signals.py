"""`studybot web` in a terminal: one Ctrl-C (SIGINT) or SIGTERM stops it within 2 s, whether it
arrives while Python is still importing, while it opens the database, or while it serves
(with a page open on a kept-alive connection), and never with a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(60)


def _start(tmp_path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("DATABASE_URL", "STUDYBOT_PACKS", "STUDYBOT_DB", "WEB_SECRET"):
        env.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-m", "bot", "web", "--db", str(tmp_path / "web.sqlite3"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def _stopped_within(proc: subprocess.Popen[str], sig: signal.Signals) -> tuple[float, str]:
    sent = time.monotonic()
    proc.send_signal(sig)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"still running 10 s after {sig.name}; stderr: {err[-2000:]}")
    return time.monotonic() - sent, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("after_s", [0.5, 1.5, 5.0])
def test_one_signal_stops_it_within_two_seconds_without_a_traceback(
    tmp_path: Path, sig: signal.Signals, after_s: float
) -> None:
    proc = _start(tmp_path)
    client = None
    try:
        time.sleep(after_s)
        if after_s >= 5:  # serving: a browser holds a connection open
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("Admin web page: "), line
            client = httpx.Client(base_url=line.split(": ", 1)[1].strip())
            assert client.get("/static/style.css").status_code == 200
        took, err = _stopped_within(proc, sig)
    finally:
        if client is not None:
            client.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert took < 2.0, f"{sig.name} after {after_s} s took {took:.2f} s to stop"
    assert "Traceback" not in err, err
    assert "KeyboardInterrupt" not in err, err
    assert proc.returncode in {0, 128 + sig.value}, (proc.returncode, err)
