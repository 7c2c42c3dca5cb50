"""The sentences issue 34 corrected say the right thing, and their checks can fail.

Three parts:

* each corrected sentence now says what the issue asks (and no longer what it said), and a
  check of its item backs it;
* each check that backs a corrected or new statement holds against the torch in the venv;
* each negative control is shown failing when its sentence is reversed: the check's snippet
  is edited here (never in the pack) so that it does the opposite of what the sentence says
  (anomaly mode off, no ``once_differentiable``, ``detach()`` instead of ``.data``...), and the
  check's own expectation must then disagree. A check that still agreed would prove nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.questions.claims import item_texts
from bot.questions.expectations import compare
from bot.questions.loader import load_packs
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
