"""Checks that back an item's prose: the `checks:` format, running them, and the lint warning.

A check names the texts it backs (`backs: explanation`, `[choice 2, step 3]`) and carries a
snippet with the same expectation rules as an item's own `code`. The loader reports a `backs`
naming a text the item does not have at its `file:line`; `questions check` runs every check
beside the items' snippets and says, for a failure, where the check is and what it backs;
`questions lint` warns about prose that shows code and that no check backs, and about choices
that are code or a value, or whose `why` names one, that no check backs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.questions.check import CheckTarget, check_items, check_targets, render_table
from bot.questions.claims import ClaimRefError, describe_available, parse_ref
from bot.questions.lint import lint_packs, validate_upload
from bot.questions.loader import item_hash, load_pack_text, load_packs
from bot.questions.schema import Check, MultipleChoice, Practice
from tests.conftest import TEST_PACKS
from tests.questions.test_check import ScriptedRunner, SubprocessRunner, _result
from tests.test_cli import ROOT, studybot

CLAIMS = TEST_PACKS / "claims"
BACKED = CLAIMS / "backed.yaml"
WRONG = CLAIMS / "wrong-claim.yaml"

ITEM = """\
pack: p
title: P
items:
  - id: p-prac-1
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: print(1)
    expect_stdout: "1"
    choices:
      - text: "1"
        correct: true
      - text: "2"
        why: "`print(1)` prints 1."
    steps:
      - It prints `1`.
      - Nothing else.
      - Done.
    hints: [Read it.]
    final_answer: "1"
    checks:
{checks}
"""


def _load(checks: str, name: str = "p.yaml") -> tuple[object, list[str]]:
    loaded, problems = load_pack_text(ITEM.format(checks=checks).encode(), name)
    # In line order, as `questions lint` prints them.
    return loaded, [str(problem) for problem in sorted(problems, key=lambda p: p.line)]


# --- the format -------------------------------------------------------------------------------


def test_backs_is_one_name_or_a_list_in_canonical_form() -> None:
    loaded, problems = load_pack_text(BACKED.read_bytes(), "backed.yaml")
    assert not problems and loaded is not None
    checks = {item.id: [check.backs for check in item.checks] for item in loaded.pack.items}
    assert checks == {
        "bk-flash-1": [("answer",)],
        "bk-mc-1": [("explanation", "choice 1")],
        "bk-prac-1": [("choice 2", "step 1", "mistake 1"), ("hint 1",)],
        "bk-open-1": [("hint", "model_answer")],
    }
    assert loaded.pack.items[2].checks[0].claim == "choice 2, step 1, mistake 1"
    # Each check's own line, for reports.
    assert loaded.check_lines[("bk-prac-1", 0)] == 58
    assert loaded.check_lines[("bk-prac-1", 1)] == 64


def test_names_are_read_without_regard_to_case_or_spaces() -> None:
    assert parse_ref("  Step   2 ") == "step 2"
    assert parse_ref("FINAL_ANSWER") == "final_answer"
    for bad in ("steps 2", "step", "step two", "choice 0", "why 1", "answer 1"):
        with pytest.raises(ClaimRefError):
            parse_ref(bad)


def test_a_check_follows_the_rules_of_an_items_code() -> None:
    with pytest.raises(ValueError, match="either expect_stdout or expect_error, not both"):
        Check(backs=("answer",), code="x", expect_stdout="1", expect_error="E")
    with pytest.raises(ValueError, match="a check needs a machine-checkable expectation"):
        Check(backs=("answer",), code="x")
    with pytest.raises(ValueError, match="expect_error"):
        Check(backs=("answer",), code="x", expect_error="not a name")


def test_a_backs_naming_a_text_the_item_lacks_is_reported_at_its_line() -> None:
    loaded, problems = _load(
        "      - backs: step 4\n"  # line 22
        "        code: print(1)\n"
        '        expect_stdout: "1"\n'
        "      - backs:\n"  # line 25
        "          - step 3\n"
        "          - explanation\n"  # line 27
        "          - hint\n"  # line 28
        "          - mistake 1\n"  # line 29
        "        code: print(1)\n"
        '        expect_stdout: "1"\n'
    )
    assert loaded is None
    expected = "expected one of its texts: final_answer, choice 1-2, step 1-3, hint 1"
    assert problems == [
        f"p.yaml:22: p-prac-1.checks[0].backs: `step 4`: this item has no step 4; {expected}",
        f"p.yaml:27: p-prac-1.checks[1].backs[1]: `explanation`: a practice item has no "
        f"explanation; {expected}",
        f"p.yaml:28: p-prac-1.checks[1].backs[2]: `hint`: a practice item has no hint; {expected}",
        f"p.yaml:29: p-prac-1.checks[1].backs[3]: `mistake 1`: this item has no mistake 1; "
        f"{expected}",
    ]


def test_an_explanation_on_a_flashcard_and_an_item_without_an_id() -> None:
    text = (
        "pack: f\ntitle: F\nitems:\n"
        "  - kind: flashcard\n    difficulty: easy\n    prompt: Q?\n    answer: A.\n"
        "    checks:\n      - backs: explanation\n        code: print(1)\n"
        '        expect_stdout: "1"\n'
    )
    _, problems = load_pack_text(text.encode(), "f.yaml")
    assert [str(problem) for problem in problems] == [
        "f.yaml:4: items[0].id: required field is missing",
        "f.yaml:9: items[0].checks[0].backs: `explanation`: a flashcard has no explanation; "
        "expected one of its texts: answer",
    ]


def test_every_problem_of_the_checks_comes_back_at_once() -> None:
    """One invalid check must not hide another check's bad `backs`, nor its own rules."""
    _, problems = _load(
        "      - backs: chioce 2\n"  # line 22: not a name, and no expectation
        "        code: print(1)\n"
        "      - backs: step 9\n"  # line 24: a valid check naming a missing step
        "        code: print(1)\n"
        '        expect_stdout: "1"\n'
        '      - backs: "choice 1, step 2"\n'  # line 27
        "        code: print(1)\n"
        "        expect_stdut: '1'\n"  # line 29
    )
    assert problems == [
        "p.yaml:22: p-prac-1.checks[0].backs: 'chioce 2' is not a text a check can back; "
        "expected answer, explanation, final_answer, model_answer, hint, or choice N, step N, "
        "hint N, mistake N (N counts from 1)",
        "p.yaml:22: p-prac-1.checks[0]: a check needs a machine-checkable expectation: "
        "expect_stdout (the exact output) or expect_error (an exception type name)",
        "p.yaml:24: p-prac-1.checks[1].backs: `step 9`: this item has no step 9; expected one "
        "of its texts: final_answer, choice 1-2, step 1-3, hint 1",
        "p.yaml:27: p-prac-1.checks[2].backs: 'choice 1, step 2' names several texts in one "
        "string; write them as a list, e.g. [choice 1, step 2]",
        "p.yaml:27: p-prac-1.checks[2]: a check needs a machine-checkable expectation: "
        "expect_stdout (the exact output) or expect_error (an exception type name)",
        "p.yaml:29: p-prac-1.checks[2].expect_stdut: unknown field (allowed here: backs, code, "
        "expect_stdout, expect_error)",
    ]


