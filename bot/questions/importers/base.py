"""What every importer shares: the result type, stable ids, schema checks at the source line.

An importer reads material a study group already has and builds pack data (plain dicts in the
key order a pack author would write them). Each item is validated against the schema as it is
built, so that a problem is reported at the line of the *source* file, where the author can
fix it, rather than at a line of the generated YAML. Nothing is dropped silently: an item that
cannot be built becomes an error :class:`~bot.questions.loader.Problem`, and anything the
importer had to guess becomes a warning that is also written as a comment above the item.
"""

from __future__ import annotations

import enum
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from bot.questions.loader import Problem
from bot.questions.schema import Difficulty, Item
from bot.questions.untrusted import MAX_ITEMS

__all__ = [
    "DIFFICULTY_WORDS",
    "ITEM_KEY_ORDER",
    "KIND_ABBREVIATIONS",
    "Draft",
    "Format",
    "ImportResult",
    "ImportedItem",
    "PackBuilder",
    "clean_field",
    "slugify",
    "tag_slug",
    "title_from_name",
]

ItemData = dict[str, Any]


class Format(enum.StrEnum):
    """The formats ``studybot questions import`` reads."""

    CHEATSHEET = "cheatsheet"
    CSV = "csv"
    TSV = "tsv"
    OPENTDB = "opentdb"
    NOTES = "notes"
    ANKI = "anki"
    ANKI_TEXT = "anki-text"


# Readable key order for generated items: identity, the question, its check, then the answer.
ITEM_KEY_ORDER = (
    "id",
    "kind",
    "difficulty",
    "tags",
    "prompt",
    "code",
    "expect_stdout",
    "expect_error",
    "answer",
    "accept",
    "number",
    "wrong",
    "choices",
    "explanation",
    "steps",
    "hints",
    "common_mistakes",
    "final_answer",
    "hint",
    "model_answer",
)
KIND_ABBREVIATIONS = {
    "flashcard": "flash",
    "multiple_choice": "mc",
    "practice": "prac",
    "open": "open",
    "typed": "typed",
}
# Level words found in study material, mapped to the schema's difficulties.
DIFFICULTY_WORDS: dict[str, Difficulty] = {
    "beginner": Difficulty.EASY,
    "basic": Difficulty.EASY,
    "easy": Difficulty.EASY,
    "intermediate": Difficulty.MEDIUM,
    "medium": Difficulty.MEDIUM,
    "advanced": Difficulty.HARD,
    "hard": Difficulty.HARD,
}
_MAX_ID = 64


@functools.cache
def _item_adapter() -> TypeAdapter[Item]:
    # Built on first use: building the validator takes a noticeable part of `--help`.
    return TypeAdapter(Item)


_ID_SUFFIX_ROOM = 12  # "-flash-" plus a counter


@dataclass(frozen=True, slots=True)
class ImportedItem:
    """One built item: valid pack data, the source line it came from, and notes for a human."""

    data: ItemData
    line: int
    notes: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def kind(self) -> str:
        return str(self.data["kind"])


@dataclass(slots=True)
class ImportResult:
    """An importer's output: the pack header and items, plus every problem found on the way.

    ``problems`` are errors (content that could not become an item; it is not in ``items``)
    and warnings (the item is in ``items`` but a human should look at it).
    """

    source: str
    format: Format
    detected_by: str
    pack: str
    title: str
    description: str | None = None
    items: list[ImportedItem] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    guids: dict[str, str] = field(default_factory=dict)
    """Item id -> the GUID of the Anki note it came from: a re-imported export is matched."""
    refused: str | None = None
    """Why the whole file was refused (a deck past a bound, damaged or oddly shaped)."""

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def counts(self) -> Counter[str]:
        """Items by kind, in the schema's words (``flashcard``, ``multiple_choice``, ...)."""
        return Counter(item.kind for item in self.items)

    def pack_data(self) -> dict[str, Any]:
        """The pack as plain data, ready for the schema or the YAML writer."""
        data: dict[str, Any] = {"pack": self.pack, "title": self.title}
        if self.description:
            data["description"] = self.description
        data["items"] = [item.data for item in self.items]
        return data

    def item_lines(self) -> dict[str, int]:
        return {item.id: item.line for item in self.items}


MAX_PROBLEMS = 1000
"""Problems reported for one file before the import stops reading it."""


