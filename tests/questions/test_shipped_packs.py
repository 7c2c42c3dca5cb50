"""The packs in ``questions/`` load cleanly, meet the issue's bar, and tell the truth.

The last part runs every code snippet, and every check that backs a statement of an item's
prose, outside the jail with this interpreter (the torch installed in the venv, 2.13 on CI;
a child of one torch-warm process per test process, see ``snippets.py``)
and judges it with the same :func:`compare` that the sandboxed ``questions check`` uses: one
test per item id, and one per check (``dg-mc-12-check1-explanation``), so a failure names
the item and the text.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bot.questions.expectations import Expectation, compare
from bot.questions.lint import lint_packs
from bot.questions.loader import load_packs
from bot.questions.schema import Check, Item, Pack, Practice, prose_checks
from tests.questions.snippets import explain, run_snippet, run_snippet_cold

PACKS_DIR = Path(__file__).resolve().parents[2] / "questions"
DYNAMIC_GRAPHS = "pytorch-dynamic-graphs"

# The issue's topics, each as the tags that mark it; every tag must be on at least
# MIN_ITEMS_PER_TAG items so that a topic is taught, not just mentioned once.
REQUIRED_TOPICS: dict[str, tuple[str, ...]] = {
    "graph building at run time": ("graph-building",),
    "control flow": ("control-flow",),
    "variable input sizes": ("shapes",),
    "requires_grad": ("requires-grad",),
    "backward and chain rule": ("backward", "chain-rule"),
    "gradient accumulation and zeroing": ("accumulation", "zero-grad"),
    "detach / no_grad": ("detach", "no-grad"),
    "retain_graph": ("retain-graph",),
    "leaf tensors": ("leaf",),
    "comparison with static graphs": ("static-graph",),
    "torch.compile": ("compile",),
}
MIN_ITEMS_PER_TAG = 2


def _packs() -> list[Pack]:
    return [loaded.pack for loaded in load_packs(PACKS_DIR).packs]


def _pack(name: str) -> Pack:
    for pack in _packs():
        if pack.pack == name:
            return pack
    pytest.fail(f"no pack named {name!r} loads from {PACKS_DIR}")


def _code_items() -> list[Item]:
    return [item for pack in _packs() for item in pack.items if item.code is not None]


def _checks() -> list[tuple[str, Check]]:
    """Every check of every shipped item, with a test id naming the item and the texts."""
    return [
        (f"{item.id}-check{number}-{'-'.join(check.backs).replace(' ', '')}", check)
        for pack in _packs()
        for item in pack.items
        for number, check in enumerate(prose_checks(item), 1)
    ]


# --- (a) every pack loads ---------------------------------------------------------------------


def test_every_shipped_pack_loads_without_problems() -> None:
    result = load_packs(PACKS_DIR)
    assert not result.problems, "\n".join(str(problem) for problem in result.problems)
    assert result.packs, f"no packs in {PACKS_DIR}"


def test_every_shipped_pack_lints_without_a_warning() -> None:
    """No near-duplicates, and no prose that shows code without a check backing it."""
    result = lint_packs(PACKS_DIR)
    assert not result.problems, "\n".join(str(problem) for problem in result.problems)


# --- (b) the first pack meets the issue ------------------------------------------------------


def test_dynamic_graphs_pack_has_the_items_the_issue_asks_for() -> None:
    items = _pack(DYNAMIC_GRAPHS).items
    kinds = Counter(item.kind for item in items)
    practice_with_code = sum(
        1 for item in items if isinstance(item, Practice) and item.code is not None
    )
    shortfalls = [
        f"{what}: {have} < {need}"
        for what, have, need in [
            ("items", len(items), 30),
            ("flashcards", kinds["flashcard"], 6),
            ("multiple choice", kinds["multiple_choice"], 10),
            ("practice with code", practice_with_code, 8),
            ("open prompts", kinds["open"], 2),
        ]
        if have < need
    ]
    assert not shortfalls, "; ".join(shortfalls)


def test_dynamic_graphs_practice_items_are_button_scored_and_checked() -> None:
    bad = [
        item.id
        for item in _pack(DYNAMIC_GRAPHS).items
        if isinstance(item, Practice) and (item.code is None or item.choices is None)
    ]
    assert not bad, f"practice items without code or choices: {bad}"


def test_dynamic_graphs_pack_covers_the_issue_topics() -> None:
    items = _pack(DYNAMIC_GRAPHS).items
    tag_counts = Counter(tag for item in items for tag in item.tags)
    missing = [
        f"{topic} (tag {tag!r} on {tag_counts[tag]} item(s))"
        for topic, tags in REQUIRED_TOPICS.items()
        for tag in tags
        if tag_counts[tag] < MIN_ITEMS_PER_TAG
    ]
    untagged = [item.id for item in items if not item.tags]
    assert not missing, f"topics taught by fewer than {MIN_ITEMS_PER_TAG} items: {missing}"
    assert not untagged, f"items without tags: {untagged}"


def test_dynamic_graphs_pack_mixes_difficulties() -> None:
    difficulties = Counter(item.difficulty for item in _pack(DYNAMIC_GRAPHS).items)
    assert len(difficulties) == 3, difficulties


# --- (c) every code expectation is true -------------------------------------------------------


def test_the_snippet_runner_can_fail(tmp_path: Path) -> None:
    """A wrong expectation must be caught, or the item tests below would prove nothing."""
    stdout, stderr, exit_code = run_snippet("print(1)", tmp_path)
    assert compare(Expectation(expect_stdout="1\n"), stdout, stderr, exit_code).ok
    assert not compare(Expectation(expect_stdout="2\n"), stdout, stderr, exit_code).ok
    assert not compare(Expectation(expect_error="RuntimeError"), stdout, stderr, exit_code).ok
    stdout, stderr, exit_code = run_snippet("raise KeyError(1)", tmp_path)
    assert not compare(Expectation(expect_error="RuntimeError"), stdout, stderr, exit_code).ok


@pytest.mark.parametrize(
    "code",
    [
        "import sys, torch\nprint(torch.ones(2).sum(), sys.argv, __name__, sorted(globals()))",
        "import os, tempfile\nprint(os.getcwd() == os.environ['HOME'], tempfile.gettempdir())",
        "import sys\nprint('out')\nprint('err', file=sys.stderr)\nx = [1]\nx[3]",
        "import sys\nsys.exit(3)",
        "import atexit, threading\natexit.register(print, 'bye')\n"
        "threading.Thread(target=lambda: print('thread')).start()",
    ],
)
def test_the_warm_runner_agrees_with_a_cold_interpreter(code: str, tmp_path: Path) -> None:
    """The item tests run snippets in children of one torch-warm interpreter: what a
    snippet sees and what it leaves (output, traceback, exit status) is a fresh one's."""
    assert run_snippet(code, tmp_path) == run_snippet_cold(code, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("item", _code_items(), ids=lambda item: item.id)
def test_code_item_expectation_holds(item: Item, tmp_path: Path) -> None:
    assert item.code is not None
    stdout, stderr, exit_code = run_snippet(item.code, tmp_path)
    verdict = compare(item, stdout, stderr, exit_code)
    assert verdict.ok, explain(verdict, stderr)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "check"), _checks(), ids=[name for name, _ in _checks()])
def test_check_of_a_claim_holds(name: str, check: Check, tmp_path: Path) -> None:
    stdout, stderr, exit_code = run_snippet(check.code, tmp_path)
    verdict = compare(check, stdout, stderr, exit_code)
    assert verdict.ok, f"{name}\n" + explain(verdict, stderr)