def test_a_check_does_not_change_the_version_of_its_question() -> None:
    loaded, _ = load_pack_text(BACKED.read_bytes(), "backed.yaml")
    assert loaded is not None
    item = loaded.pack.items[1]
    assert isinstance(item, MultipleChoice) and item.checks
    assert item_hash(item) == item_hash(item.model_copy(update={"checks": ()}))


def test_available_texts_are_described_in_ranges() -> None:
    texts = {"final_answer": "x", "choice 1": "a", "choice 2": "b", "step 1": "s", "hint 1": "h"}
    assert describe_available(texts) == "final_answer, choice 1-2, step 1, hint 1"
    assert describe_available({"explanation": None}) == "nothing"


# --- running them -----------------------------------------------------------------------------


def test_checks_are_targets_beside_the_items_own_code() -> None:
    loaded = load_packs(BACKED).packs[0]
    targets = check_targets([loaded])
    assert [(t.item.id, t.claim, t.line) for t in targets] == [
        ("bk-flash-1", "answer", 11),
        ("bk-mc-1", "explanation, choice 1", 31),
        ("bk-prac-1", None, 36),
        ("bk-prac-1", "choice 2, step 1, mistake 1", 58),
        ("bk-prac-1", "hint 1", 64),
        ("bk-open-1", "hint, model_answer", 77),
    ]


async def test_a_check_row_in_json_names_the_texts_it_backs() -> None:
    loaded = load_packs(BACKED).packs[0]
    target = next(t for t in check_targets([loaded]) if t.claim == "explanation, choice 1")
    assert isinstance(target, CheckTarget)
    runner = ScriptedRunner(
        {
            target.code: _result(
                "", "Traceback (most recent call last):\nIndexError: pop from empty list\n", 1
            )
        }
    )
    (row,) = await check_items([target], runner)
    document = row.as_dict()
    assert document["id"] == "bk-mc-1"
    assert document["claim"] == "explanation, choice 1"
    assert (document["line"], document["ok"], document["got"]) == (31, True, "IndexError")


@pytest.mark.slow
async def test_a_failing_claim_is_reported_with_its_line_and_the_text_it_backs(
    tmp_path: Path,
) -> None:
    """The real check path: real snippets, judged and tabled as `questions check` does."""
    loaded = load_packs(WRONG).packs[0]
    rows = await check_items(check_targets([loaded]), SubprocessRunner(tmp_path), jobs=2)
    assert [(row.target.claim, row.verdict, row.got) for row in rows] == [
        (None, "ok", "3"),
        ("explanation", "disagrees", "(no error) abcabc \u23ce 0"),
        ("choice 2", "ok", "3"),
    ]
    table = render_table(rows).splitlines()
    assert table[3].split()[:2] == ["wc-mc-1", "[explanation]"]
    assert (
        f"{WRONG}:20: wc-mc-1: check backing explanation: expected ValueError, but the run "
        "succeeded"
    ) in table
    assert table[-1] == "1 code item(s) and 2 check(s): 2 ok, 1 disagree with their expectation"


