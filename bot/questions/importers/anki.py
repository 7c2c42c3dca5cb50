"""Import Anki decks: an ``.apkg`` package, or Anki's "Notes in Plain Text" export.

A package is a zip holding the collection as SQLite (``collection.anki21``, or
``collection.anki2`` from older Anki and from genanki), read here with :mod:`sqlite3` as the
documented schema-11 layout: ``col.models`` (note types as JSON) and ``notes`` (fields joined
by ``0x1f``, tags separated by spaces). Anki 2.1.50+ writes ``collection.anki21b`` instead
(zstd-compressed, a newer schema) unless "Support older Anki versions" is ticked, beside a
placeholder ``collection.anki2`` that only says to update Anki; such a deck is converted by
Anki's own library (the ``anki`` package: imported into a temporary collection, exported in
the legacy format), and read like any other. Without that package it is refused with the
advice to export it again.

Each note becomes an item: a note of studybot's own multiple-choice type (what
``questions export --apkg`` writes) a multiple-choice item with its choices again; any other
note a flashcard, its first filled field the prompt and its second the answer. Tags carry
over (``difficulty::hard`` sets the difficulty). What cannot map is reported per note, and
the other notes import: a cloze note, a note with media (pictures, sounds), a note with one
filled field. Fields are HTML: ``<pre>`` blocks become fenced code, ``<code>`` backticks, the
rest plain text.

The plain-text export starts with header lines (``#separator:tab``, ``#html:true``,
``#tags column:3``, ``#notetype column:1``, ``#deck column:2``, ``#guid column:1``); the
other columns are the note's fields, in order.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser

from bot.questions.importers.apkg_read import DeckRefused, read_package
from bot.questions.importers.base import (
    DIFFICULTY_WORDS,
    Draft,
    ImportResult,
    PackBuilder,
    tag_slug,
)
from bot.questions.schema import CHOICE_LETTERS, Difficulty
from bot.questions.typed import parse_number

__all__ = [
    "ANKI_TEXT_HEADER",
    "import_anki_text",
    "import_apkg",
    "looks_like_anki_text",
]

ANKI_TEXT_HEADER = re.compile(
    r"^#(separator|html|tags column|notetype column|deck column|guid column):"
)
# The fields of studybot's exported multiple-choice note type (bot.questions.anki_export).
_CHOICE_FIELDS = ("Question", "Code", "Choices", "Answer", "Explanation")
_CLOZE = re.compile(r"\{\{c\d+::")
_SOUND = re.compile(r"\[sound:([^\]]+)\]")
_SEPARATORS = {
    "tab": "\t",
    "comma": ",",
    "semicolon": ";",
    "space": " ",
    "pipe": "|",
    "colon": ":",
}


# --- HTML fields to text ------------------------------------------------------------------------


class _Text(HTMLParser):
    """An Anki field's HTML as text: blocks and ``<br>`` as line breaks, ``<pre>`` as a fenced
    code block, list items as ``- ``; pictures and other media are collected, not shown."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.media: list[str] = []
        self.items: list[str] = []  # the text of each <li>, for a choices field
        self._pre = 0
        self._li: list[str] | None = None

    def _break(self) -> None:
        """A line break for a block's edge: one, however many blocks meet there."""
        if self.parts and not self.parts[-1].endswith("\n"):
            self._emit("\n")

    def _emit(self, text: str) -> None:
        self.parts.append(text)
        if self._li is not None:
            self._li.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "pre":
            self._pre += 1
            self._emit("\n```\n")
        elif tag == "code" and not self._pre:
            self._emit("`")
        elif tag == "br":
            self._emit("\n")
        elif tag in {"div", "p", "ol", "ul", "tr", "h1", "h2", "h3", "h4", "hr"}:
            self._break()
        elif tag == "li":
            self._emit("\n- ")
            self._li = []
        elif tag in {"img", "audio", "video", "source", "object", "embed"}:
            src = dict(attrs).get("src") or dict(attrs).get("data") or tag
            self.media.append(src)

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and not self._pre:
            self._emit("`")
        elif tag == "pre" and self._pre:
            self._pre -= 1
            self._emit("\n```\n")
        elif tag in {"div", "p", "h1", "h2", "h3", "h4"}:
            self._break()
        elif tag == "li" and self._li is not None:
            self.items.append(_tidy("".join(self._li)))
            self._li = None

    def handle_data(self, data: str) -> None:
        if self._pre:
            self._emit(data)
        else:
            self._emit(re.sub(r"[ \t\r\n\u00a0]+", " ", data))


def _tidy(text: str) -> str:
    """Trim each line outside code fences, and at most one blank line in a row."""
    lines: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if line.strip() == "```":
            fenced = not fenced
            lines.append("```")
            continue
        lines.append(line.rstrip() if fenced else line.strip())
    joined = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    # A code block gets a blank line before it, as in the packs' Markdown.
    return re.sub(r"([^\n])\n```\n", r"\1\n\n```\n", joined, count=1) if "```" in joined else joined


