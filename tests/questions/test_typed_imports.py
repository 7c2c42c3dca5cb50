"""Typed items in and out of the importers: a CSV/TSV with an ``accept`` column, OpenTDB's
free-text questions, and Anki's "type in the answer" notes (a studybot export round-trips);
a key the schema cannot trust is reported at its line, not imported."""

from __future__ import annotations

import json
from pathlib import Path

import genanki

from bot.questions.anki_export import pack_apkg
from bot.questions.importers import Format, ImportResult, import_bytes
from bot.questions.loader import load_packs
from tests.adapters.test_typed_answers import TYPED_PACKS


def _items(result: ImportResult) -> dict[str, dict[str, object]]:
    return {item.id: item.data for item in result.items}


def test_a_table_with_an_accept_column_becomes_typed_items() -> None:
    table = (
        "question\taccept\twrong\ttags\n"
        "Which attribute of a leaf holds its gradient?\tx.grad|grad\tgrad_fn|y.grad\tleaf\n"
        "d/dx of 3x^2 at x = 2?\t12|12.0\t6\tchain\n"
        "Ambiguous?\tbackward\tbakcward\tx\n"
    )
    result = import_bytes(table.encode(), "typed.tsv")
    items = _items(result)
    assert result.format is Format.TSV
    assert items["typed-typed-01"]["accept"] == ["x.grad", "grad"]
    assert items["typed-typed-01"]["wrong"] == ["grad_fn", "y.grad"]
    assert items["typed-typed-02"]["number"] == {"value": 12.0}
    assert "typed-typed-03" not in items
    [error] = result.errors
    assert error.line == 4 and "ambiguous key: it accepts the wrong answer 'bakcward'" in str(error)


def test_opentdb_free_text_questions_become_typed_items() -> None:
    document = {
        "response_code": 0,
        "results": [
            {
                "type": "text",
                "difficulty": "easy",
                "category": "Autograd",
                "question": "Which method fills the leaves&#039; gradients?",
                "correct_answer": "backward|loss.backward()",
                "incorrect_answers": ["forward", "step"],
            }
        ],
    }
    result = import_bytes(json.dumps(document).encode(), "trivia.json")
    [item] = result.items
    assert result.format is Format.OPENTDB and item.data["kind"] == "typed"
    assert item.data["prompt"] == "Which method fills the leaves' gradients?"
    assert item.data["accept"] == ["backward", "loss.backward()"]
    assert item.data["wrong"] == ["forward", "step"]


def test_typed_items_go_out_as_type_in_the_answer_notes_and_come_back(tmp_path: Path) -> None:
    [loaded] = load_packs(TYPED_PACKS).packs
    deck = pack_apkg(loaded.pack)
    result = import_bytes(deck, "typed-mini.apkg")
    assert result.format is Format.ANKI
    back = [item.data for item in result.items]
    assert [item["kind"] for item in back] == ["typed"] * 4
    assert back[0]["accept"] == ["x.grad"]
    assert back[1]["number"] == {"value": 12.0}
    assert back[2]["accept"] == ["backward"]


def test_ankis_own_type_in_notes_import_as_typed(tmp_path: Path) -> None:
    model = genanki.Model(
        1607392319,
        "Basic (type in the answer)",
        fields=[{"name": "Front"}, {"name": "Back"}],
        templates=[{"name": "Card 1", "qfmt": "{{Front}}{{type:Back}}", "afmt": "{{type:Back}}"}],
    )
    deck = genanki.Deck(2059400110, "Typing")
    deck.add_note(genanki.Note(model=model, fields=["grad_fn of a leaf?", "None"]))
    deck.add_note(genanki.Note(model=model, fields=["3 * 4?", "12"]))
    path = tmp_path / "typing.apkg"
    genanki.Package(deck).write_to_file(path)
    result = import_bytes(path.read_bytes(), str(path))
    kinds = {item.data["prompt"]: item.data for item in result.items}
    assert kinds["grad_fn of a leaf?"]["accept"] == ["None"]
    assert kinds["3 * 4?"]["number"] == {"value": 12.0}
