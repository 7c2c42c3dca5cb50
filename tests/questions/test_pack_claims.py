"""The sentences issue 34 corrected say the right thing, and their checks can fail.

Four parts:

* each corrected sentence now says what the issue asks (and no longer what it said), and a
  check of its item backs it;
* each check that backs a corrected or new statement holds against the torch in the venv;
* each negative control is shown failing when its sentence is reversed: the check's snippet
  is edited here (never in the pack) so that it does the opposite of what the sentence says
  (anomaly mode off, no ``once_differentiable``, ``detach()`` instead of ``.data``...), and the
  check's own expectation must then disagree. A check that still agreed would prove nothing;
* the lint rule that would have caught ae-mc-04: a choice that is code or a value, or whose
  ``why`` names a value, an expression or a derivative, needs a check that backs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.questions.claims import item_texts, names_a_result, shows_code_or_a_value
from bot.questions.expectations import compare
from bot.questions.lint import (
    lint_packs,
    unbacked_choice_problems,
    unbacked_code_problems,
    validate_upload,
)
from bot.questions.loader import PackContents, load_pack_text, load_packs
from bot.questions.schema import Check, Item
from tests.questions.snippets import explain, run_snippet

PACKS_DIR = Path(__file__).resolve().parents[2] / "questions"


def _items() -> dict[str, Item]:
    return {item.id: item for loaded in load_packs(PACKS_DIR).packs for item in loaded.pack.items}


ITEMS = _items()


def _text(item_id: str, ref: str) -> str:
    item = ITEMS[item_id]
    fields = {name: getattr(item, name) for name in type(item).model_fields}
    text = item_texts(fields, tuple(fields)).get(ref)
    assert text is not None, f"{item_id} has no {ref}"
    return " ".join(text.split())


def _checks_backing(item_id: str, ref: str) -> list[Check]:
    return [check for check in ITEMS[item_id].checks if ref in check.backs]


def _check_with(item_id: str, ref: str, fragment: str) -> Check:
    """The one check of ``item_id`` that backs ``ref`` and whose code contains ``fragment``."""
    found = [check for check in _checks_backing(item_id, ref) if fragment in check.code]
    assert len(found) == 1, f"{item_id}: {len(found)} checks back {ref} and contain {fragment!r}"
    return found[0]


# --- the corrected sentences say the right thing, and a check backs each ---------------------

# (item, text, what it must say now, what it must no longer say)
CORRECTED: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "ae-mc-04",
        "choice 3",
        ("x² itself (9 at x = 3)", "first derivative 2x (6)"),
        ("derivatives of x², not x³",),
    ),
    (
        "ae-mc-03",
        "choice 1",
        (
            "One call of `grad` computes one vector-Jacobian product",
            "`torch.autograd.functional.jacobian`",
            "`is_grads_batched=True`",
        ),
        ("never whole Jacobians",),
    ),
    (
        "ae-open-01",
        "model_answer",
        (
            "cannot be saved for backward",
            "`a * w` fails",
            "`a + w` backpropagates fine",
            "`a.clone() * w` works",
            "batch norm still updates its running statistics with the evaluation data",
        ),
        ("cannot be used in autograd later",),
    ),
    (
        "dg-flash-05",
        "answer",
        ("`w.mul_(2)` returns `w` itself, which still requires grad", "a view of `w`"),
        ("the result of every operation has `requires_grad=False`",),
    ),
    (
        "dg-flash-09",
        "answer",
        ("`torch.zeros_like(x)`", "`torch.ones_like(x)`", "`x.new_ones(2)`", "`x.detach()`"),
        ("When grad mode is on (the default) and at least one input requires grad.",),
    ),
    ("ae-flash-06", "answer", ("one saved tensor instead of six",), ()),
    ("ae-flash-07", "answer", ("shape `[2, 3]`", "without a `jvp` method"), ()),
]


@pytest.mark.parametrize(
    ("item_id", "ref", "says", "no_longer"),
    CORRECTED,
    ids=[f"{item_id}-{ref.replace(' ', '')}" for item_id, ref, _, _ in CORRECTED],
)
def test_corrected_sentence_says_the_right_thing_and_is_backed(
    item_id: str, ref: str, says: tuple[str, ...], no_longer: tuple[str, ...]
) -> None:
    text = _text(item_id, ref)
    missing = [part for part in says if part not in text]
    stale = [part for part in no_longer if part in text]
    assert not missing and not stale, f"{item_id} {ref}: {text!r}"
    assert _checks_backing(item_id, ref), f"no check of {item_id} backs {ref}"


# --- the negative controls fail when their sentence is reversed -------------------------------

NO_ANOMALY = (("for anomaly in (False, True):", "for anomaly in (False, False):"),)

# (name, item, text backed, a fragment that picks the check, edits that reverse the sentence)
REVERSED: list[tuple[str, str, str, str, tuple[tuple[str, str], ...]]] = [
    (
        "x-squared-is-not-the-second-derivative-of-x-cubed",
        "ae-mc-04",
        "choice 3",
        "x ** 2",
        # "9 and 6 are the derivatives of x²": print the derivatives where the check prints x²
        (("(x ** 2).item(), d1.item(), d2.item()", "d1.item(), d2.item(), 0.0"),),
    ),
    # "anomaly mode shows the forward line": with it off in both runs, no traceback arrives
    *(
        (
            f"anomaly-mode-shows-the-forward-line-{item_id}",
            item_id,
            ref,
            "Traceback of forward",
            NO_ANOMALY,
        )
        for item_id, ref in (
            ("ae-prac-05", "step 4"),
            ("ae-flash-05", "answer"),
            ("ae-open-02", "model_answer"),
        )
    ),
    (
        "checkpointing-keeps-only-the-inputs",
        "ae-flash-06",
        "answer",
        "saved_tensors_hooks",
        (("lambda x: checkpoint(block, x, use_reentrant=False)", "block"),),
    ),
    (
        "jacobian-rows-are-outputs",
        "ae-flash-07",
        "answer",
        "jacfwd(Cube.apply)",
        (("print(jacrev(g)(x))  #", "print(jacrev(g)(x).T)  #"),),
    ),
    (
        "jacfwd-needs-a-jvp",
        "ae-flash-07",
        "answer",
        "jacfwd(Cube.apply)",
        (("jacfwd(Cube.apply)(x)", "jacrev(Cube.apply)(x)"),),
    ),
    (
        "once-differentiable-refuses-double-backward",
        "ae-open-03",
        "model_answer",
        "once_differentiable",
        (("    @once_differentiable\n", ""),),
    ),
    (
        "vmap-needs-setup-context",
        "ae-open-03",
        "model_answer",
        "Classic",
        (("vmap(fn.apply)(batch)", "torch.stack([fn.apply(row) for row in batch])"),),
    ),
    (
        "backward-must-return-one-gradient-per-input",
        "ae-mc-07",
        "choice 1",
        "one gradient for two inputs",
        (
            (
                "return grad_out * ctx.k  # one gradient for two inputs",
                "return grad_out * ctx.k, None",
            ),
        ),
    ),
    (
        "no-grad-leaves-batch-norm-in-training-mode",
        "ae-flash-03",
        "answer",
        "BatchNorm1d",
        (
            (
                "with torch.no_grad():  # training mode",
                "bn.eval()\nwith torch.no_grad():  # training mode",
            ),
        ),
    ),
    (
        "forgetting-eval-under-no-grad-updates-batch-norm",
        "ae-open-01",
        "model_answer",
        "evaluation = ",
        (('for mode in ("train", "eval")', 'for mode in ("eval", "eval")'),),
    ),
    (
        "a-clone-of-an-inference-tensor-is-ordinary",
        "ae-open-01",
        "model_answer",
        "a.clone() * w",
        (("(a.clone() * w).sum()", "(a * w).sum()"),),
    ),
    (
        "gradcheck-shows-numerical-and-analytical",
        "ae-prac-04",
        "step 2",
        "the factor 2 is missing",
        (("return grad_out * x  # the factor 2 is missing", "return grad_out * 2 * x"),),
    ),
    (
        "one-grad-call-is-one-vector-jacobian-product",
        "ae-mc-03",
        "choice 1",
        "is_grads_batched",
        (("is_grads_batched=True", "is_grads_batched=False"),),
    ),
    (
        "in-place-under-no-grad-returns-the-tensor-that-requires-grad",
        "dg-flash-05",
        "answer",
        "w.mul_(2)",
        (("same = w.mul_(2)", "same = w.mul(2)"),),
    ),
    # the six new items
    (
        "reentrant-checkpoint-without-inputs-that-require-grad-raises",
        "ae-prac-10",
        "step 2",
        "modes.append",
        (("for reentrant in (True, False):", "for reentrant in (False, False):"),),
    ),
    (
        "a-removed-hook-is-no-longer-called",
        "ae-flash-09",
        "answer",
        "register_post_accumulate_grad_hook",
        (("handle.remove()\n(w * 3)", "(w * 3)"),),
    ),
    (
        "vmap-grad-gives-each-sample-its-own-gradient",
        "ae-mc-13",
        "explanation",
        "functional_call",
        (('per["weight"][i]', 'per["weight"].mean(0)'),),
    ),
    (
        "data-hides-an-in-place-change-detach-does-not",
        "dg-mc-17",
        "choice 1",
        "_version",
        (("out.detach().zero_()", "out.data.zero_()"),),
    ),
    (
        "no-grad-without-eval-updates-batch-norm",
        "ae-mc-14",
        "choice 2",
        "momentum",
        (('for mode in ("train", "eval"):', 'for mode in ("eval", "eval"):'),),
    ),
    (
        "set-grad-enabled-follows-its-flag",
        "dg-flash-11",
        "answer",
        "set_grad_enabled",
        (("torch.set_grad_enabled(is_train)", "torch.set_grad_enabled(True)"),),
    ),
    (
        "zeros-like-does-not-require-grad",
        "dg-flash-09",
        "answer",
        "zeros_like",
        (("torch.zeros_like(x), ", "x * 0, "),),
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("item_id", "ref", "fragment", "edits"),
    [entry[1:] for entry in REVERSED],
    ids=[entry[0] for entry in REVERSED],
)
def test_check_holds_and_fails_when_its_sentence_is_reversed(
    item_id: str, ref: str, fragment: str, edits: tuple[tuple[str, str], ...], tmp_path: Path
) -> None:
    check = _check_with(item_id, ref, fragment)
    stdout, stderr, exit_code = run_snippet(check.code, tmp_path)
    verdict = compare(check, stdout, stderr, exit_code)
    assert verdict.ok, explain(verdict, stderr)
    reversed_code = check.code
    for old, new in edits:
        assert reversed_code.count(old) == 1, f"{old!r} is not once in the check of {item_id}"
        reversed_code = reversed_code.replace(old, new)
    stdout, stderr, exit_code = run_snippet(reversed_code, tmp_path)
    assert not compare(check, stdout, stderr, exit_code).ok, (
        f"{item_id} {ref}: the check still agrees when its sentence is reversed\n{stdout}{stderr}"
    )


# --- the lint rule that would have caught ae-mc-04 --------------------------------------------

# ae-mc-04 as it shipped: choice 3's `why` was wrong about a value, showed no code, and no check
# backed it.
AE_MC_04_AS_SHIPPED = """\
pack: p
title: P
items:
  - id: p-mc-04
    kind: multiple_choice
    difficulty: medium
    prompt: What does this print?
    code: |
      import torch
      x = torch.tensor(3.0, requires_grad=True)
      (g,) = torch.autograd.grad(x ** 3, x, create_graph=True)
      (g2,) = torch.autograd.grad(g, x)
      print(g.item(), g2.item())
    expect_stdout: |
      27.0 18.0
    choices:
      - text: "`27.0 18.0`"
        correct: true
        why: "The first derivative of x³ is 3x² = 27 at 3, the second 6x = 18."
      - text: "`27.0 27.0`"
        why: The second call differentiates `g`, the first derivative, not `y` again.
      - text: "`9.0 6.0`"
        why: Those are the derivatives of x², not x³.
      - text: "A RuntimeError: `g` does not require grad"
        why: "That happens without `create_graph=True`; with it, `g` is itself part of a graph."
      - text: A RuntimeError about a missing retain_graph
        why: The first call keeps the graph, so the derivative 6x can be taken.
    checks:
      - backs: [choice 2, choice 4]
        code: print(1)
        expect_stdout: "1"