@dataclass(slots=True)
class _Field:
    text: str
    media: list[str] = field(default_factory=list)
    items: list[str] = field(default_factory=list)


def field_text(value: str, *, is_html: bool = True) -> _Field:
    """One field as text, with the media it refers to and its list items."""
    sounds = _SOUND.findall(value)
    value = _SOUND.sub("", value)
    if not is_html:
        return _Field(value.strip(), list(sounds))
    parser = _Text()
    parser.feed(value)
    parser.close()
    return _Field(_tidy("".join(parser.parts)), [*parser.media, *sounds], parser.items)


# --- notes to items ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Note:
    """One note, whichever file it came from: where it was, its type and fields, its tags."""

    line: int
    label: str  # "note 3 (id 1612345...)" or "line 7"
    type_name: str
    cloze: bool
    fields: tuple[tuple[str, str], ...]  # (name, value) in the note type's order
    tags: tuple[str, ...]
    guid: str | None = None  # an .apkg note's GUID: a re-imported export is matched by it


def _add_note(builder: PackBuilder, note: _Note, *, is_html: bool = True) -> None:
    values = [value for _, value in note.fields]
    if note.cloze or any(_CLOZE.search(value) for value in values):
        builder.problem(
            note.line,
            note.label,
            f"a cloze note{f' ({note.type_name})' if note.type_name else ''} cannot become a "
            "question; not imported",
        )
        return
    parsed = {name: field_text(value, is_html=is_html) for name, value in note.fields}
    media = [m for f in parsed.values() for m in f.media]
    if media:
        builder.problem(
            note.line,
            note.label,
            f"refers to media ({', '.join(media[:3])}), which studybot cannot show; not imported",
        )
        return
    difficulty, tags, dropped = _tags(note.tags)
    names = [name for name, _ in note.fields]
    if tuple(names[: len(_CHOICE_FIELDS)]) == _CHOICE_FIELDS:
        _add_choice(builder, note, parsed, difficulty, tags)
        return
    filled = [(name, f.text) for name, f in parsed.items() if f.text]
    if len(filled) < 2:
        builder.problem(
            note.line,
            note.label,
            f"needs a filled front and back (two fields), found {len(filled)}; not imported",
        )
        return
    if _TYPE_IN.search(note.type_name):  # "type in the answer": a typed item
        _add_typed(builder, note, filled[0][1], filled[1][1], difficulty, tags, dropped)
        return
    draft = builder.draft("flashcard", note.line)
    _warn_tags(draft, dropped)
    if len(filled) > 2:
        extra = ", ".join(name for name, _ in filled[2:])
        draft.warn("", f"{note.label}: fields {extra} are not imported (only front and back)")
    draft.commit(
        {
            "difficulty": difficulty.value,
            "tags": tags,
            "prompt": filled[0][1],
            "answer": filled[1][1],
        }
    )


_TYPE_IN = re.compile(r"type in the answer|\btyped\b", re.IGNORECASE)


def _add_typed(
    builder: PackBuilder,
    note: _Note,
    front: str,
    back: str,
    difficulty: Difficulty,
    tags: list[str],
    dropped: Sequence[str],
) -> None:
    """A "type in the answer" note: the back is the answer the bot accepts (a number when it
    is one); what Anki compares letter by letter, studybot grades with typos forgiven."""
    draft = builder.draft("typed", note.line)
    _warn_tags(draft, dropped)
    number = parse_number(back)
    key: dict[str, object] = (
        {"number": {"value": number}} if number is not None else {"accept": [back]}
    )
    draft.commit({"difficulty": difficulty.value, "tags": tags, "prompt": front, **key})


def _add_choice(
    builder: PackBuilder,
    note: _Note,
    parsed: dict[str, _Field],
    difficulty: Difficulty,
    tags: list[str],
) -> None:
    """A note of studybot's multiple-choice type back into choices, answer and whys."""
    texts = parsed["Choices"].items
    answer = parsed["Answer"].text
    match = re.match(r"^([A-E])\.\s", answer)
    if match is None or CHOICE_LETTERS.index(match[1]) >= len(texts):
        builder.problem(
            note.line,
            f"{note.label}.Answer",
            f"{answer!r} names none of the {len(texts)} choices (expected e.g. 'B. text'); "
            "not imported",
        )
        return
    correct = CHOICE_LETTERS.index(match[1])
    whys: dict[int, str] = {}
    explanation: list[str] = []
    for line in parsed["Explanation"].text.split("\n"):
        why = re.match(r"^([A-E]): (.+)$", line)
        if why and CHOICE_LETTERS.index(why[1]) < len(texts):
            whys[CHOICE_LETTERS.index(why[1])] = why[2]
        elif line.strip():
            explanation.append(line)
    prompt = parsed["Question"].text
    if parsed["Code"].text:
        prompt = f"{prompt}\n\n{parsed['Code'].text}"
    choices = [
        {"text": text, **({"correct": True} if i == correct else {})}
        | ({"why": whys[i]} if i in whys else {})
        for i, text in enumerate(texts)
    ]
    draft = builder.draft("multiple_choice", note.line)
    draft.commit(
        {
            "difficulty": difficulty.value,
            "tags": tags,
            "prompt": prompt,
            "choices": choices,
            "explanation": "\n".join(explanation) or None,
        }
    )


