"""``/solve`` in the real console, with the real jail: the code typed up to ``/end``, or a
file; the verdict is private; a solve scores once and shows on the board."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.test_console import _run_console

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

EXERCISES = Path(__file__).resolve().parents[1] / "data" / "exercise_packs"


def test_solve_by_typing_then_by_file(tmp_path: Path) -> None:
    right = tmp_path / "affine.py"
    right.write_text("import torch\n\ndef affine(x):\n    return 3 * x + 1\n")
    script = (
        "/quiz --kinds exercise\n"
        "/answer #1 A\n"
        "/solve #1\n"
        "import torch\n"
        "def affine(x):\n"
        "    return 2 * x + 2\n"
        "/end\n"
        f"/solve #1 --file {right}\n"
        "/solve\n"
        "/cancel\n"
        "/solve ex-affine\n"
        "/cancel\n"
        "/solve ex-nosuch\n"
        "/solve #x\n"
        "/leaderboard\n"
    )
    lines = _run_console(tmp_path / "db.sqlite3", script, packs=EXERCISES)
    texts = [str(line.get("text", "")) for line in lines]
    post = next(line for line in lines if line.get("kind") == "post")
    assert "Coding exercise" in str(post["text"])
    assert post.get("answer_with") == "solve with /solve #1, then your code and a line /end"
    assert any("This is a coding exercise: solve it with `/solve` #1." in t for t in texts)
    assert any("Type or paste your solution, then a line with /end" in t for t in texts)
    wrong = next(t for t in texts if "checks passed" in t)
    assert "0 of 4 checks passed" in wrong  # 2x + 2 agrees with 3x + 1 at x = 1 only
    assert "got `tensor([4.0000, 6.0000])`" in wrong
    assert "hidden check 3 of 3 failed: wrong value" in wrong
    assert any("Solved: 4 of 4 checks passed. +10 points" in t for t in texts)
    assert any("/solve cancelled; nothing was submitted" in t for t in texts)
    # `/solve EXERCISE` posts that exercise here, then opens its editor.
    posts = [line for line in lines if line.get("kind") == "post"]
    assert [p["post_id"] for p in posts] == [1, 2]
    assert any("Solve #2: affine." in t for t in texts)
    assert any("No exercise `ex-nosuch` is on in this channel" in t for t in texts)
    assert any("`#x` is no #number or exercise id" in t for t in texts)
    board = next(t for t in reversed(texts) if "10" in t and "me" in t)
    assert board


def test_try_runs_a_questions_snippet_once_answered(tmp_path: Path) -> None:
    """``/try [#ID]``: the question's snippet is shown and run in the jail, after an answer;
    without a number, the channel's newest question, as ``/answer`` and ``/hint`` take it.
    A choice that is a value, not code, has nothing to try."""
    script = "/quiz mini --kinds practice\n/try\n/try #1\n/answer #1 A\n/try\n/try A\n"
    lines = _run_console(tmp_path / "db.sqlite3", script)
    kinds = [str(line.get("kind")) for line in lines]
    texts = [str(line.get("text", "")) for line in lines]
    assert kinds[1:3] == ["reply", "reply"]
    assert texts[1].startswith("Answer first: Try it opens after your answer")
    assert texts[2].startswith("Answer first: Try it opens after your answer")
    shown = texts[4]
    assert shown.startswith("Try the snippet of #1 (to change it, paste it into /run):")
    assert "(x * 3).backward()" in shown
    assert texts[5].endswith("Output:\n    3.0")
    assert texts[6] == "That question has no code to try."  # choice A is the value 3.0
