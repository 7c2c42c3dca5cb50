"""Pack loading: every problem at once, each with file:line and the field at fault."""

from __future__ import annotations

from pathlib import Path

from bot.questions.loader import load_packs
from tests.conftest import TEST_PACKS

BAD = """\
pack: broken
title: Broken pack
items:
  - id: ok-1
    kind: flashcard
    difficulty: easy
    prompt: What?
    answer: That.
  - id: Bad Id
    kind: multiple_choice
    difficulty: medium
    prompt: Pick one
    choices:
      - text: a
        correct: true
      - text: b
        correct: true
  - id: p1
    kind: practice
    difficulty: hard
    prompt: Do it
    code: print(1)
    steps: []
    final_answer: 1
    colour: red
  - id: ok-1
    kind: flashcard
    difficulty: easy
    prompt: Again?
    answer: Yes.
  - id: x
    kind: quiz
    difficulty: easy
  - id: card-2
    kind: flashcard
    difficulty: extreme
    prompt: Hm
    answer: Hm
"""


def _problems(tmp_path: Path, text: str, name: str = "broken.yaml") -> list[str]:
    path = tmp_path / name
    path.write_text(text)
    return [str(p) for p in load_packs(path).problems]


def test_every_problem_is_reported_with_file_line_and_field(tmp_path: Path) -> None:
    problems = _problems(tmp_path, BAD)
    path = tmp_path / "broken.yaml"
    assert problems == [
        f"{path}:9: Bad Id.id: ids are 1-64 lowercase letters, digits, '.', '_' or '-', "
        "e.g. dg-flash-01",
        f"{path}:13: Bad Id.choices: exactly one choice must have `correct: true`, found 2 "
        "(among 2 choices)",
        # In line order (issue 17): the item's own rule first, at the item's line.
        f"{path}:18: p1: an item with code needs a machine-checkable expectation: expect_stdout "
        "(the exact output) or expect_error (an exception type name)",
        f"{path}:23: p1.steps: needs at least 1 entry, found 0",
        f'{path}:24: p1.final_answer: expected text, got int 1; quote it in YAML ("6.0") so it '
        "is kept as written",
        f"{path}:25: p1.colour: unknown field (allowed here: id, difficulty, tags, prompt, code, "
        "expect_stdout, expect_error, show_graph, kind, choices, shuffle, answer, steps, hints, common_mistakes, "
        "final_answer, checks)",
        f"{path}:26: ok-1.id: id 'ok-1' is already used at line 4",
        f"{path}:31: x: `kind` must be one of: flashcard, multiple_choice, practice, open, exercise, typed",
        f"{path}:36: card-2.difficulty: expected one of 'easy', 'medium' or 'hard'",
    ]


