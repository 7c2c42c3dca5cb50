"""Near-duplicate questions: found across and within packs, reported with both ids and places."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from bot.questions.duplicates import (
    Located,
    duplicate_problems,
    find_near_duplicates,
    located_items,
)
from bot.questions.lint import lint_packs, validate_upload
from bot.questions.loader import load_packs
from bot.questions.schema import Flashcard, MultipleChoice
from tests.conftest import TEST_PACKS

SHIPPED = Path(__file__).resolve().parents[2] / "questions"

EXISTING = """\
pack: existing
title: Existing
items:
  - id: ex-flash-1
    kind: flashcard
    difficulty: easy
    prompt: What is a leaf tensor in PyTorch?
    answer: One autograd did not compute.
  - id: ex-prac-1
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: |
      import torch
      x = torch.tensor(3.0, requires_grad=True)
      (x * x).backward()
      print(x.grad.item())
    expect_stdout: |
      6.0
    answer: "6.0"
    steps: [d(x*x)/dx = 2x]
    final_answer: "6.0"
"""

UPLOAD = """\
pack: upload
title: Upload
items:
  - id: up-flash-1
    kind: flashcard
    difficulty: medium
    prompt: "In PyTorch, what is a leaf tensor?"
    answer: A tensor you created yourself.
  - id: up-prac-1
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: |
      import torch
      x = torch.tensor(3.0, requires_grad=True)
      (x * x).backward()
      print(x.grad.item())
    expect_stdout: |
      6.0
    answer: "6.0"
    steps: [Differentiate.]
    final_answer: "6.0"
  - id: up-prac-2
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: |
      import torch
      x = torch.tensor(3.0, requires_grad=True)
      (x + x).backward()
      print(x.grad.item())
    expect_stdout: |
      2.0
    answer: "2.0"
    steps: [Differentiate.]
    final_answer: "2.0"
  - id: ex-flash-1
    kind: flashcard
    difficulty: easy
    prompt: Why do we zero gradients?
    answer: backward() adds into .grad.
