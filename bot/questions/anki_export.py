"""Anki decks out: a pack (or a member's review cards) as an ``.apkg`` file Anki opens.

Written with genanki. A flashcard becomes a note of a Basic note type (``Front``/``Back``); a
multiple-choice item a note of a studybot note type whose fields keep the parts apart
(``Question``, ``Code``, ``Choices``, ``Answer``, ``Explanation``), so the front shows the
choices and the back the answer and why, and ``questions import`` can read it back as
choices. Practice items and open prompts become Basic notes (the back: the final answer, or
the model answer). Code is shown as code (``<pre><code>``), and all text is HTML-escaped.

Every id is stable: the deck's and the note types' ids are derived from a key (the pack's
slug) by a hash, and each note's GUID from the item's id, so importing a re-exported deck
updates the notes in Anki instead of adding a second copy.
"""

from __future__ import annotations

import hashlib
import html
import io
import itertools
import sqlite3
import tempfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import genanki

from bot.questions.schema import (
    CHOICE_LETTERS,
    Exercise,
    Flashcard,
    Item,
    MultipleChoice,
    Pack,
    Practice,
    TypedAnswer,
)

__all__ = [
    "BASIC_FIELDS",
    "CHOICE_FIELDS",
    "CHOICE_MODEL_NAME",
    "TYPED_MODEL_NAME",
    "apkg_bytes",
    "code_html",
    "guid_for_item",
    "pack_apkg",
    "stable_id",
    "text_html",
]

BASIC_FIELDS = ("Front", "Back")
CHOICE_FIELDS = ("Question", "Code", "Choices", "Answer", "Explanation")
CHOICE_MODEL_NAME = "studybot multiple choice"
TYPED_MODEL_NAME = "studybot typed (type in the answer)"
"""A typed item's note type: Anki's "type in the answer" (``{{type:Back}}``), by name too, so
the importer knows it again (as it knows Anki's own "Basic (type in the answer)")."""
DIFFICULTY_TAG = "difficulty::"
"""Each note is tagged with its item's difficulty (``difficulty::hard``), which import reads."""

_CSS = (
    ".card { font-family: sans-serif; font-size: 18px; text-align: left; }\n"
    "pre { background: #f4f4f4; padding: 8px; border-radius: 4px; overflow-x: auto; }\n"
    ".explanation { color: #555; margin-top: 8px; }\n"
)


def stable_id(*parts: str) -> int:
    """An id Anki accepts (positive, under 2**31 as genanki's examples use) from ``parts``:
    the same parts always give the same id."""
    digest = hashlib.sha256("\x1f".join(("studybot", *parts)).encode("utf-8")).digest()
    return (1 << 30) + int.from_bytes(digest[:4], "big") % (1 << 30)


def guid_for_item(key: str, item_id: str) -> str:
    """The GUID of the note an item becomes in a deck keyed ``key`` (a pack's slug): Anki, and
    ``questions import``, recognise a re-imported note as the same one by it."""
    guid: str = genanki.guid_for("studybot", key, item_id)
    return guid


def text_html(text: str) -> str:
    """Prose as HTML: escaped, line breaks kept."""
    return html.escape(text.strip()).replace("\n", "<br>")


def code_html(code: str) -> str:
    """A code snippet as HTML: escaped inside ``<pre><code>`` (its spacing kept)."""
    return f"<pre><code>{html.escape(code.rstrip())}</code></pre>"


def _model(
    key: str, kind: str, name: str, fields: Sequence[str], qfmt: str, afmt: str
) -> genanki.Model:
    """A note type of one card, its id stable for the deck ``key`` and the ``kind``."""
    return genanki.Model(
        stable_id(key, kind),
        name,
        fields=[{"name": field} for field in fields],
        templates=[{"name": "Card 1", "qfmt": qfmt, "afmt": afmt}],
        css=_CSS,
    )


