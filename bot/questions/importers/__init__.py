"""Importers: turn material a study group already has into a pack (``questions import``).

Formats: ``cheatsheet`` ("Cheat Sheet & Quick Revision" text), ``csv``/``tsv`` (Quizlet and
spreadsheet exports), ``opentdb`` (Open Trivia DB JSON, or the same shape as YAML), ``anki``
(an ``.apkg`` deck) and ``anki-text`` (Anki's "Notes in Plain Text" export). The
format is detected from the file name and its content unless one is given; see
:func:`detect_format` for the order of the rules.

Every importer reports what it could not use as error :class:`Problem` values with the line
of the source file, and what it had to guess as warnings. Nothing is dropped silently.
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import PurePath

import yaml

from bot.questions.importers.anki import import_anki_text, import_apkg, looks_like_anki_text
from bot.questions.importers.base import (
    Format,
    ImportedItem,
    ImportResult,
    ImportTooBig,
    slugify,
    title_from_name,
)
from bot.questions.importers.cheatsheet import (
    MODEL_ANSWER_PLACEHOLDER,
    import_cheatsheet,
    looks_like_cheatsheet,
)
from bot.questions.importers.notes import import_notes, looks_like_notes
from bot.questions.importers.opentdb import import_opentdb
from bot.questions.importers.tabular import import_tabular, sniff_delimiter
from bot.questions.importers.writer import dump_pack
from bot.questions.loader import Problem
from bot.questions.untrusted import InputRefused, json_loads, yaml_load

__all__ = [
    "ANKI_SUFFIXES",
    "MODEL_ANSWER_PLACEHOLDER",
    "Format",
    "FormatUnknown",
    "ImportResult",
    "ImportedItem",
    "decode_text",
    "detect_format",
    "import_bytes",
    "to_yaml",
]


class FormatUnknown(ValueError):
    """The file's format could not be told; the message says why and what to pass."""