"""
AE_MC_04_CHECK_OF_CHOICE_3 = """\
      - backs: [choice 3, choice 5]
        code: print(1)
        expect_stdout: "1"
"""


def _lint(text: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    result = lint_packs(path)
    assert not result.errors, [str(problem) for problem in result.errors]
    return [f"{problem.line}: {problem.message}" for problem in result.problems]


def test_an_unbacked_why_about_a_value_is_flagged_like_ae_mc_04(tmp_path: Path) -> None:
    warned = _lint(AE_MC_04_AS_SHIPPED, tmp_path)
    assert warned == [
        "23: choice 3 is code or a value that no check backs (add a check with `backs: choice 3`)",
        # Not code, not a value, but its why names a derivative (6x).
        "27: choice 5 has a why that names a value that no check backs "
        "(add a check with `backs: choice 5`)",
    ]
    # The rule before issue 34 looked for code in backticks only, and saw nothing wrong.
    loaded, _ = load_pack_text(AE_MC_04_AS_SHIPPED.encode(), "p.yaml")
    assert loaded is not None
    contents = PackContents.of(loaded)
    assert not list(unbacked_code_problems([contents]))
    assert len(list(unbacked_choice_problems([contents]))) == 2


def test_a_check_that_backs_the_choice_ends_the_warning(tmp_path: Path) -> None:
    backed = AE_MC_04_AS_SHIPPED + AE_MC_04_CHECK_OF_CHOICE_3
    assert _lint(backed, tmp_path) == []
    # And a chat upload is told the same as `questions lint`.
    _, problems = validate_upload(AE_MC_04_AS_SHIPPED.encode(), "p.yaml")
    assert [problem.line for problem in problems] == [23, 27]


def test_a_choice_that_is_a_value_needs_a_why(tmp_path: Path) -> None:
    no_why = AE_MC_04_AS_SHIPPED.replace(
        "        why: Those are the derivatives of x², not x³.\n", ""
    ).replace("[choice 2, choice 4]", "[choice 2, choice 3, choice 4, choice 5]")
    assert _lint(no_why, tmp_path) == [
        "22: choice 3 is code or a value but has no why (say why it is wrong, "
        "and add a check with `backs: choice 3`)"
    ]


def test_the_correct_choice_is_backed_by_the_items_own_snippet(tmp_path: Path) -> None:
    """The item's code prints `27.0 18.0`; without that code, nothing backs choice 1."""
    backed = AE_MC_04_AS_SHIPPED + AE_MC_04_CHECK_OF_CHOICE_3
    without_code = backed.replace(
        backed[backed.index("    code: |\n      import torch") : backed.index("    choices:")], ""
    )
    assert _lint(without_code, tmp_path) == [
        "11: choice 1 is code or a value that no check backs (add a check with `backs: choice 1`)"
    ]


def test_names_a_result_reads_values_expressions_and_derivatives() -> None:
    assert names_a_result("Those are the derivatives of x², not x³.")
    assert names_a_result("That is dz/dy only.")
    assert names_a_result("Gradients add: 1 + 1.")
    assert names_a_result("It returns `None`.")
    assert not names_a_result("It is the other way round.")
    assert not names_a_result("The order is swapped.")
    assert shows_code_or_a_value("NaN for all three")
    assert not shows_code_or_a_value("HDF5")  # a digit inside a name is not a value
