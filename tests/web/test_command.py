"""`studybot web` as an operator starts it on a brand-new database: loopback only, a one-time
link on standard output, and the link signs a browser in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def test_studybot_web_prints_a_link_that_signs_in_once(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("DATABASE_URL", "STUDYBOT_PACKS", "STUDYBOT_DB", "WEB_SECRET"):
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "web", "--db", str(tmp_path / "new.sqlite3"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline(), proc.stdout.readline()
        assert re.fullmatch(r"Admin web page: http://127\.0\.0\.1:\d+/\n", first), first
        link = re.search(r"(http://127\.0\.0\.1:\d+)(/signin\?token=[\w-]{40,})", second)
        assert link, second
        with httpx.Client(base_url=link[1]) as client:
            page = client.get(link[2])
            assert page.status_code == 200
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert csrf
            token = link[2].split("=", 1)[1]
            done = client.post("/signin", data={"csrf": csrf[1], "token": token})
            assert done.status_code == 303
            home = client.get("/")
            assert home.status_code == 200
            assert "Console chat" in home.text and "#general" in home.text
            stale = client.post("/signin", data={"csrf": csrf[1], "token": token})
            assert stale.status_code == 403  # the sign-in form's token went with its use
            form = client.get(link[2])
            assert "This sign-in link was used already" in form.text
            form = client.get("/signin")
            fresh = re.search(r'name="csrf" value="([^"]+)"', form.text)
            assert fresh
            again = client.post("/signin", data={"csrf": fresh[1], "token": token})
            assert again.status_code == 400  # the link was used
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode is not None
