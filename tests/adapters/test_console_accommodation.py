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
    """`/quiz`'s 30-minute window, and bob (who plays here) with x2: at 09:30 the reveal of
    the question he has not answered waits for him (his own window runs to 10:00), carl's
    late answer is refused, and bob's answer closes it. The one he answered closes on time."""
    out = _run_console(
        tmp_path / "window.sqlite3",
        "/as bob\n/quiz --kinds mc\n/answer A\n/as me\n/accommodation set bob --time 2\n"
        "/quiz --kinds mc\n"
        "/clock advance 31m\n/as carl\n/answer A\n/as bob\n/answer A\n/clock advance 1m\n",
    )
    texts = [str(line["text"]) for line in out]
    assert (
        texts.count(
            "Too late: this question's answer window has closed, and your answer does not count."
        )
        == 1
    )  # carl's
    answers = [
        i
        for i, line in enumerate(out)
        if line["member"] == "bob" and str(line["text"]).startswith(("✅", "❌"))
    ]
    reveals = [i for i, line in enumerate(out) if line["kind"] == "edit"]
    assert len(reveals) == 2 and len(answers) == 2
    assert out[reveals[0]]["at"] == "2026-03-04T09:30:00+00:00"  # #1: bob had answered it
    assert reveals[1] > answers[1]  # #2 was held past 09:30 until bob answered
    assert out[reveals[1]]["at"] == "2026-03-04T09:31:00+00:00"  # not 10:00


def test_a_held_window_ends_at_the_members_own_deadline(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "held.sqlite3",
        "/as bob\n/quiz --kinds mc\n/answer A\n/as me\n/accommodation set bob --time 2\n"
        "/quiz --kinds mc\n"
        "/clock advance 2h\n/as ann\n/quiz\n/clock advance 1h\n",
    )
    reveals = [line for line in out if line["kind"] == "edit"]
    assert [r["at"] for r in reveals[:2]] == [
        "2026-03-04T09:30:00+00:00",  # the one bob answered
        "2026-03-04T10:00:00+00:00",  # 09:00 + 30 min x 2: bob never answered it
    ]
