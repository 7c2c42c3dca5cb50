"""Importers: each format becomes a pack that lints clean, and nothing is dropped silently.

The fixtures in tests/data/import/ are written for these tests, one or two per format, with
the traps real exports have (unmarked answers, wrong claims, ragged rows, HTML entities).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from pydantic import TypeAdapter

from bot.questions.importers import (
    MODEL_ANSWER_PLACEHOLDER,
    Format,
    FormatUnknown,
    ImportResult,
    detect_format,
    import_bytes,
    to_yaml,
)
from bot.questions.importers.opentdb import json_element_lines
from bot.questions.loader import load_pack_text, load_packs
from bot.questions.schema import Item

DATA = Path(__file__).resolve().parents[1] / "data" / "import"
_ITEM: TypeAdapter[Item] = TypeAdapter(Item)


def _import(name: str, **options: object) -> ImportResult:
    path = DATA / name
    return import_bytes(path.read_bytes(), str(path), **options)  # type: ignore[arg-type]


def _items(result: ImportResult) -> dict[str, dict[str, object]]:
    return {item.id: item.data for item in result.items}


def _messages(result: ImportResult, severity: str = "error") -> list[str]:
    return [str(p) for p in result.problems if p.severity == severity]


def _correct(item: dict[str, object]) -> str:
    choices = item["choices"]
    assert isinstance(choices, list)
    return next(str(c["text"]) for c in choices if c.get("correct"))


# --- detection ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("autograd-sheet.txt", Format.CHEATSHEET),
        ("broken-sheet.txt", Format.CHEATSHEET),
        ("quizlet-terms.tsv", Format.TSV),
        ("spreadsheet-mc.csv", Format.CSV),
        ("mixed-noheader.csv", Format.CSV),
        ("opentdb-computers.json", Format.OPENTDB),
        ("opentdb-computers.yaml", Format.OPENTDB),
    ],
)
def test_every_fixture_is_detected(name: str, expected: Format) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    assert detect_format(text, name)[0] is expected


@pytest.mark.parametrize(
    ("name", "renamed", "expected", "why"),
    [
        ("autograd-sheet.txt", "notes.md", Format.CHEATSHEET, "cheat-sheet layout"),
        ("quizlet-terms.tsv", "export.txt", Format.TSV, "tab-separated"),
        ("mixed-noheader.csv", "export.txt", Format.CSV, "';'-separated"),
        ("opentdb-computers.json", "api-response", Format.OPENTDB, "JSON"),
        ("opentdb-computers.yaml", "trivia.txt", Format.OPENTDB, "OpenTDB YAML (a `results:`"),
    ],
)
def test_content_decides_when_the_name_does_not(
    name: str, renamed: str, expected: Format, why: str
) -> None:
    found, reason = detect_format((DATA / name).read_text(encoding="utf-8"), renamed)
    assert found is expected
    assert why in reason


def test_opentdb_yaml_without_its_extension_imports_as_with_it() -> None:
    text = (DATA / "opentdb-computers.yaml").read_text(encoding="utf-8")
    renamed = import_bytes(text.encode(), "trivia.txt", pack="opentdb-computers")
    assert renamed.format is Format.OPENTDB
    assert _items(renamed) == _items(_import("opentdb-computers.yaml"))
    bare = text.split("results:\n", 1)[1]  # the list alone, as some tools save it
    found, why = detect_format(bare, "trivia")
    assert (found, why) == (
        Format.OPENTDB,
        "the content is OpenTDB YAML (a list of question/correct_answer entries)",
    )
    broken = text.replace('correct_answer: "~"', 'correct_answer: "~', 1)
    assert detect_format(broken, "trivia")[0] is Format.OPENTDB
    assert import_bytes(broken.encode(), "trivia").errors[0].message.startswith("YAML syntax")


def test_yaml_that_is_not_opentdb_is_not_taken_for_it() -> None:
    with pytest.raises(FormatUnknown):
        detect_format("notes:\n  - question: what?\n    answer: that\n", "notes.txt")


def test_unknown_format_says_what_to_pass() -> None:
    with pytest.raises(FormatUnknown, match=r"notes\.txt: cannot tell the format.*--format"):
        detect_format("just a paragraph of prose\nand another line\n", "notes.txt")


def test_a_studybot_pack_is_not_imported_again() -> None:
    text = (Path(__file__).parents[1] / "data" / "packs" / "mini.yaml").read_text()
    with pytest.raises(FormatUnknown, match="already a studybot pack"):
        detect_format(text, "mini.yaml")


# --- every format round-trips: the YAML lints clean and loads back to the same items ------------


@pytest.mark.parametrize(
    "name",
    [
        "autograd-sheet.txt",
        "broken-sheet.txt",
        "quizlet-terms.tsv",
        "spreadsheet-mc.csv",
        "mixed-noheader.csv",
        "opentdb-computers.json",
        "opentdb-computers.yaml",
    ],
)
def test_written_yaml_lints_clean_and_round_trips(name: str, tmp_path: Path) -> None:
    result = _import(name)
    out = tmp_path / f"{result.pack}.yaml"
    out.write_text(to_yaml(result), encoding="utf-8")
    loaded = load_packs(out)
    assert not loaded.problems, "\n".join(map(str, loaded.problems))
    (pack,) = loaded.packs
    assert pack.pack.pack == result.pack
    assert [item.model_dump() for item in pack.pack.items] == [
        _ITEM.validate_python(item.data).model_dump() for item in result.items
    ]


def test_written_yaml_uses_block_scalars_and_says_where_items_came_from() -> None:
    text = to_yaml(_import("autograd-sheet.txt"))
    assert "    code: |\n      import torch\n      a = torch.tensor(4.0" in text
    assert "    expect_stdout: |\n      8.0\n" in text
    assert "  # from autograd-sheet.txt:122\n" in text
    assert "  # warning: model_answer: needs a model answer" in text
    data = yaml.safe_load(text)
    assert list(data["items"][0])[:3] == ["id", "kind", "difficulty"]


# --- cheat sheet --------------------------------------------------------------------------------


def test_cheatsheet_counts_titles_and_ids() -> None:
    result = _import("autograd-sheet.txt")
    assert result.title == "Autograd essentials"
    assert result.pack == "autograd-sheet"
    assert result.counts() == Counter(
        {"practice": 7, "flashcard": 2, "multiple_choice": 2, "open": 2}
    )
    assert [item.id for item in result.items][:3] == [
        "autograd-sheet-flash-01",
        "autograd-sheet-flash-02",
        "autograd-sheet-mc-01",
    ]
    assert not result.errors
    again = _import("autograd-sheet.txt")
    assert [item.id for item in again.items] == [item.id for item in result.items]


def test_cheatsheet_levels_become_difficulties() -> None:
    items = _items(_import("autograd-sheet.txt"))
    assert items["autograd-sheet-flash-01"]["difficulty"] == "easy"  # beginner
    assert items["autograd-sheet-flash-02"]["difficulty"] == "hard"  # advanced
    assert items["autograd-sheet-prac-04"]["difficulty"] == "hard"


def test_cheatsheet_mc_answer_comes_from_the_explanation() -> None:
    result = _import("autograd-sheet.txt")
    items = _items(result)
    assert _correct(items["autograd-sheet-mc-01"]) == "optimizer.zero_grad()"
    assert not [p for p in result.warnings if p.field.startswith("autograd-sheet-mc-01")]


def test_cheatsheet_ambiguous_mc_is_reported_not_guessed_silently() -> None:
    result = _import("autograd-sheet.txt")
    (warning,) = [p for p in result.warnings if p.field == "autograd-sheet-mc-02.choices"]
    assert warning.line == 39  # the explanation's line
    assert warning.message == (
        "the correct option is ambiguous: the explanation matches the options "
        "(A 100, B 100, C 53, D 35) without a clear winner; marked A, check it"
    )


def test_cheatsheet_open_prompts_get_a_placeholder_and_a_warning() -> None:
    result = _import("autograd-sheet.txt")
    items = _items(result)
    assert items["autograd-sheet-open-01"]["model_answer"] == MODEL_ANSWER_PLACEHOLDER
    assert items["autograd-sheet-open-01"]["hint"] == (
        "Think about whether you need one value or a whole region of code."
    )
    needs = [p for p in result.warnings if "needs a model answer" in p.message]
    assert [(p.field, p.line) for p in needs] == [
        ("autograd-sheet-open-01.model_answer", 41),
        ("autograd-sheet-open-02.model_answer", 45),
    ]


def test_cheatsheet_practice_keeps_every_part() -> None:
    items = _items(_import("autograd-sheet.txt"))
    first = items["autograd-sheet-prac-01"]
    assert first["steps"] == [
        "Separate the roles: backward() computes gradients; the optimizer's step() uses them "
        "to update weights.",
        "Rule out the others: Zeroing is zero_grad(), and nothing checks for NaN by default.",
        "Quick check: backward = gradients, step = update",
    ]
    assert first["hints"] == ["Who changes the weights, backward() or the optimizer?"]
    assert first["common_mistakes"] == [
        "Thinking backward() also applies the update",
        "Mixing up backward() and zero_grad()",
    ]
    assert first["final_answer"] == (
        "It computes the gradient of the loss for every leaf that requires grad."
    )
    assert _correct(first) == first["final_answer"]
    assert "code" not in first


def test_cheatsheet_claims_become_expectations() -> None:
    items = _items(_import("autograd-sheet.txt"))
    # "What does this code print?" -> the claimed final answer is the output.
    assert items["autograd-sheet-prac-02"]["expect_stdout"] == "8.0\n"
    assert items["autograd-sheet-prac-03"]["expect_stdout"] == "5.0\n"  # a wrong claim, kept
    assert str(items["autograd-sheet-prac-03"]["code"]).startswith("import torch\nw = ")
    assert "    (w * 5).backward()\n" in str(items["autograd-sheet-prac-03"]["code"])
    # A final answer that names an exception.
    assert items["autograd-sheet-prac-04"]["expect_error"] == "RuntimeError"
    # The answer is a snippet among the options.
    assert items["autograd-sheet-prac-05"]["code"] == (
        "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)\n"
    )
    assert items["autograd-sheet-prac-05"]["expect_stdout"] == ""
    # "... so its gradient is None" about a snippet that ends with print(...).
    assert items["autograd-sheet-prac-06"]["expect_stdout"] == "None\n"


def test_cheatsheet_snippet_without_a_checkable_claim_stays_in_the_prompt() -> None:
    result = _import("autograd-sheet.txt")
    item = _items(result)["autograd-sheet-prac-07"]
    assert "code" not in item
    assert "```python\nimport torch\nx = torch.zeros(2" in str(item["prompt"])
    (warning,) = [p for p in result.warnings if p.field == "autograd-sheet-prac-07.code"]
    assert warning.line == 253
    assert "needs a human" in warning.message


def test_cheatsheet_problems_have_source_lines_and_nothing_is_lost() -> None:
    result = _import("broken-sheet.txt")
    path = DATA / "broken-sheet.txt"
    assert _messages(result) == [
        f"{path}:3: could not parse before the 'Recall & Review' section: 'This line is not "
        "part of any section.' (expected a card, a multiple-choice block or a practice problem)",
        f"{path}:7: level 'beginner' is not followed by a question and an answer (expected: "
        "level, question, answer, separated by blank lines)",
        f"{path}:15: broken-sheet-mc-01.choices: no explanation follows the options, and the "
        "sheet marks no correct option, so the answer cannot be derived; this item was not "
        "imported",
        f"{path}:33: broken-sheet-prac-01.choices: options are B, C; expected A, B in order; "
        "this item was not imported",
        f"{path}:55: broken-sheet-prac-02.final_answer: no 'Final Answer:' in the solution; "
        "this item was not imported",
        f"{path}:77: broken-sheet-prac-03.final_answer: the final answer points at option E, "
        "but the options are A, B; this item was not imported",
        f"{path}:89: could not parse in practice problem 4: 'stray text after a blank line' "
        "(expected a level, an option 'A. ...', 'Solution', a numbered step, 'Hint:' or "
        "'Common Mistakes:')",
    ]
    assert [item.id for item in result.items] == [
        "broken-sheet-flash-01",
        "broken-sheet-flash-02",
        "broken-sheet-prac-04",
    ]


def test_cheatsheet_answer_text_disagreeing_with_its_letter_is_reported() -> None:
    text = (
        "Topic - Cheat Sheet & Quick Revision\n\nPractice\n\n1. Pick the float.\n\neasy\n\n"
        "A. float32 tensors\n\nB. int64 tensors\n\nSolution\n\n1. Step 1: Think\n\n   Floats.\n\n"
        "2. Final Answer:\n\n   integer tensors of 64 bits -> Option A\n"
    )
    result = import_bytes(text.encode(), "t.txt")
    (warning,) = result.warnings
    assert warning.line == 19
    assert "does not read like option A" in warning.message
    assert _correct(result.items[0].data) == "float32 tensors"


def test_cheatsheet_card_with_an_unknown_level_is_still_a_card() -> None:
    text = (
        "Strides - Cheat Sheet & Quick Revision\n\nRecall & Review\n\n"
        "beginner\n\nWhat is a tensor?\n\nAn n-dimensional array.\n\n"
        "expert\n\nWhat is a stride?\n\nThe step in memory per dimension.\n\n"
        "How would you explain views to a teammate?\n\nStart from storage.\n"
    )
    result = import_bytes(text.encode(), "strides.txt")
    items = _items(result)
    assert items["strides-flash-02"] == {
        "id": "strides-flash-02",
        "kind": "flashcard",
        "difficulty": "medium",
        "prompt": "What is a stride?",
        "answer": "The step in memory per dimension.",
    }
    assert [item["prompt"] for item in items.values() if item["kind"] == "open"] == [
        "How would you explain views to a teammate?"
    ]
    assert _messages(result, "warning")[0] == (
        "strides.txt:11: warning: strides-flash-02.difficulty: 'expert' is not a level the "
        "importer knows (beginner, basic, easy, intermediate, medium, advanced, hard); the card "
        "under it was imported as a flashcard with difficulty medium"
    )
    assert not result.errors


def test_cheatsheet_practice_with_an_unknown_level_keeps_it_out_of_the_snippet() -> None:
    text = (
        "Topic - Cheat Sheet & Quick Revision\n\nPractice\n\n1. What does this print?\n\n"
        "import torch\nprint(torch.tensor([1, 2]).dtype)\n\nexpert\n\n"
        "Solution\n\n1. Step 1: Infer\n\n   Ints become int64.\n\n"
        "2. Final Answer:\n\n   torch.int64\n"
    )
    result = import_bytes(text.encode(), "t.txt")
    (item,) = result.items
    assert item.data["code"] == "import torch\nprint(torch.tensor([1, 2]).dtype)\n"
    assert item.data["difficulty"] == "medium"
    assert _messages(result, "warning") == [
        "t.txt:10: warning: t-prac-01.difficulty: 'expert' is not a level the importer knows "
        "(beginner, basic, easy, intermediate, medium, advanced, hard); set to medium"
    ]


def test_cheatsheet_final_answer_naming_a_missing_option_is_reported() -> None:
    problem = (
        "Topic - Cheat Sheet & Quick Revision\n\nPractice\n\n1. What is six times seven?\n\n"
        "easy\n\n{options}Solution\n\n1. Step 1: Multiply\n\n   6 * 7.\n\n"
        "2. Final Answer:\n\n   42 -> Option Z\n"
    )
    without = import_bytes(problem.format(options="").encode(), "t.txt")
    (item,) = without.items
    assert item.data["answer"] == item.data["final_answer"] == "42"
    assert _messages(without, "warning") == [
        "t.txt:15: warning: t-prac-01.final_answer: the final answer points at option Z, but "
        "this problem has no options; kept '42' as its answer, check it"
    ]
    with_options = import_bytes(problem.format(options="A. 42\n\nB. 24\n\n").encode(), "t.txt")
    assert not with_options.items
    assert _messages(with_options) == [
        "t.txt:19: t-prac-01.final_answer: the final answer points at option Z, but the options "
        "are A, B; this item was not imported"
    ]


# --- CSV / TSV ----------------------------------------------------------------------------------


def test_quizlet_tsv_becomes_flashcards() -> None:
    result = _import("quizlet-terms.tsv")
    items = _items(result)
    assert result.format is Format.TSV
    assert items["quizlet-terms-flash-01"]["prompt"] == "leaf tensor"
    assert items["quizlet-terms-flash-01"]["answer"] == (
        "A tensor autograd did not compute from other tensors; its grad_fn is None."
    )
    assert items["quizlet-terms-flash-04"]["prompt"] == "multi\nline term"  # kept as written
    assert [(p.line, p.message[:28]) for p in result.errors] == [
        (6, "a row with 1 filled cell(s):")
    ]


def test_spreadsheet_correct_as_letter_index_or_text() -> None:
    result = _import("spreadsheet-mc.csv")
    items = _items(result)
    first = items["spreadsheet-mc-mc-01"]
    assert _correct(first) == "loss.backward()"  # "A"
    assert first["difficulty"] == "easy"
    assert first["explanation"] == "backward() fills .grad."
    assert _correct(items["spreadsheet-mc-mc-03"]) == "One you created"  # by text
    assert _correct(items["spreadsheet-mc-mc-05"]) == "Sets .grad to None"  # "1"
    assert len(items["spreadsheet-mc-mc-02"]["choices"]) == 3  # type: ignore[arg-type]


def test_spreadsheet_problems_name_the_row_the_field_and_what_was_expected() -> None:
    result = _import("spreadsheet-mc.csv")
    path = DATA / "spreadsheet-mc.csv"
    assert _messages(result) == [
        f"{path}:5: spreadsheet-mc-mc-04.correct: 'Z' is not one of the choices: expected a "
        "letter (A-C), an index (1-3) or a choice's text; this row was not imported"
    ]
    assert _messages(result, "warning") == [
        f"{path}:3: warning: spreadsheet-mc-mc-02.correct: '2' is the text of choice A and "
        "also points at choice B as a letter or number; took the text, check it",
        f"{path}:6: warning: spreadsheet-mc-mc-05.difficulty: 'extreme' is not a difficulty "
        "(expected easy, medium or hard); set to medium",
    ]


def test_headerless_csv_mixes_flashcards_and_multiple_choice() -> None:
    result = _import("mixed-noheader.csv")
    assert result.counts() == Counter({"flashcard": 2, "multiple_choice": 1})
    mc = _items(result)["mixed-noheader-mc-01"]
    assert _correct(mc) == "float32"
    assert [(p.line, p.severity) for p in result.problems] == [(4, "error"), (1, "warning")]


def test_forced_tsv_on_a_txt_export() -> None:
    text = "autograd\tRecords operations.\nleaf\tA tensor you made.\n"
    result = import_bytes(text.encode(), "export.txt", format=Format.TSV)
    assert result.counts() == Counter({"flashcard": 2})


RAGGED = (
    "autograd,records operations\n"
    "no delimiter on this line\n"
    "leaf,a tensor you created\n"
    "just words here too\n"
    "Which dtype can require grad?,int64,float32,B\n"
    "and one more stray line\n"
)


def test_csv_with_many_bad_rows_reports_each_and_keeps_the_good_ones() -> None:
    result = import_bytes(RAGGED.encode(), "ragged.csv")
    assert result.counts() == Counter({"flashcard": 2, "multiple_choice": 1})
    assert _correct(_items(result)["ragged-mc-01"]) == "float32"
    expected = "a row with 1 filled cell(s): expected 2 (term, definition) or at least 4"
    assert [(p.line, p.message[: len(expected)]) for p in result.errors] == [
        (2, expected),
        (4, expected),
        (6, expected),
    ]
    assert _messages(result, "warning")[0] == (
        "ragged.csv:1: warning: the delimiter is unclear: comma splits 3 of the first 6 rows "
        "into cells, more than any other, so the file was read as comma-separated; each row "
        "that does not fit is reported"
    )


def test_an_unsure_csv_prefers_the_comma() -> None:
    text = "term,a definition\nother;thing\nlonely\n"
    result = import_bytes(text.encode(), "tie.csv")
    assert [item.data["prompt"] for item in result.items] == ["term"]
    assert [p.line for p in result.errors] == [2, 3]


def test_a_csv_file_prefers_the_comma_when_semicolons_split_as_well() -> None:
    text = "leaf,made by you; not computed\ngrad_fn,the node; it made the tensor\n"
    assert _items(import_bytes(text.encode(), "notes.csv"))["notes-flash-01"] == {
        "id": "notes-flash-01",
        "kind": "flashcard",
        "difficulty": "medium",
        "prompt": "leaf",
        "answer": "made by you; not computed",
    }


def test_a_spreadsheet_line_break_inside_a_cell_stays_in_the_cell() -> None:
    # Spreadsheets write a line break typed inside a cell as \x0b; it is not a new row.
    text = "leaf,made by you\x0bnot computed\ngrad_fn,the node that made it\nbad row\n"
    result = import_bytes(text.encode(), "sheet.csv")
    items = _items(result)
    assert [item["prompt"] for item in items.values()] == ["leaf", "grad_fn"]
    assert str(items["sheet-flash-01"]["answer"]).startswith("made by you")
    assert str(items["sheet-flash-01"]["answer"]).endswith("not computed")
    assert [p.line for p in result.errors] == [3]  # the line an editor shows


def test_forced_csv_means_comma_separated() -> None:
    text = "leaf,made by you; not computed\ngrad_fn,the node; it made the tensor\n"
    assert detect_format(text, "export.txt") == (Format.CSV, "every row has ';'-separated cells")
    result = import_bytes(text.encode(), "export.txt", format=Format.CSV)
    assert [item.data["prompt"] for item in result.items] == ["leaf", "grad_fn"]
    assert not result.errors


def test_a_header_row_table_says_what_each_bad_row_lacks() -> None:
    text = (
        "term,definition,choice1,choice2,correct\n"
        ",no term here,,,\n"
        "a lone cell\n"
        "autograd,records operations,,,\n"
        "Which is a float?,,float32,int64,A\n"
        "Pick one,,only,,A\n"
    )
    result = import_bytes(text.encode(), "header.csv")
    assert result.counts() == Counter({"flashcard": 1, "multiple_choice": 1})
    assert [(p.line, p.field, p.message) for p in result.errors] == [
        (2, "header-flash-01.prompt", "the term cell is empty; this row was not imported"),
        (3, "definition", "this row has neither a definition nor choices; it was not imported"),
        (
            6,
            "choices",
            "1 choice cell(s) filled in; a multiple-choice row needs at least 2 and a correct "
            "answer; this row was not imported",
        ),
    ]


def test_an_unclosed_quote_is_reported_and_the_lines_after_it_still_imported() -> None:
    rows = "".join(f"term{n},definition {n}\n" for n in range(1, 5))
    text = rows + '"unterminated,quote here\nafter1,def after1\nafter2,def after2\n'
    result = import_bytes(text.encode(), "quote.csv")
    assert _messages(result) == [
        "quote.csv:5: an opening quote is never closed, so lines 5-7 would be one cell; this "
        "row was not imported, the lines after it were read as rows (close the quote, or write "
        'a quote inside a quoted cell as "")'
    ]
    assert [item.data["prompt"] for item in result.items][-2:] == ["after1", "after2"]
    assert [item.line for item in result.items][-2:] == [6, 7]


def test_a_quote_closed_lines_later_by_another_cell_is_reported() -> None:
    text = '"opened here,def\nt2,d2\nt3,"d3"\nt4,d4\n'
    result = import_bytes(text.encode(), "late.csv")
    assert _messages(result) == [
        "late.csv:1: a quote opened on this line is only closed on line 3, and then ',' "
        "expected after '\"', so lines 1-3 would be one cell; this row was not imported, the "
        "lines after it were read as rows (close the quote, or write a quote inside a quoted "
        'cell as "")'
    ]
    assert [(item.line, item.data["prompt"]) for item in result.items] == [
        (2, "t2"),
        (3, "t3"),
        (4, "t4"),
    ]


def test_quoted_cells_that_are_fine_or_nearly_fine_are_imported() -> None:
    text = '"multi\nline term",its definition\nleaf,"made" by you\n'
    result = import_bytes(text.encode(), "quotes.csv")
    assert [(item.line, item.data["prompt"], item.data["answer"]) for item in result.items] == [
        (1, "multi\nline term", "its definition"),
        (3, "leaf", "made by you"),
    ]
    assert not result.errors
    assert _messages(result, "warning")[0] == (
        "quotes.csv:3: warning: a quoted cell has text after its closing quote (',' expected "
        "after '\"'); read the row as 2 cell(s), check it"
    )


# --- OpenTDB ------------------------------------------------------------------------------------


def test_opentdb_json_unescapes_and_orders_choices_stably() -> None:
    result = _import("opentdb-computers.json")
    items = _items(result)
    first = items["opentdb-computers-mc-01"]
    assert first["prompt"] == 'In PyTorch, what does "autograd" compute?'
    assert first["tags"] == ["science-computers"]
    assert first["difficulty"] == "medium"
    assert _correct(first) == "Gradients"
    assert sorted(c["text"] for c in first["choices"]) == [  # type: ignore[union-attr]
        "Batch sizes",
        "Gradients",
        "Learning rates",
        "Loss values",
    ]
    boolean = items["opentdb-computers-mc-02"]
    assert boolean["prompt"] == 'Python\'s "if" can change which operations autograd records.'
    assert [c["text"] for c in boolean["choices"]] == ["True", "False"]  # type: ignore[union-attr]
    again = _items(_import("opentdb-computers.json"))
    assert again == items


def test_opentdb_bad_entries_are_reported_at_their_line() -> None:
    json_result = _import("opentdb-computers.json")
    assert [(p.line, p.field) for p in json_result.errors] == [(20, "results[2].type")]
    yaml_result = _import("opentdb-computers.yaml")
    assert [(p.line, p.message) for p in yaml_result.errors] == [
        (15, "missing field(s): type, correct_answer, incorrect_answers")
    ]
    assert yaml_result.items[0].data["prompt"] == (
        "Which key usually opens the console in PC games & mods?"
    )


def test_opentdb_base64_encoding_is_decoded() -> None:
    import base64

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    entry = {
        "type": b64("boolean"),
        "difficulty": b64("hard"),
        "category": b64("Science: Computers"),
        "question": b64("A leaf has no grad_fn."),
        "correct_answer": b64("True"),
        "incorrect_answers": [b64("False")],
    }
    result = import_bytes(json.dumps({"results": [entry]}).encode(), "b64.json")
    assert result.items[0].data["prompt"] == "A leaf has no grad_fn."
    assert result.items[0].data["difficulty"] == "hard"


def test_json_element_lines_ignore_brackets_inside_strings() -> None:
    text = '{"note": "[not, {an, array}]",\n "results": [\n  {"q": "a]"},\n\n  {"q": "\\"}"}\n]}'
    assert json_element_lines(text) == [3, 5]
    assert json_element_lines('[\n{"a": 1},\n {"b": 2}]') == [2, 3]


# --- bad bytes ----------------------------------------------------------------------------------


def test_text_that_is_not_utf8_is_one_clear_problem() -> None:
    result = import_bytes(b"term\tdefinition\ncaf\xe9\tcoffee\n", "cafe.tsv")
    assert [str(p) for p in result.problems] == [
        "cafe.tsv:2: not UTF-8 text (byte 19); save the file as UTF-8"
    ]
    assert not result.items


def test_utf16_excel_export_is_read() -> None:
    raw = "term\tdefinition\nleaf\tA tensor you made.\n".encode("utf-16")
    result = import_bytes(raw, "excel.txt", format=Format.TSV)
    assert result.counts() == Counter({"flashcard": 1})


def test_generated_pack_validates_with_the_loader_without_warnings() -> None:
    """The same check `questions import` makes before it writes anything."""
    result = _import("autograd-sheet.txt")
    loaded, problems = load_pack_text(to_yaml(result).encode(), "out.yaml")
    assert loaded is not None
    assert problems == []


def test_schema_limits_are_reported_at_the_source_row() -> None:
    text = "term," + "x" * 2100 + "\nq,a,b,c,A\nq2,same,Same,b,A\n"
    result = import_bytes(text.encode(), "long.csv")
    assert [str(p) for p in result.problems] == [
        "long.csv:1: long-flash-01.answer: is too long (2100 characters; at most 2000); this "
        "item was not imported",
        "long.csv:3: long-mc-02.choices: two choices have the same text; this item was not "
        "imported",
        "long.csv:1: warning: difficulty: 1 item(s) have no difficulty column; imported as medium",
    ]
    assert [item.id for item in result.items] == ["long-mc-01"]


def test_opentdb_yaml_syntax_error_is_reported_where_the_quote_opens() -> None:
    text = (DATA / "opentdb-computers.yaml").read_text()
    text = text.replace('correct_answer: "~"', 'correct_answer: "~', 1)
    result = import_bytes(text.encode(), "trivia.yaml")
    assert [str(p) for p in result.problems] == [
        "trivia.yaml:7: YAML syntax: the quoted text that starts here (column 21) runs on to "
        "line 8, where YAML then fails (expected <block end>, but found '<scalar>' at line 8); "
        "is its closing quote missing?"
    ]


def test_a_row_with_more_cells_than_the_header_is_reported_not_resplit(tmp_path: Path) -> None:
    """An unquoted comma in a cell used to become prompt `np.zeros((2` and answer `3)).shape`."""
    source = tmp_path / "notes.csv"
    source.write_text(
        'question,answer\nnp.zeros((2,3)).shape,"(2, 3)"\nWhat is a leaf?,A tensor you created\n'
    )
    result = import_bytes(source.read_bytes(), str(source))
    assert [item.data["prompt"] for item in result.items] == ["What is a leaf?"]
    errors = [p for p in result.problems if p.severity == "error"]
    assert [(p.line, p.message) for p in errors] == [
        (
            2,
            "this row has 3 cells but the header names 2 columns; a delimiter inside a cell "
            'needs the cell quoted (e.g. "np.zeros((2,3)).shape"); the row was not imported',
        )
    ]


NOTES = """\
Q: What does backward() fill?
A: The .grad of every leaf
that requires grad.

