"""Exercises are checked before they ship: statically when a pack loads, and by
``questions check``, which runs each reference and starter in the real jail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.core.exercises import verdict_message
from bot.questions.judge import CheckVerdict, Verdict
from bot.questions.loader import load_packs
from bot.questions.schema import Exercise

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


def test_a_bad_graph_rule_is_refused_in_an_authors_words(tmp_path: Path) -> None:
    rule = "    graph:\n      require: MulBackward0\n      refuse: [MulBackward0, 'Add Backward']\n"
    _write(tmp_path, GOOD.replace("    wrong:\n", rule + "    wrong:\n", 1))
    messages = sorted(str(p).split(": ", 1)[1] for p in load_packs(tmp_path).problems)
    assert messages == [
        "ex-affine.graph.refuse[1]: a node type name, as `type(y.grad_fn).__name__` prints it, "
        "e.g. MulBackward0 or MySiLUBackward",
        "ex-affine.graph.require: expected a list, got text 'MulBackward0'; "
        "write one `- entry` per line, or [a, b]",
        "ex-affine.graph.why: required field is missing",
    ]


def test_a_wrong_solution_must_define_the_entry_and_calls_need_a_counted_function(
    tmp_path: Path,
) -> None:
    no_entry = GOOD.replace(
        "          def affine(x):\n              return 2 * x + 2\n", "          pass\n"
    )
    _write(tmp_path, no_entry)
    [problem] = load_packs(tmp_path).problems
    assert "`wrong[0].code` does not define the entry function `affine`" in problem.message
    calls = GOOD.replace(
        "        label: values\n", "        label: values\n        compare: [calls]\n"
    )
    _write(tmp_path, calls)
    [problem] = load_packs(tmp_path).problems
    assert "`compare: [calls]` counts the calls of a `counted(...)` function" in problem.message


def test_a_failed_example_says_why_and_warnings_are_not_a_traceback() -> None:
    [loaded] = load_packs(ROOT / "tests" / "data" / "exercise_packs").packs
    [item] = loaded.pack.items
    assert isinstance(item, Exercise)
    example = CheckVerdict(
        1, False, False, "wrong dtype", args="torch.tensor([1.0, 2.0])", expected="x", got="y"
    )
    message = verdict_message(
        item,
        Verdict((example, CheckVerdict(1, True, True))),
        headline="0 of 2",
        stderr="",
        warnings=("UserWarning: mind the dtype",),
    )
    text = message.plain_text()
    assert "got `y`: wrong dtype" in text
    sections = {s.heading: s for s in message.sections}
    assert "Traceback" not in sections
    assert sections["Warnings"].code == "UserWarning: mind the dtype"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_questions_check_fails_a_grader_its_own_mutants_get_past(tmp_path: Path) -> None:
    """A `wrong` solution that is right, and an `also_right` one that is wrong, break the pack:
    the grader has not been shown to tell them apart."""
    swapped = GOOD.replace(
        "          def affine(x):\n              return 2 * x + 2\n",
        "          def affine(x):\n              return 1 + x * 3\n",
    ).replace(
        "          def affine(x):\n              return x + x + x + 1\n",
        "          def affine(x):\n              return x + x + x + 1.001\n",
    )
    folder = tmp_path / "packs"
    _write(folder, swapped)
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "questions", "check", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 1, proc.stderr
    [row] = json.loads(proc.stdout)["exercises"]
    assert row["problems"] == [
        "wrong[0] passes every check (agrees with 3 * x + 1 at x = 1 only)",
        "also_right[0] fails: example 1: wrong value; hidden check 1: wrong value "
        "(adds instead of multiplying)",
    ]