def _tags(raw: Sequence[str]) -> tuple[Difficulty, list[str], list[str]]:
    """The difficulty (from ``difficulty::X`` or a level word), the tags, and the dropped."""
    difficulty = Difficulty.MEDIUM
    tags: list[str] = []
    dropped: list[str] = []
    for tag in raw:
        if tag.lower().startswith("difficulty::"):
            word = tag.split("::", 1)[1].lower()
            if word in DIFFICULTY_WORDS:
                difficulty = DIFFICULTY_WORDS[word]
                continue
        slug = tag_slug(tag.replace("::", "-"))
        if slug is None:
            dropped.append(tag)
        elif slug not in tags:
            tags.append(slug)
    return difficulty, tags, dropped


def _warn_tags(draft: Draft, dropped: Sequence[str]) -> None:
    if dropped:
        draft.warn("tags", f"tags {', '.join(dropped)} have no letters or digits; left out")


# --- .apkg ------------------------------------------------------------------------------------


def import_apkg(raw: bytes, result: ImportResult, *, title_given: bool = False) -> None:
    """Read an ``.apkg`` (or ``.colpkg``) into ``result``; whole-file problems at line 1.

    The package is read within fixed bounds in a child process (:mod:`.apkg_read`); a deck
    past a bound, damaged or oddly shaped is one problem that says which, and no item. The
    pack's title is the deck's name unless one was given."""
    builder = PackBuilder(result)
    try:
        raw_notes, deck = read_package(raw)
    except DeckRefused as exc:
        result.refused = str(exc)
        builder.problem(1, "", str(exc))
        return
    if deck and not title_given:
        result.title = deck
    for index, raw_note in enumerate(raw_notes, start=1):
        note = _Note(
            line=index,
            label=f"note {index} (id {raw_note.nid})",
            type_name=raw_note.type_name,
            cloze=raw_note.cloze,
            fields=raw_note.fields,
            tags=raw_note.tags,
            guid=raw_note.guid,
        )
        before = len(result.items)
        _add_note(builder, note)
        if len(result.items) > before and raw_note.guid:
            result.guids[result.items[-1].id] = raw_note.guid


# --- Notes in Plain Text ------------------------------------------------------------------------


def looks_like_anki_text(text: str) -> str | None:
    """Why ``text`` is Anki's plain-text export (its ``#key:value`` header lines), or None."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    match = ANKI_TEXT_HEADER.match(first)
    return f"an Anki text export header (#{match[1]}:)" if match else None


def import_anki_text(text: str, result: ImportResult) -> None:
    """Read Anki's "Notes in Plain Text" export into ``result``."""
    builder = PackBuilder(result)
    lines = text.split("\n")
    header: dict[str, str] = {}
    start = 0
    for start, line in enumerate(lines):  # noqa: B007 - the first body line is wanted
        if not line.startswith("#") or ":" not in line:
            break
        key, value = line[1:].split(":", 1)
        header[key.strip().lower()] = value.strip()
    else:
        start = len(lines)
    word = header.get("separator", "tab")
    separator = _SEPARATORS.get(word.lower(), word if len(word) == 1 else "")
    if not separator:
        builder.problem(1, "#separator", f"{word!r} is not a separator Anki writes; not imported")
        return
    is_html = header.get("html", "false").lower() == "true"
    columns: dict[str, int] = {}
    for key in ("tags", "notetype", "deck", "guid"):
        raw = header.get(f"{key} column")
        if raw is None:
            continue
        if not raw.isdigit() or int(raw) < 1:
            builder.problem(1, f"#{key} column", f"{raw!r} is not a column number")
            return
        columns[key] = int(raw) - 1
    body = "\n".join(lines[start:])
    reader = csv.reader(io.StringIO(body), delimiter=separator, quotechar='"')
    read = 0  # lines of the body read so far (a quoted field may span several)
    for row in reader:
        at, read = start + read + 1, reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        skip = set(columns.values())
        fields = tuple(
            (f"Field {n + 1}", cell)
            for n, cell in enumerate(c for i, c in enumerate(row) if i not in skip)
        )
        tags_cell = row[columns["tags"]] if "tags" in columns and columns["tags"] < len(row) else ""
        type_name = (
            row[columns["notetype"]]
            if "notetype" in columns and columns["notetype"] < len(row)
            else ""
        )
        note = _Note(
            line=at,
            label=f"line {at}",
            type_name=type_name,
            cloze="cloze" in type_name.lower(),
            fields=fields,
            tags=tuple(tags_cell.split()),
        )
        _add_note(builder, note, is_html=is_html)
