"""``/accommodation`` in the console: set privately, refused in one line, and a round that
waits for the accommodated player's own deadline."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.test_console import _run_console


def test_accommodations_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "acc.sqlite3",
        "/as bob\n/quiz\n/as me\n"
        "/accommodation set bob --time 0\n/accommodation set bob --time x100\n"
        "/accommodation set nobody --time 2\n/accommodation set bob --time 2\n"
        "/accommodation\n/as bob\n/accommodation\n/accommodation set me --time 2\n",
    )
    texts = [str(line["text"]) for line in out]
    assert any("not x0" in t for t in texts) and any("not x100" in t for t in texts)
    assert any("No member called `nobody`" in t for t in texts)
    assert any(t.startswith("♿ bob: x2 time") for t in texts)
    assert "• bob: x2 time" in texts
    assert "♿ Your accommodation: x2 time." in texts
    assert texts[-1] == "Only admins set accommodations."


def test_a_posted_question_waits_for_a_member_with_extra_time(tmp_path: Path) -> None:
    """`/quiz`'s 30-minute window, and bob with x2: at 09:30 the reveal waits for bob (his
    own window runs to 10:00), carl's late answer is refused, and bob's answer closes it."""
    out = _run_console(
        tmp_path / "window.sqlite3",
        "/as bob\n/quiz\n/as me\n/accommodation set bob --time 2\n"
        "/clock advance 31m\n/as carl\n/answer A\n/as bob\n/answer A\n/clock advance 1m\n",
    )
    texts = [str(line["text"]) for line in out]
    assert (
        texts.count(
            "Too late: this question's answer window has closed, and your answer does not count."
        )
        == 1
    )  # carl's
    answered = next(
        i
        for i, line in enumerate(out)
        if line["member"] == "bob"
        and ("Correct" in str(line["text"]) or "Not quite" in str(line["text"]))
    )
    reveals = [i for i, line in enumerate(out) if line["kind"] == "edit"]
    assert reveals and reveals[0] > answered  # held past 09:30 until bob answered
    assert str(out[reveals[0]]["at"]).startswith("2026-03-04T09:3")  # not 10:00


def test_a_held_window_ends_at_the_members_own_deadline(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "held.sqlite3",
        "/as bob\n/quiz\n/as me\n/accommodation set bob --time 2\n/clock advance 2h\n",
    )
    [reveal] = [line for line in out if line["kind"] == "edit"]
    assert reveal["at"] == "2026-03-04T10:00:00+00:00"  # 09:00 + 30 min x 2