def test_a_pack_with_problems_does_not_load_but_others_do(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(BAD)
    (tmp_path / "b.yaml").write_text((TEST_PACKS / "mini.yaml").read_text())
    result = load_packs(tmp_path)
    assert [p.pack.pack for p in result.packs] == ["mini"]
    assert result.errors and all(p.path.endswith("a.yaml") for p in result.errors)


def test_ids_and_names_reused_across_files_are_reported(tmp_path: Path) -> None:
    text = (TEST_PACKS / "mini.yaml").read_text()
    (tmp_path / "one.yaml").write_text(text)
    (tmp_path / "two.yaml").write_text(text)
    problems = [str(p) for p in load_packs(tmp_path).problems]
    assert f"{tmp_path / 'two.yaml'}:1: pack: pack name 'mini' is already used by " in problems[0]
    assert any(
        p.startswith(f"{tmp_path / 'two.yaml'}:4: d-flash-1.id: id 'd-flash-1' is already used at")
        for p in problems
    )


def test_ids_reused_across_files_are_reported_when_a_file_has_errors(tmp_path: Path) -> None:
    text = (TEST_PACKS / "mini.yaml").read_text()
    (tmp_path / "one.yaml").write_text(text.replace("difficulty: easy", "difficulty: hmm", 1))
    (tmp_path / "two.yaml").write_text(text.replace("pack: mini", "pack: other"))
    problems = [str(p) for p in load_packs(tmp_path).problems]
    assert problems[0].startswith(f"{tmp_path / 'one.yaml'}:6: d-flash-1.difficulty: ")
    assert (
        f"{tmp_path / 'two.yaml'}:4: d-flash-1.id: id 'd-flash-1' is already used at "
        + (f"{tmp_path / 'one.yaml'}:4")
        in problems
    )


def test_yaml_syntax_errors_have_a_line(tmp_path: Path) -> None:
    problems = _problems(tmp_path, "pack: x\ntitle: y\nitems:\n  - id: [unclosed\n")
    assert problems == [
        f"{tmp_path / 'broken.yaml'}:4: YAML syntax: the [ list that starts here (column 9) is "
        "never closed (found the end of the file at line 5)"
    ]


def test_an_unclosed_quote_is_reported_where_it_starts(tmp_path: Path) -> None:
    text = (TEST_PACKS / "mini.yaml").read_text()
    text = text.replace("prompt: What does requires_grad=True do?", 'prompt: "What does', 1)
    assert text.count("\n") > 40  # the file goes on long after the quote
    assert _problems(tmp_path, text) == [
        f"{tmp_path / 'broken.yaml'}:8: YAML syntax: the quoted text that starts here (column 13) "
        "runs on to line 34, where YAML then fails (expected <block end>, but found '<scalar>' "
        "at line 34); is its closing quote missing?"
    ]
    # With no other quote to close it, it runs to the end of the file.
    text = text.replace('"3.0"', "3.0").replace('"1.0"', "1.0")
    assert '"' not in text.split('"What does', 1)[1]
    assert _problems(tmp_path, text) == [
        f"{tmp_path / 'broken.yaml'}:8: YAML syntax: the quoted text that starts here (column 13) "
        f"is never closed (found the end of the file at line {text.count(chr(10)) + 1})"
    ]


def test_a_bad_indentation_is_reported_where_it_is(tmp_path: Path) -> None:
    text = (TEST_PACKS / "mini.yaml").read_text()
    text = text.replace("    answer: It makes", "   answer: It makes", 1)
    assert _problems(tmp_path, text) == [
        f"{tmp_path / 'broken.yaml'}:9: YAML syntax: expected <block end>, but found "
        "'<block mapping start>' (in the list that starts at line 4; check the indentation)"
    ]


def test_duplicate_keys_are_an_error_not_a_silent_overwrite(tmp_path: Path) -> None:
    text = (
        (TEST_PACKS / "mini.yaml")
        .read_text()
        .replace("    answer: It makes", "    answer: first\n    answer: It makes", 1)
    )
    problems = _problems(tmp_path, text)
    assert problems == [
        f"{tmp_path / 'broken.yaml'}:10: items[0].answer: key 'answer' appears twice in a mapping"
    ]


def test_not_utf8_and_not_a_mapping(tmp_path: Path) -> None:
    (tmp_path / "bin.yaml").write_bytes(b"pack: \xff\xfe")
    (tmp_path / "list.yaml").write_text("- just\n- a list\n")
    problems = [str(p) for p in load_packs(tmp_path).problems]
    assert problems == [
        f"{tmp_path / 'bin.yaml'}:1: not UTF-8 text (byte 6)",
        f"{tmp_path / 'list.yaml'}:1: a pack is a mapping with `pack`, `title`, `items`",
    ]


def test_an_empty_or_missing_folder_is_reported(tmp_path: Path) -> None:
    assert [str(p) for p in load_packs(tmp_path).problems] == [
        f"{tmp_path}:0: no *.yaml pack files here"
    ]
    missing = tmp_path / "nope"
    assert [str(p) for p in load_packs(missing).problems] == [
        f"{missing}:0: no such file or directory"
    ]


def test_an_id_reused_after_an_invalid_item_is_still_reported(tmp_path: Path) -> None:
    text = (
        "pack: twice\ntitle: Twice\nitems:\n"
        "  - id: a1\n    kind: flashcard\n    difficulty: easy\n    prompt: First?\n"
        "  - id: a1\n    kind: flashcard\n    difficulty: easy\n    prompt: Second?\n"
        "    answer: Yes.\n"
    )
    path = tmp_path / "broken.yaml"
    assert _problems(tmp_path, text) == [
        f"{path}:4: a1.answer: required field is missing",
        f"{path}:8: a1.id: id 'a1' is already used at line 4",
    ]


def test_a_pack_whose_items_are_all_invalid_is_not_called_empty(tmp_path: Path) -> None:
    text = (
        "pack: all-bad\ntitle: All bad\nitems:\n"
        "  - id: b1\n    kind: flashcard\n    difficulty: easy\n    prompt: First?\n"
        "  - id: b2\n    kind: flashcard\n    difficulty: extreme\n    prompt: Second?\n"
        "    answer: Yes.\n"
    )
    path = tmp_path / "broken.yaml"
    assert _problems(tmp_path, text) == [
        f"{path}:4: b1.answer: required field is missing",
        f"{path}:10: b2.difficulty: expected one of 'easy', 'medium' or 'hard'",
    ]


def test_a_pack_without_items_says_so(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    assert _problems(tmp_path, "pack: empty\ntitle: Empty\nitems: []\n") == [
        f"{path}:3: items: needs at least 1 entry, found 0"
    ]
    assert _problems(tmp_path, "pack: empty\ntitle: Empty\n") == [
        f"{path}:1: items: required field is missing"
    ]


def test_a_list_written_as_one_value_is_explained(tmp_path: Path) -> None:
    text = (TEST_PACKS / "mini.yaml").read_text().replace("tags: [autograd]", "tags: autograd", 1)
    assert _problems(tmp_path, text) == [
        f"{tmp_path / 'broken.yaml'}:7: d-flash-1.tags: expected a list, got text 'autograd'; "
        "write one `- entry` per line, or [a, b]"
    ]


def test_an_unquoted_number_among_two_choices_is_one_problem_in_line_order(
    tmp_path: Path,
) -> None:
    """`- text: 2.0` used to add "choices: needs at least 2 entries, found 1", out of order."""
    pack = tmp_path / "p.yaml"
    pack.write_text(
        "pack: p\ntitle: P\nitems:\n"
        "  - id: p-mc-1\n    kind: multiple_choice\n    difficulty: ultra\n"
        "    prompt: What does x.grad hold?\n    choices:\n"
        '      - text: 2.0\n        correct: true\n      - text: "3.0"\n'
    )
    problems = [(p.line, p.field) for p in load_packs(pack).problems]
    assert problems == [(6, "p-mc-1.difficulty"), (9, "p-mc-1.choices[0].text")]