# --- the lint warning -------------------------------------------------------------------------


UNBACKED = """\
pack: u
title: U
items:
  - id: u-mc-1
    kind: multiple_choice
    difficulty: easy
    prompt: Which is true?
    choices:
      - text: A
        correct: true
        why: "`x.grad` is filled by `backward()`."
      - text: B
        why: Not this one.
    explanation: >-
      Only leaves get `.grad`.
  - id: u-prac-1
    kind: practice
    difficulty: easy
    prompt: What does this print?
    choices:
      - text: "1"
        correct: true
      - text: "2"
    steps:
      - Read it.
      - "`print(1)` prints 1."
    common_mistakes:
      - "Reading `1` as `2`."
    final_answer: "1"
    checks:
      - backs: step 2
        code: print(1)
        expect_stdout: "1"
"""


def test_prose_that_shows_code_no_check_backs_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "u.yaml"
    path.write_text(UNBACKED)
    result = lint_packs(path)
    assert not result.errors
    assert [str(problem) for problem in result.problems] == [
        f"{path}:11: warning: u-mc-1: the why of choice 1 shows code that no check backs "
        "(add a check with `backs: choice 1`)",
        f"{path}:14: warning: u-mc-1: the explanation shows code that no check backs "
        "(add a check with `backs: explanation`)",
        # The choices are values that nothing runs (see test_pack_claims.py for that rule).
        f"{path}:21: warning: u-prac-1: choice 1 is code or a value that no check backs "
        "(add a check with `backs: choice 1`)",
        f"{path}:23: warning: u-prac-1: choice 2 is code or a value but has no why (say why it "
        "is wrong, and add a check with `backs: choice 2`)",
        f"{path}:28: warning: u-prac-1: mistake 1 shows code that no check backs "
        "(add a check with `backs: mistake 1`)",
    ]
    # A chat upload is told the same.
    loaded, problems = validate_upload(UNBACKED.encode(), "u.yaml")
    assert loaded is not None
    assert [problem.message for problem in problems] == [
        problem.message for problem in result.problems
    ]


def test_lint_prints_the_warning_and_still_passes(tmp_path: Path) -> None:
    path = tmp_path / "u.yaml"
    path.write_text(UNBACKED.replace("Only leaves get `.grad`.", "Only leaves get a gradient."))
    proc = studybot("questions", "lint", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        f"{path}:11: warning: u-mc-1: the why of choice 1 shows code that no check backs "
        "(add a check with `backs: choice 1`)",
        f"{path}:21: warning: u-prac-1: choice 1 is code or a value that no check backs "
        "(add a check with `backs: choice 1`)",
        f"{path}:23: warning: u-prac-1: choice 2 is code or a value but has no why (say why it "
        "is wrong, and add a check with `backs: choice 2`)",
        f"{path}:28: warning: u-prac-1: mistake 1 shows code that no check backs "
        "(add a check with `backs: mistake 1`)",
        "ok: 1 pack(s), 2 item(s)",
    ]


def test_backed_prose_and_prose_without_code_are_not_warned_about() -> None:
    result = lint_packs(CLAIMS)
    assert not result.problems, [str(problem) for problem in result.problems]
    practice = next(i for p in result.packs for i in p.pack.items if isinstance(i, Practice))
    assert practice.checks


@pytest.mark.slow
def test_check_json_through_the_sandbox_has_a_claim_per_row(tmp_path: Path) -> None:
    from tests.questions.test_check_sandbox import _sandbox_unavailable_reason

    reason = _sandbox_unavailable_reason()
    if reason is not None:
        pytest.skip(f"sandbox unavailable on this host: {reason}")
    proc = studybot("questions", "check", str(CLAIMS), "--json", "--jobs", "2")
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    rows = [(row["id"], row["claim"], row["line"], row["ok"]) for row in document["items"]]
    assert rows == [
        ("bk-flash-1", "answer", 11, True),
        ("bk-mc-1", "explanation, choice 1", 31, True),
        ("bk-prac-1", None, 36, True),
        ("bk-prac-1", "choice 2, step 1, mistake 1", 58, True),
        ("bk-prac-1", "hint 1", 64, True),
        ("bk-open-1", "hint, model_answer", 77, True),
        ("wc-mc-1", None, 5, True),
        ("wc-mc-1", "explanation", 20, False),
        ("wc-mc-1", "choice 2", 25, True),
    ]
    assert (document["checked"], document["disagree"]) == (9, 1)
    table = studybot("questions", "check", str(WRONG))
    assert table.returncode == 1
    assert (
        # Named from where the command runs (the repository), as a user would type it.
        f"{WRONG.relative_to(ROOT)}:20: wc-mc-1: check backing explanation: expected "
        "ValueError, but the run "
        "succeeded" in table.stdout.splitlines()
    )