class ImportTooBig(ValueError):
    """The file holds more items or problems than one import reads; the message says which."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class PackBuilder:
    """Collects items for one pack: numbers ids per kind and validates each item as it comes.

    Ids are ``<pack>-<kind>-NN`` numbered in source order, so importing the same file again
    gives the same ids (an id is an item's identity in the database).
    """

    def __init__(self, result: ImportResult) -> None:
        self.result = result
        self._counters: Counter[str] = Counter()
        self._prefix = result.pack[: _MAX_ID - _ID_SUFFIX_ROOM].rstrip("-._")

    @property
    def source(self) -> str:
        return self.result.source

    def problem(
        self,
        line: int,
        field_name: str,
        message: str,
        severity: Literal["error", "warning"] = "error",
    ) -> Problem:
        problem = Problem(self.source, line, field_name, message, severity)
        self.result.problems.append(problem)
        if len(self.result.problems) > MAX_PROBLEMS:
            raise ImportTooBig(
                line,
                f"more than {MAX_PROBLEMS:,} problems by line {line}; stopped reading (is it "
                "the format you meant? see --format)",
            )
        return problem

    def warn(self, line: int, field_name: str, message: str) -> Problem:
        return self.problem(line, field_name, message, "warning")

    def draft(self, kind: str, line: int) -> Draft:
        """Start the next item of ``kind`` found at source ``line`` (its id is fixed now).

        Past :data:`MAX_ITEMS` items the import stops (:class:`ImportTooBig`): a 4 MiB file of
        tiny rows would otherwise build a million items, and half a gigabyte, before anything
        counted them."""
        if sum(self._counters.values()) >= MAX_ITEMS:
            raise ImportTooBig(
                line,
                f"more than {MAX_ITEMS:,} questions (line {line}), the limit for one pack; "
                "split the file",
            )
        self._counters[kind] += 1
        item_id = f"{self._prefix}-{KIND_ABBREVIATIONS[kind]}-{self._counters[kind]:02d}"
        return Draft(self, kind, item_id, line)


class Draft:
    """One item being built: warnings about it are reported and kept as notes for the YAML."""

    def __init__(self, builder: PackBuilder, kind: str, item_id: str, line: int) -> None:
        self.builder = builder
        self.kind = kind
        self.id = item_id
        self.line = line
        self.notes: list[str] = []

    def warn(self, field_name: str, message: str, *, line: int | None = None) -> None:
        """A warning on this item: printed by the importer and written above it in the YAML."""
        where = f"{self.id}.{field_name}" if field_name else self.id
        self.builder.warn(line or self.line, where, message)
        self.notes.append(
            f"warning: {field_name}: {message}" if field_name else f"warning: {message}"
        )

    def note(self, message: str) -> None:
        """A comment for the YAML only (too minor to print for every item)."""
        self.notes.append(message)

    def error(self, field_name: str, message: str, *, line: int | None = None) -> None:
        where = f"{self.id}.{field_name}" if field_name else self.id
        self.builder.problem(line or self.line, where, message)

    def commit(self, fields: Mapping[str, Any]) -> bool:
        """Validate and keep the item; on failure report each schema error at its line.

        ``fields`` holds everything but ``id`` and ``kind``; empty values are left out so the
        written YAML carries no noise. Returns whether the item was kept.
        """
        unknown = set(fields) - set(ITEM_KEY_ORDER)
        if unknown:  # a programming error in an importer, not an input problem
            raise ValueError(f"unknown item keys {sorted(unknown)}")
        raw = {"id": self.id, "kind": self.kind, **fields}
        data = {key: raw[key] for key in ITEM_KEY_ORDER if key in raw and _present(raw[key])}
        try:
            _item_adapter().validate_python(data)
        except ValidationError as exc:
            for err in exc.errors():
                loc = [str(p) for p in err["loc"] if p not in KIND_ABBREVIATIONS and p != self.kind]
                where = ".".join(p for p in loc if "[" not in p)
                self.error(where, f"{_message(err)}; this item was not imported")
            return False
        self.builder.result.items.append(ImportedItem(data, self.line, tuple(self.notes)))
        return True


def _message(err: ErrorDetails) -> str:
    """A schema error in a pack author's words (the loader's wording where it has one)."""
    ctx = err.get("ctx", {})
    if err["type"] == "string_too_long":
        found = len(err["input"]) if isinstance(err["input"], str) else "?"
        return f"is too long ({found} characters; at most {ctx.get('max_length')})"
    if err["type"] == "string_too_short":
        return "must not be empty"
    if err["type"] in {"too_short", "too_long"}:
        bound = ctx.get("min_length") if err["type"] == "too_short" else ctx.get("max_length")
        word = "at least" if err["type"] == "too_short" else "at most"
        return f"needs {word} {bound} entries, found {ctx.get('actual_length')}"
    return err["msg"].removeprefix("Value error, ")


def _present(value: object) -> bool:
    return value is not None and value not in ([], ())


# --- text helpers -------------------------------------------------------------------------------

_MARKERS = re.compile(r"\s*(\[OK\]|[\u2713\u2714\u2705\u2611])\s*$")  # "[OK]" or check marks
_SPACES = re.compile(r"[ \t\u00a0]+")


def clean_field(text: str) -> str:
    """One line of prose: collapsed whitespace, no check-mark decoration at the end.

    Exported study sheets end lines with ``[OK]`` or a check mark; that is layout, not
    content, and would read oddly in a chat message.
    """
    text = unicodedata.normalize("NFC", text)
    text = _SPACES.sub(" ", text).strip()
    previous = None
    while previous != text:
        previous, text = text, _MARKERS.sub("", text).strip()
    return text


def slugify(name: str, *, limit: int = 64) -> str:
    """A pack slug from a file name: ``Dynamic Graphs (v2).txt`` -> ``dynamic-graphs-v2``."""
    stem = PurePath(name).stem
    ascii_text = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9._-]+", "-", ascii_text.lower())
    slug = re.sub(r"-{2,}", "-", slug).strip("-._")[:limit].rstrip("-._")
    return slug or "imported"


def tag_slug(text: str) -> str | None:
    """A tag from a category name (``Science: Computers`` -> ``science-computers``)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9_-]+", "-", ascii_text.lower()).strip("-_")
    slug = re.sub(r"-{2,}", "-", slug)[:32].rstrip("-_")
    return slug or None


def title_from_name(name: str) -> str:
    """A title from a file name: ``quizlet_autograd-terms.csv`` -> ``Quizlet autograd terms``."""
    words = re.sub(r"[_\-.]+", " ", PurePath(name).stem).strip()
    return (words[:1].upper() + words[1:]) if words else "Imported questions"