"""


def _card(item_id: str, prompt: str, *, line: int = 1, path: str = "a.yaml") -> Located:
    item = Flashcard(kind="flashcard", id=item_id, difficulty="easy", prompt=prompt, answer="x")  # type: ignore[arg-type]
    return Located(item, path, line)


def _pairs(items: list[Located], **kwargs: object) -> list[tuple[str, str]]:
    found = find_near_duplicates(items, **kwargs)  # type: ignore[arg-type]
    return [(pair.first.item.id, pair.second.item.id) for pair in found]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("What is a leaf tensor?", "what is a leaf tensor"),
        ("What is a leaf tensor in PyTorch?", "In PyTorch, what is a leaf tensor?"),
        ("Why does backward() free the graph?", "Why does `backward()` free the graph?!"),
        ("What does retain_graph=True keep alive?", "What does retain_graph = True keep alive ?"),
        (
            "Explain how gradient accumulation works across micro-batches in PyTorch",
            "Explain how gradient accumulation works across micro batches in PyTorch training",
        ),
    ],
)
def test_rewordings_are_near_duplicates(first: str, second: str) -> None:
    assert _pairs([_card("a", first), _card("b", second)]) == [("a", "b")]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # One prompt contained in a longer, different question.
        (
            "What is a dynamic computation graph in PyTorch?",
            "What is the main advantage of a dynamic computation graph in PyTorch?",
        ),
        ("What does requires_grad=True do?", "What does retain_graph=True keep?"),
        ("Name one advantage of eager mode.", "Name one disadvantage of graph mode."),
    ],
)
def test_different_questions_are_not(first: str, second: str) -> None:
    assert _pairs([_card("a", first), _card("b", second)]) == []


def _loaded(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_generic_prompts_are_compared_by_their_code(tmp_path: Path) -> None:
    folder = tmp_path / "packs"
    folder.mkdir()
    _loaded(folder, "existing.yaml", EXISTING)
    upload = _loaded(tmp_path, "upload.yaml", UPLOAD.replace("  - id: ex-flash-1", "  - id: up-x"))
    new = located_items(load_packs(upload).packs)
    old = located_items(load_packs(folder).packs)
    # Same prompt and same code: a duplicate. Same prompt, `x + x` instead of `x * x`: not.
    assert _pairs(new, against=old) == [("ex-flash-1", "up-flash-1"), ("ex-prac-1", "up-prac-1")]


def test_code_and_no_code_are_never_duplicates() -> None:
    plain = _card("a", "What does this print?")
    mc = MultipleChoice(
        kind="multiple_choice",
        id="b",
        difficulty="easy",  # type: ignore[arg-type]
        prompt="What does this print?",
        code="print(1)",
        expect_stdout="1",
        choices=[{"text": "1", "correct": True}, {"text": "2"}],  # type: ignore[list-item]
    )
    assert _pairs([plain, Located(mc, "b.yaml", 1)]) == []


def test_warning_names_both_ids_and_both_places() -> None:
    first = _card("dg-flash-01", "What is a leaf tensor?", line=4, path="questions/a.yaml")
    second = _card("imp-flash-03", "What is a leaf tensor ?", line=17, path="sheet.txt")
    (problem,) = duplicate_problems([second], against=[first])
    assert problem.severity == "warning"
    assert str(problem) == (
        "sheet.txt:17: warning: imp-flash-03: near-duplicate of dg-flash-01 "
        "(questions/a.yaml:4), similarity 100: 'What is a leaf tensor ?' ~ "
        "'What is a leaf tensor?'"
    )


def test_threshold_is_a_parameter() -> None:
    items = [
        _card("a", "What does requires_grad=True do?"),
        _card("b", "What does requires_grad=False do to a tensor?"),
    ]
    assert _pairs(items) == []
    assert _pairs(items, threshold=70) == [("a", "b")]


def test_pairs_inside_the_existing_packs_are_not_reported_again() -> None:
    old = [_card("a", "What is a leaf?"), _card("b", "What is a leaf")]
    assert _pairs([_card("c", "Something else entirely")], against=old) == []


def test_shipped_and_test_packs_have_no_near_duplicates() -> None:
    items = located_items(load_packs(SHIPPED).packs + load_packs(TEST_PACKS).packs)
    assert duplicate_problems(items) == []


def test_thousands_of_items_take_seconds_not_minutes() -> None:
    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    items: list[Located] = []
    for i in range(4000):
        prompt = " ".join(rng.choice(words) for _ in range(rng.randint(6, 14)))
        items.append(_card(f"i{i}", prompt, line=i + 1))
    items.append(_card("copy", items[1234].item.prompt + "?", line=9999))
    started = time.perf_counter()
    found = _pairs(items)
    elapsed = time.perf_counter() - started
    assert ("i1234", "copy") in found
    assert elapsed < 20, f"{elapsed:.1f}s for 4001 items"


# --- lint and uploads ---------------------------------------------------------------------------


def test_lint_reports_near_duplicates_as_warnings(tmp_path: Path) -> None:
    folder = tmp_path / "packs"
    folder.mkdir()
    _loaded(folder, "a.yaml", EXISTING)
    _loaded(folder, "b.yaml", UPLOAD.replace("ex-flash-1", "up-flash-9"))
    result = lint_packs(folder)
    assert not result.errors
    assert [(p.path, p.line, p.field) for p in result.problems] == [
        (str(folder / "b.yaml"), 4, "up-flash-1"),
        (str(folder / "b.yaml"), 9, "up-prac-1"),
    ]


def test_validate_upload_says_exactly_what_lint_says(tmp_path: Path) -> None:
    folder = tmp_path / "packs"
    folder.mkdir()
    _loaded(folder, "existing.yaml", EXISTING)
    existing = load_packs(folder).packs
    upload_path = folder / "upload.yaml"
    pack, problems = validate_upload(UPLOAD.encode(), str(upload_path), existing=existing)
    upload_path.write_text(UPLOAD)
    linted = [p for p in lint_packs(folder).problems if p.path == str(upload_path)]
    assert problems == linted
    assert pack is None  # ex-flash-1 is taken: an error
    assert [p.severity for p in problems] == ["warning", "warning", "error"]  # in line order
    assert "id 'ex-flash-1' is already used at" in problems[2].message


BROKEN_ITEM = """\
  - id: up-bad-1
    kind: flashcard
    difficulty: extreme
    prompt: Which tensors keep .grad after backward()?
    answer: Leaves.
