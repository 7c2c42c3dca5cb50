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


def _env() -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("DATABASE_URL", "STUDYBOT_PACKS", "STUDYBOT_DB", "WEB_SECRET", "WEB_PUBLIC_URL"):
        env.pop(name, None)
    return env


def _signs_in(base: str, path: str) -> bool:
    with httpx.Client(base_url=base) as client:
        page = client.get(path)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        if csrf is None:
            return False
        done = client.post("/signin", data={"csrf": csrf[1], "token": path.split("=", 1)[1]})
        return done.status_code == 303 and "Console chat" in client.get("/").text


def test_studybot_web_link_prints_a_new_link_for_the_page_already_serving(tmp_path: Path) -> None:
    db = tmp_path / "page.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot", "web", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=tmp_path,
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        first = re.search(
            r"(http://127\.0\.0\.1:(\d+))(/signin\?token=[\w-]{40,})", proc.stdout.readline()
        )
        assert first
        assert _signs_in(first[1], first[3])  # the printed link is now used
        made = subprocess.run(
            [
                sys.executable,
                "-m",
                "bot",
                "web",
                "link",
                "--db",
                "page.sqlite3",
                "--port",
                first[2],
            ],
            check=False,
            capture_output=True,
            text=True,
            env=_env(),
            cwd=tmp_path,
            timeout=120,
        )
        assert made.returncode == 0, made.stderr
        line = made.stdout.strip()
        new = re.fullmatch(
            r"Sign in \(one-time link, valid 15 minutes\): (http://127\.0\.0\.1:\d+)(/signin\?token=[\w-]{40,})",
            line,
        )
        assert new, line
        assert new[1] == first[1] and new[2] != first[3]
        assert _signs_in(new[1], new[2])
        assert not _signs_in(new[1], new[2])  # one use, like the first
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_studybot_web_link_without_a_database_says_so_and_makes_none(tmp_path: Path) -> None:
    made = subprocess.run(
        [sys.executable, "-m", "bot", "web", "link", "--db", "nowhere.sqlite3"],
        check=False,
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=120,
    )
    assert made.returncode == 1
    assert made.stderr.strip() == (
        "studybot: no database at nowhere.sqlite3; start the page with `studybot web` first "
        "(it prints a link itself)"
    )
    assert not (tmp_path / "nowhere.sqlite3").exists()
