"""The weekly recap through the console: scheduled by an admin, posted once on its day."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.adapters.test_console import _run_console


def _recaps(out: list[dict[str, object]]) -> list[dict[str, object]]:
    return [line for line in out if "Weekly recap" in str(line["text"])]


def test_a_weekly_recap_posts_once_on_its_day_with_board_streaks_and_most_missed(
    tmp_path: Path,
) -> None:
    db = tmp_path / "recap.sqlite3"
    out = _run_console(
        db,
        "/recap\n"
        "/as ann\n/recap on fri 18:00\n"  # members may look, not change
        "/as me\n/recap on fri 18:00\n/recap on funday 18:00\n"
        "/quiz mini --difficulty medium\n/as ann\n/answer A\n/as bob\n/answer B\n"
        "/as me\n/reveal\n"
        "/clock set 2026-03-06T17:59:00Z\n"
        "/clock set 2026-03-06T18:00:00Z\n"
        "/clock advance 3h\n",
    )
    texts = [str(line["text"]) for line in out]
    assert texts[0].startswith("No weekly recap in #general. Admins: `/recap on fri 18:00`")
    assert "Only admins can schedule or post the weekly recap" in texts[2]
    assert texts[4].startswith("📅 The weekly recap will post in #general every Friday at 18:00")
    assert "`funday` is not a day of the week" in texts[5]
    [recap] = _recaps(out)  # once, at 18:00 on Friday, not at 17:59 and not again at 21:00
    assert recap["kind"] == "post" and recap["channel"] == "general"
    assert recap["at"] == "2026-03-06T18:00:00+00:00"
    text = str(recap["text"])
    assert text.startswith("📅 Weekly recap — week of Mon 2 Mar")
    assert (
        "🥇 bob — 20 pts (1 answer)" in text
        and "ann" not in text.split("Most missed", maxsplit=1)[0]
    )
    assert "#1: When is the autograd graph built?" in text
    assert "1 of 2 missed it; the answer was B. As the forward pass runs." in text
    assert "Revisit it with `/question 1`." in text
    assert "#general · 1 question posted here this week" in text

    # A week later: a new recap of a quiet week; a restart does not post last week's again.
    later = _run_console(db, "/clock\n", "--clock", "2026-03-13T18:05:00Z")
    [quiet] = _recaps(later)
    assert "week of Mon 9 Mar" in str(quiet["text"])
    assert "Nobody scored this week" in str(quiet["text"])
    again = _run_console(db, "/clock\n", "--clock", "2026-03-13T19:00:00Z")
    assert _recaps(again) == []


def test_recap_now_previews_and_off_stops_it(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "r.sqlite3",
        "/recap on fri 18:00\n/recap now\n/recap off\n/recap off\n"
        "/clock set 2026-03-06T18:30:00Z\n/recap\n",
    )
    texts = [str(line["text"]) for line in out]
    assert texts[1].startswith("📅 Weekly recap — week of Mon 2 Mar")
    assert out[1]["ephemeral"] is False  # posted for the channel to see
    assert texts[2] == "The weekly recap in #general is off."
    assert texts[3] == "#general had no recap on."
    assert len(_recaps(out)) == 1  # only the preview: nothing posted on Friday
    assert texts[-1].startswith("No weekly recap in #general")


def test_a_late_recap_says_how_late_and_a_stale_one_is_skipped(tmp_path: Path) -> None:
    """The grace rule of scheduled questions (SCHEDULE_GRACE, 2 h by default) holds for
    recaps: back at 19:30, Friday's 18:00 recap posts and says it is late; back at 21:44,
    it is skipped for the week instead of arriving stale without a word."""
    late_db, stale_db = tmp_path / "late.sqlite3", tmp_path / "stale.sqlite3"
    for db in (late_db, stale_db):
        _run_console(db, "/recap on fri 18:00\n")
    late = _run_console(late_db, "/clock\n", "--clock", "2026-03-06T19:30:00Z")
    [recap] = _recaps(late)
    assert "Posted 1 h 30 min late: the bot was offline at Fri 18:00." in str(recap["text"])
    stale = _run_console(stale_db, "/clock\n", "--clock", "2026-03-06T21:44:00Z")
    assert _recaps(stale) == []
    # Skipped is skipped: the next start that day does not post it either.
    assert _recaps(_run_console(stale_db, "/clock\n", "--clock", "2026-03-06T22:00:00Z")) == []


def test_a_recap_in_the_terminal_is_headed_by_its_title_not_a_question_number(
    tmp_path: Path,
) -> None:
    db = tmp_path / "head.sqlite3"
    _run_console(db, "/recap on fri 18:00\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "console",
            "--db",
            str(db),
            "--clock",
            "2026-03-06T18:00:00Z",
        ],
        input="/recap now\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "#None" not in proc.stdout
    assert "── #general · 📅 Weekly recap — week of Mon 2 Mar" in proc.stdout