"""


def test_lint_compares_the_valid_items_of_a_pack_with_errors(tmp_path: Path) -> None:
    folder = tmp_path / "packs"
    folder.mkdir()
    _loaded(folder, "a.yaml", EXISTING)
    _loaded(folder, "b.yaml", UPLOAD.replace("ex-flash-1", "up-flash-9") + BROKEN_ITEM)
    result = lint_packs(folder)
    assert [p.pack.pack for p in result.packs] == ["existing"]  # b.yaml does not load...
    assert [(p.line, p.field, p.severity) for p in result.problems] == [
        (4, "up-flash-1", "warning"),  # ...but its near-duplicates are reported all the same,
        (9, "up-prac-1", "warning"),  # in line order with its errors
        (44, "up-bad-1.difficulty", "error"),
    ]


def test_validate_upload_with_errors_says_exactly_what_lint_says(tmp_path: Path) -> None:
    folder = tmp_path / "packs"
    folder.mkdir()
    _loaded(folder, "existing.yaml", EXISTING)
    existing = load_packs(folder).packs
    text = UPLOAD + BROKEN_ITEM
    upload_path = folder / "upload.yaml"
    pack, problems = validate_upload(text.encode(), str(upload_path), existing=existing)
    upload_path.write_text(text)
    linted = [p for p in lint_packs(folder).problems if p.path == str(upload_path)]
    assert problems == linted
    assert pack is None
    assert [(p.field, p.severity) for p in problems] == [
        ("up-flash-1", "warning"),
        ("up-prac-1", "warning"),
        ("ex-flash-1.id", "error"),
        ("up-bad-1.difficulty", "error"),
    ]


def test_validate_upload_accepts_a_pack_with_only_warnings() -> None:
    existing = load_packs(TEST_PACKS).packs
    raw = UPLOAD.replace("ex-flash-1", "up-flash-9").encode()
    pack, problems = validate_upload(raw, "upload.yaml", existing=existing)
    assert pack is not None
    assert pack.pack.pack == "upload"
    assert all(p.severity == "warning" for p in problems)


def test_validate_upload_replacing_a_file_does_not_collide_with_itself(tmp_path: Path) -> None:
    folder = tmp_path / "packs"
    folder.mkdir()
    _loaded(folder, "existing.yaml", EXISTING)
    existing = load_packs(folder).packs
    pack, problems = validate_upload(EXISTING.encode(), "existing.yaml", existing=existing)
    assert pack is not None
    assert problems == []


def test_validate_upload_reports_schema_problems_with_lines() -> None:
    pack, problems = validate_upload(b"pack: x\ntitle: X\nitems:\n  - id: a\n", "x.yaml")
    assert pack is None
    assert str(problems[0]).startswith("x.yaml:4: a: `kind` must be one of")


def test_lint_command_prints_warnings_and_keeps_exit_code_zero(tmp_path: Path) -> None:
    from tests.test_cli import studybot

    folder = tmp_path / "packs"
    folder.mkdir()
    _loaded(folder, "a.yaml", EXISTING)
    _loaded(folder, "b.yaml", UPLOAD.replace("ex-flash-1", "up-flash-9"))
    proc = studybot("questions", "lint", str(folder))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0].startswith(f"{folder / 'b.yaml'}:4: warning: up-flash-1: near-duplicate of ")
    assert f"ex-flash-1 ({folder / 'a.yaml'}:4)" in lines[0]
    assert lines[-1] == "ok: 2 pack(s), 6 item(s)"