def _models(key: str) -> tuple[genanki.Model, genanki.Model, genanki.Model]:
    """The deck's note types: basic (front, back), multiple choice, and typed (Anki's "type
    in the answer": the card asks for the back, and compares what is typed)."""
    basic = _model(
        key,
        "basic",
        "studybot basic",
        BASIC_FIELDS,
        "{{Front}}",
        '{{FrontSide}}<hr id="answer">{{Back}}',
    )
    choice = _model(
        key,
        "multiple-choice",
        CHOICE_MODEL_NAME,
        CHOICE_FIELDS,
        "{{Question}}{{Code}}{{Choices}}",
        '{{FrontSide}}<hr id="answer">{{Answer}}'
        '{{#Explanation}}<div class="explanation">{{Explanation}}</div>{{/Explanation}}',
    )
    typed = _model(
        key,
        "typed",
        TYPED_MODEL_NAME,
        BASIC_FIELDS,
        "{{Front}}<br>{{type:Back}}",
        '{{Front}}<hr id="answer">{{type:Back}}',
    )
    return basic, choice, typed


def _front(item: Item) -> str:
    if isinstance(item, Exercise):  # the task and the code a member starts from
        return text_html(item.prompt) + code_html(item.starter)
    return text_html(item.prompt) + (code_html(item.code) if item.code else "")


def _back(item: Item) -> str:
    if isinstance(item, Flashcard):
        return text_html(item.answer)
    if isinstance(item, Practice):
        parts = [text_html(item.final_answer)]
        parts += [f"<div>{text_html(step)}</div>" for step in item.steps]
        return "".join(parts)
    if isinstance(item, MultipleChoice):  # pragma: no cover - a note type of its own
        raise TypeError("multiple choice has its own note type")
    if isinstance(item, Exercise):  # the reference solution
        return code_html(item.solution)
    if isinstance(item, TypedAnswer):
        return text_html(item.shown_answer)
    return text_html(item.model_answer)


def _choice_fields(item: MultipleChoice) -> list[str]:
    listed = "".join(f"<li>{text_html(choice.text)}</li>" for choice in item.choices)
    correct = next(i for i, choice in enumerate(item.choices) if choice.correct)
    answer = f"{CHOICE_LETTERS[correct]}. {text_html(item.choices[correct].text)}"
    whys = [
        f"{CHOICE_LETTERS[i]}: {text_html(choice.why)}"
        for i, choice in enumerate(item.choices)
        if choice.why
    ]
    explanation = "<br>".join(([text_html(item.explanation)] if item.explanation else []) + whys)
    return [
        text_html(item.prompt),
        code_html(item.code) if item.code else "",
        f'<ol type="A">{listed}</ol>',
        answer,
        explanation,
    ]


def _tags(item: Item) -> list[str]:
    return [*item.tags, f"{DIFFICULTY_TAG}{item.difficulty.value}"]


def apkg_bytes(key: str, deck_name: str, items: Sequence[Item], *, description: str = "") -> bytes:
    """The ``.apkg`` of one deck named ``deck_name`` holding ``items``.

    ``key`` fixes the deck's and the note types' ids (a pack's slug): exporting again with the
    same key gives the same ids and note GUIDs, so Anki updates what it imported before.
    """
    basic, choice, typed = _models(key)
    deck = genanki.Deck(stable_id(key, "deck"), deck_name, description=html.escape(description))
    for item in items:
        if isinstance(item, MultipleChoice):
            model, fields = choice, _choice_fields(item)
        elif isinstance(item, TypedAnswer):  # {{type:Back}} compares the plain answer
            model, fields = typed, [_front(item), html.escape(item.shown_answer)]
        else:
            model, fields = basic, [_front(item), _back(item)]
        guid = guid_for_item(key, item.id)
        deck.add_note(genanki.Note(model=model, fields=fields, tags=_tags(item), guid=guid))
    return _package(deck)


def pack_apkg(pack: Pack) -> bytes:
    """A pack as an Anki deck named by its title (ids from its slug)."""
    return apkg_bytes(pack.pack, pack.title, pack.items, description=pack.description or "")


def _package(deck: genanki.Deck) -> bytes:
    """The package's bytes. genanki's own ``write_to_file`` leaves its temporary SQLite file
    behind in /tmp; this writes the same collection in a folder that is removed after."""
    package = genanki.Package(deck)
    with tempfile.TemporaryDirectory(prefix="studybot-apkg-") as folder:
        path = Path(folder) / "collection.anki2"
        conn = sqlite3.connect(path)
        try:
            # Now: Anki updates a note it has when the incoming one is newer (same GUID).
            timestamp = time.time()
            package.write_to_db(conn.cursor(), timestamp, itertools.count(int(timestamp * 1000)))
            conn.commit()
        finally:
            conn.close()
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(path, "collection.anki2")
            archive.writestr("media", "{}")
        return out.getvalue()
