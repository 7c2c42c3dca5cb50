"""``/exam`` in the console: set, shown, counted down on /stats, refused in one line."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.test_console import _run_console


def test_exam_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "exam.sqlite3",
        "/exam\n/exam set 2026-03-01\n/exam set 2026-03-20 --tag nope\n"
        "/exam set 2026-03-20 --tag leaf --channel\n/exam\n/stats\n/exam clear\n/exam clear --channel\n",
    )
    texts = [str(line["text"]) for line in out]
    assert texts[0].startswith(
        "No exam date is set here. An admin sets one with `/exam set 2026-04-03"
    )
    assert texts[1] == "2026-03-01 has passed: the exam date is today (2026-03-04) or later."
    assert texts[2].startswith("No question has the tag `nope`.")
    assert "Exam on Fri 20 Mar 2026, in 16 days (leaf)" in texts[3] and "#" in texts[3]
    assert "Your readiness" in texts[4] and "leaf: not studied yet" in texts[4]
    assert any(
        "📅 Exam on Fri 20 Mar 2026" in t and "`/exam` shows your readiness" in t for t in texts[5:]
    )
    assert texts[-2] == "There is no exam date to clear here."  # the channel's is the one set
    assert texts[-1].startswith("📅 The exam date is cleared")


def test_exam_prep_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "prep.sqlite3",
        "/exam set 2026-03-20 --tag leaf\n/exam prep on\n/exam prep on\n/exam\n"
        "/exam prep maybe\n/exam prep off\n/review\n",
    )
    texts = [str(line["text"]) for line in out]
    assert texts[1].startswith("📅 Exam prep is on. Once your due cards are done, `/review`")
    assert "(it was on already)" in texts[2]
    assert "Exam prep is on: once your due cards are done" in texts[3]
    assert "maybe" in texts[4] and "on" in texts[4] and "off" in texts[4]
    assert texts[5].startswith("📅 Exam prep is off:")
