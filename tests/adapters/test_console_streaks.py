"""Streak freezes and ``/leaderboard streaks`` through the console, as a member sees them."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.test_console import _run_console

_DAY = "/as me --admin\n/quiz mini --kinds mc\n/as ann\n/answer A\n/clock advance 1d\n"


def _texts(out: list[dict[str, object]], start: str) -> list[str]:
    return [str(line["text"]) for line in out if str(line["text"]).startswith(start)]


def test_freezes_cover_two_missed_days_none_beyond_two_held_and_a_third_day_breaks_it(
    tmp_path: Path,
) -> None:
    out = _run_console(
        tmp_path / "f.sqlite3",
        _DAY
        * 16  # 16 days in a row: freezes earned on days 7 and 14; no third is held
        + "/stats\n/clock advance 2d\n/stats\n/leaderboard streaks\n/as me\n/recap now\n/as ann\n"
        "/clock advance 1d\n/stats\n/leaderboard streaks\n/leaderboard streaks here\n",
    )
    full, frozen, broken = _texts(out, "📈 Your stats")
    assert "Streak: 16 days (best 16)" in full
    assert "Streak freezes: 2 held · 0 used" in full
    assert "Streak: 16 days (best 16)" in frozen  # two missed days, two freezes: it goes on
    assert "Streak freezes: 0 held · 2 used" in frozen
    assert "Streak: 0 days (best 16)" in broken  # the third missed day breaks it
    going, gone = _texts(out, "🔥 Longest streaks going")
    assert "🥇 ann — 16 days" in going
    [recap] = _texts(out, "📅 Weekly recap")
    assert "🔥 ann — 16 days (🧊 0 freezes held, 2 used)" in recap
    assert "No streak is going" in gone
    assert "no streak board for one channel" in str(out[-1]["text"])
    assert out[-1]["ephemeral"] is True
