"""The item examples in docs/PACKS.md are valid items, and their snippets do what they say.

Authors copy these examples; a stale one would teach the wrong format or a wrong output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.questions.expectations import compare
from bot.questions.loader import load_pack_text
from bot.questions.schema import Check, Item, prose_checks
from tests.questions.snippets import explain, run_snippet

DOC = Path(__file__).resolve().parents[2] / "docs" / "PACKS.md"
_YAML_BLOCK = re.compile(r"```yaml\n(.*?)```", re.DOTALL)


def _item_examples() -> list[str]:
    blocks = _YAML_BLOCK.findall(DOC.read_text(encoding="utf-8"))
    return [block for block in blocks if block.startswith("  - id: ")]


def _items() -> list[Item]:
    examples = _item_examples()
    text = "pack: docs-examples\ntitle: Examples\nitems:\n" + "".join(examples)
    loaded, problems = load_pack_text(text.encode(), str(DOC))
    assert not problems, "\n".join(str(problem) for problem in problems)
    assert loaded is not None
    return list(loaded.pack.items)


def test_doc_has_an_example_of_every_kind() -> None:
    kinds = {item.kind for item in _items()}
    assert kinds == {"flashcard", "multiple_choice", "practice", "open", "exercise", "typed"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "item", [item for item in _items() if item.code is not None], ids=lambda item: item.id
)
def test_doc_example_snippet_expectation_holds(item: Item, tmp_path: Path) -> None:
    assert item.code is not None
    stdout, stderr, exit_code = run_snippet(item.code, tmp_path)
    verdict = compare(item, stdout, stderr, exit_code)
    assert verdict.ok, explain(verdict, stderr)


def test_doc_has_an_example_of_a_check() -> None:
    assert any(prose_checks(item) for item in _items())


@pytest.mark.slow
@pytest.mark.parametrize(
    "check",
    [check for item in _items() for check in prose_checks(item)],
    ids=lambda check: check.claim.replace(" ", ""),
)
def test_doc_example_check_holds(check: Check, tmp_path: Path) -> None:
    stdout, stderr, exit_code = run_snippet(check.code, tmp_path)
    verdict = compare(check, stdout, stderr, exit_code)
    assert verdict.ok, explain(verdict, stderr)