def decode_text(raw: bytes, name: str) -> tuple[str | None, Problem | None]:
    """Text from bytes: UTF-8 (with or without a BOM), or UTF-16 with a BOM (Excel exports)."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return raw.decode("utf-16"), None
        except UnicodeDecodeError as exc:
            return None, Problem(name, 1, "", f"not valid UTF-16 text (byte {exc.start})")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return None, Problem(
            name, line, "", f"not UTF-8 text (byte {exc.start}); save the file as UTF-8"
        )
    return text.replace("\r\n", "\n").replace("\r", "\n"), None


def detect_format(text: str, filename: str) -> tuple[Format, str]:
    """The format of ``text`` and why it was chosen; raises :class:`FormatUnknown`.

    Rules, first match wins: the extension ``.json`` (OpenTDB), ``.yaml``/``.yml`` (OpenTDB,
    after checking it is not already a pack), ``.tsv``, ``.csv``; then the content: JSON
    (starts with ``{`` or ``[``), OpenTDB-shaped YAML (a ``results:`` list of questions, or a
    bare list of them), a cheat sheet (its title or section headers), a table (a delimiter
    that splits every row into at least two cells).
    """
    suffix = PurePath(filename).suffix.lower()
    stripped = text.lstrip()
    why = looks_like_anki_text(text)
    if why:
        return Format.ANKI_TEXT, why
    if suffix == ".json":
        return Format.OPENTDB, "the file name ends in .json"
    if suffix in {".yaml", ".yml"}:
        _refuse_pack(text, filename)
        return Format.OPENTDB, f"the file name ends in {suffix}"
    if suffix == ".tsv":
        return Format.TSV, "the file name ends in .tsv"
    if suffix == ".csv":
        return Format.CSV, "the file name ends in .csv"
    if stripped.startswith(("{", "[")):
        try:
            json_loads(stripped)
        except InputRefused:
            return Format.OPENTDB, "the content starts like JSON"
        except json.JSONDecodeError:
            pass
        else:
            return Format.OPENTDB, "the content is JSON"
    why = _opentdb_yaml(text)
    if why:
        _refuse_pack(text, filename)
        return Format.OPENTDB, why
    why = looks_like_cheatsheet(text.splitlines())
    if why:
        return Format.CHEATSHEET, f"cheat-sheet layout ({why})"
    why = looks_like_notes(text.splitlines())
    if why:
        return Format.NOTES, f"study notes ({why})"
    delimiter = sniff_delimiter(text)
    if delimiter == "\t":
        return Format.TSV, "every row has tab-separated cells"
    if delimiter is not None:
        return Format.CSV, f"every row has {delimiter!r}-separated cells"
    raise FormatUnknown(
        f"{filename}: cannot tell the format (not JSON, no cheat-sheet title or "
        "'Recall & Review'/'Practice' sections, no `Q:`/`A:` or `term - definition` lines, no "
        "delimiter that splits every row); pass --format cheatsheet, notes, csv, tsv, opentdb, "
        "anki or anki-text"
    )


ANKI_SUFFIXES = frozenset({".apkg", ".colpkg"})
_YAML_RESULTS = re.compile(r"^results\s*:\s*(?:#.*)?$", re.MULTILINE)
_YAML_QUESTION = re.compile(r"^\s*-?\s*(?:question|correct_answer)\s*:", re.MULTILINE)


def _opentdb_yaml(text: str) -> str | None:
    """Why ``text`` is OpenTDB data written as YAML, or ``None``.

    A top-level ``results:`` list whose entries have ``question`` and ``correct_answer`` (or a
    bare list of such entries). A file with a top-level ``results:`` line that is not valid
    YAML counts too, so that the importer reports the syntax error at its line.
    """
    if not _YAML_QUESTION.search(text):
        return None
    try:
        data = yaml_load(text)
    except (yaml.YAMLError, InputRefused):
        if _YAML_RESULTS.search(text):
            return "a top-level `results:` key, as in OpenTDB data (not valid YAML, see below)"
        return None
    entries = data.get("results") if isinstance(data, dict) else data
    if (
        isinstance(entries, list)
        and entries
        and any(
            isinstance(entry, dict) and "question" in entry and "correct_answer" in entry
            for entry in entries
        )
    ):
        where = "`results:` list" if isinstance(data, dict) else "list"
        return f"the content is OpenTDB YAML (a {where} of question/correct_answer entries)"
    return None


def _refuse_pack(text: str, filename: str) -> None:
    try:
        data = yaml_load(text)
    except (yaml.YAMLError, InputRefused):
        return  # the importer reports the problem with its line
    if isinstance(data, dict) and "items" in data and "pack" in data:
        raise FormatUnknown(
            f"{filename}: this is already a studybot pack; check it with `studybot questions lint`"
        )


def import_bytes(
    raw: bytes,
    filename: str,
    *,
    format: Format | None = None,
    pack: str | None = None,
    title: str | None = None,
) -> ImportResult:
    """Import one file's bytes. ``pack`` defaults to a slug of the file name.

    Raises :class:`FormatUnknown` when no format is given and none can be detected; every
    other problem comes back in the result.
    """
    try:
        return _import_bytes(raw, filename, format=format, pack=pack, title=title)
    except ImportTooBig as exc:  # over a bound: the whole file is refused, in one line
        result = ImportResult(
            filename, format or Format.CHEATSHEET, "", pack or slugify(filename), ""
        )
        result.refused = exc.message
        result.problems = [Problem(filename, exc.line, "", exc.message)]
        return result


def _import_bytes(
    raw: bytes,
    filename: str,
    *,
    format: Format | None,
    pack: str | None,
    title: str | None,
) -> ImportResult:
    slug = pack or slugify(filename)
    suffix = PurePath(filename).suffix.lower()
    if format is Format.ANKI or (format is None and suffix in ANKI_SUFFIXES):
        why = "--format anki" if format else f"the file name ends in {suffix}"
        result = ImportResult(filename, Format.ANKI, why, slug, title or title_from_name(filename))
        import_apkg(raw, result, title_given=title is not None)
        return result
    text, problem = decode_text(raw, filename)
    if text is None:
        assert problem is not None
        result = ImportResult(filename, format or Format.CHEATSHEET, "", slug, title or "")
        result.problems.append(problem)
        return result
    if format is None:
        found, why = detect_format(text, filename)
    else:
        found, why = format, f"--format {format.value}"
    result = ImportResult(filename, found, why, slug, title or title_from_name(filename))
    if found is Format.CHEATSHEET:
        import_cheatsheet(text, result, title_given=title is not None)
    elif found is Format.NOTES:
        import_notes(text, result)
    elif found is Format.ANKI_TEXT:
        import_anki_text(text, result)
    elif found is Format.ANKI:  # bytes that were text: not a package
        result.problems.append(
            Problem(filename, 1, "", "--format anki reads .apkg packages; this is text")
        )
    elif found is Format.TSV:
        import_tabular(text, result, delimiter="\t")
    elif found is Format.CSV:
        # `--format csv` means comma-separated; a file detected as CSV may use ; or | too.
        import_tabular(text, result, delimiter="," if format is Format.CSV else None, prefer=",")
    else:
        suffix = PurePath(filename).suffix.lower()
        is_json = suffix == ".json" or (suffix not in {".yaml", ".yml"} and _is_json(text))
        import_opentdb(text, result, is_json=is_json)
    return result


def _is_json(text: str) -> bool:
    """Whether ``text`` is meant as JSON: it starts like JSON and is not YAML that isn't."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json_loads(stripped)
    except InputRefused:
        return True  # reported by the JSON importer, at its line
    except json.JSONDecodeError:
        # Broken JSON is reported as JSON, unless it is valid YAML (flow style: [{a: 1}]).
        try:
            yaml_load(stripped)
        except (yaml.YAMLError, InputRefused):
            return True
        return False
    return True


def to_yaml(result: ImportResult) -> str:
    """The imported pack as YAML, with the source line and notes above every item."""
    header = [
        f"Imported from {PurePath(result.source).name} ({result.format.value}) by "
        "`studybot questions import`.",
        "Review the comments marked 'warning' before shipping this pack; then delete them.",
    ]
    name = PurePath(result.source).name
    comments = {
        item.id: [f"from {name}:{item.line}", *(note.replace("\n", " ") for note in item.notes)]
        for item in result.items
    }
    return dump_pack(result.pack_data(), header=header, item_comments=comments)
