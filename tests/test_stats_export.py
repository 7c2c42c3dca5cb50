"""``studybot stats export``: a teacher's gradebook and the questions' statistics, as CSV.

Played through the real console on a real SQLite file, then exported by the real CLI: the
gradebook has Canvas's five identity columns and numbers a gradebook import reads, a name a
spreadsheet would run comes out as text, and ``/settings analytics off`` turns the per-member
export off while the per-question one stays.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

from bot.services.item_analysis import GRADEBOOK_HEADER, QUESTIONS_HEADER
from tests.conftest import TEST_PACKS

ROOT = Path(__file__).resolve().parents[1]


def _console(db: Path, script: str) -> None:
    # No snippet runs here: the console starts without its sandbox (seconds sooner).
    env = {**os.environ, "SANDBOX_ENABLED": "false"}
    subprocess.run(
        [sys.executable, "-m", "bot", "console", "--db", str(db), "--packs", str(TEST_PACKS)],
        input=script + "/quit\n", capture_output=True, text=True, cwd=ROOT, timeout=120,
        check=True, env=env,
    )  # fmt: skip


def _export(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", "stats", "export", *args, "--db", str(db)],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip


def test_gradebook_and_question_exports_from_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    _console(
        db,
        "/quiz mini --difficulty medium\n/answer A\n/as bob\n/answer B\n"
        "/as =HYPERLINK(evil)\n/answer A\n",
    )
    proc = _export(db)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    assert tuple(rows[0]) == GRADEBOOK_HEADER
    by_name = {r[0]: r for r in rows[1:]}
    assert set(by_name) == {"me", "bob", "'=HYPERLINK(evil)"}, by_name
    for row in rows[1:]:
        assert row[2] and row[4]  # the member's id, and the section (the workspace)
        assert float(row[6]) in (0.0, 100.0) and int(row[7]) == 1
    assert by_name["me"][6] != by_name["bob"][6]  # one of them was right, one wrong

    out = tmp_path / "questions.csv"
    done = _export(db, "questions", "--days", "30", "--out", str(out))
    assert done.returncode == 0, done.stderr
    table = list(csv.DictReader(io.StringIO(out.read_text())))
    assert tuple(table[0]) == QUESTIONS_HEADER
    answered = [r for r in table if r["answers"] != "0"]
    assert len(answered) == 1 and answered[0]["answers"] == "3"
    assert answered[0]["facility (%)"] in ("33.3", "66.7")
    assert answered[0]["upper 27% right (%)"] == ""  # three members: no group breakdown

    bad = _export(db, "questions", "--days", "ten")
    assert bad.returncode == 2 and "number of days" in bad.stderr
    unknown = _export(db, "--workspace", "nowhere")
    assert unknown.returncode == 2 and "no workspace `nowhere`" in unknown.stderr

    _console(db, "/settings analytics off\n")
    off = _export(db, "gradebook")
    assert off.returncode == 2 and "analytics on" in off.stderr
    assert _export(db, "questions").returncode == 0
