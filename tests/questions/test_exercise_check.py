"""Exercises are checked before they ship: statically when a pack loads, and by
``questions check``, which runs each reference and starter in the real jail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.questions.loader import load_packs

ROOT = Path(__file__).resolve().parents[2]
GOOD = (ROOT / "tests" / "data" / "exercise_packs" / "affine.yaml").read_text()


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / "ex.yaml"
    path.write_text(text)
    return path


def test_a_starter_that_does_not_compile_is_refused_at_its_line(tmp_path: Path) -> None:
    broken = GOOD.replace("      def affine(x):\n          return x\n", "      def affine(x)\n")
    _write(tmp_path, broken)
    result = load_packs(tmp_path)
    [problem] = result.problems
    assert problem.line == 5  # the item's first line
    assert "`starter` is not valid Python: line 3" in problem.message
    assert not result.packs or not result.packs[0].pack.items


def test_a_solution_without_the_entry_function_is_refused(tmp_path: Path) -> None:
    _write(
        tmp_path, GOOD.replace("      def affine(x):\n          return 3 * x + 1", "      f = 1")
    )
    [problem] = load_packs(tmp_path).problems
    assert "`solution` does not define the entry function `affine`" in problem.message


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_questions_check_reports_a_broken_exercise_at_file_line(tmp_path: Path) -> None:
    broken = (
        GOOD.replace("id: ex-affine", "id: ex-broken")
        .replace('expect: "torch.tensor([4.0, 7.0])"', 'expect: "torch.tensor([4.0, 8.0])"')
        .replace(
            "      def affine(x):\n          return x\n",
            "      def affine(x):\n          return 3 * x + 1\n",
        )
    )
    folder = tmp_path / "packs"
    _write(folder, GOOD + "\n" + broken.split("items:\n", 1)[1])
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "questions", "check", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    rows = {row["id"]: row for row in report["exercises"]}
    assert rows["ex-affine"]["ok"] and rows["ex-affine"]["problems"] == []
    problems = rows["ex-broken"]["problems"]
    assert rows["ex-broken"]["line"] > rows["ex-affine"]["line"]
    assert any(
        "expect `torch.tensor([4.0, 8.0])` disagrees with the solution" in p for p in problems
    )
    assert "the starter already passes every check" not in problems  # not judged past a bad expect
    assert report["broken_exercises"] == 1