question: What does detach() return?
answer: A tensor cut off from the graph

Q: A question nobody answered
"""


def test_q_and_a_notes_are_detected_and_become_flashcards(tmp_path: Path) -> None:
    """The most common notes people have used to fail with "cannot tell the format"."""
    source = tmp_path / "notes.txt"
    source.write_text(NOTES)
    result = import_bytes(source.read_bytes(), str(source))
    assert result.format is Format.NOTES
    assert [(i.line, i.data["prompt"], i.data["answer"]) for i in result.items] == [
        (1, "What does backward() fill?", "The .grad of every leaf that requires grad."),
        (5, "What does detach() return?", "A tensor cut off from the graph"),
    ]
    assert all(i.data["kind"] == "flashcard" for i in result.items)
    errors = [(p.line, p.message) for p in result.problems if p.severity == "error"]
    assert errors == [(8, "this question has no `A:` line; it was not imported")]
    loaded, problems = load_pack_text(to_yaml(result).encode(), "notes.yaml")
    assert loaded is not None and not [p for p in problems if p.severity == "error"]


def test_term_definition_lines_are_detected_and_become_flashcards(tmp_path: Path) -> None:
    source = tmp_path / "terms.txt"
    source.write_text(
        "leaf tensor - a tensor created by the user\n"
        "grad_fn \u2013 the node that made a tensor\n"
        "retain_graph \u2014 keep saved values for a second backward\n"
    )
    result = import_bytes(source.read_bytes(), str(source))
    assert result.format is Format.NOTES
    assert [(i.data["prompt"], i.data["answer"]) for i in result.items] == [
        ("leaf tensor", "a tensor created by the user"),
        ("grad_fn", "the node that made a tensor"),
        ("retain_graph", "keep saved values for a second backward"),
    ]
