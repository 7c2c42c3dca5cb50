"""``studybot questions import``: one file in, one linted pack out, every problem reported.

This is the glue between the format importers (:mod:`bot.questions.importers`), the YAML
writer, the linter and the near-duplicate check against the packs already in the packs
folder. The CLI command only prints what :func:`run_import` returns, so the whole flow is
testable without a subprocess.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from bot.questions.anki_export import guid_for_item, pack_apkg
from bot.questions.duplicates import Located, duplicate_problems, located_items
from bot.questions.importers import (
    ANKI_SUFFIXES,
    Format,
    FormatUnknown,
    ImportResult,
    import_bytes,
    to_yaml,
)
from bot.questions.loader import LoadedPack, Problem, load_pack_text, load_packs, pack_files
from bot.questions.schema import Slug
from bot.questions.untrusted import MAX_FILE_BYTES, MAX_ITEMS, InputRefused, check_size

__all__ = ["ImportRefused", "ImportReport", "SameNotes", "run_import", "write_atomically"]


MAX_PACKAGE_BYTES = 100 * 1024 * 1024
"""An Anki package may be this big (its media); its collection is capped on its own."""


class ImportRefused(Exception):
    """The import cannot start (unreadable file, unknown format, bad options); says why."""


@dataclass(slots=True)
class ImportReport:
    """What an import produced: the YAML (unless nothing was importable) and all problems."""

    result: ImportResult
    yaml_text: str | None
    out: Path | None
    problems: list[Problem] = field(default_factory=list)
    same: SameNotes | None = None
    """Notes recognised (by GUID) as an existing pack's own items, and left out."""

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def summary(self) -> str:
        """One line for the end of the output: what was imported, from what, and the damage."""
        if self.same is not None and not self.result.items and not self.problems:
            return self.same.summary(Path(self.result.source))
        counts = self.result.counts()
        kinds = ", ".join(f"{counts[kind]} {kind}" for kind in sorted(counts)) or "nothing"
        where = ""
        if self.out is not None and self.yaml_text is not None:
            where = " -> nothing written" if self.errors else f" -> {self.out}"
        if self.same is not None:
            where += (
                f"; {len(self.same.ids)} note(s) already in {self.same.pack} (by GUID) left out"
            )
        return (
            f"imported {len(self.result.items)} item(s) ({kinds}) from {self.result.source} "
            f"as {self.result.format.value} [{self.result.detected_by}]{where}; "
            f"{len(self.warnings)} warning(s), {len(self.errors)} error(s)"
        )


def run_import(
    file: Path,
    *,
    format_: Format | None = None,
    pack: str | None = None,
    title: str | None = None,
    out: Path | None = None,
    force: bool = False,
    packs_dir: Path | None = None,
) -> ImportReport:
    """Import ``file``, check the result like the linter would, and write it to ``out``.

    Raises :class:`ImportRefused` before doing anything when the file cannot be read, the
    format is unknown, ``--pack`` is not a valid slug, or ``out`` exists without ``force``.
    """
    if out is not None and out.exists() and not force:
        raise ImportRefused(f"{out} exists; pass --force to overwrite it")
    if pack is not None:
        _check_slug(pack)
    package = format_ is Format.ANKI or (format_ is None and file.suffix.lower() in ANKI_SUFFIXES)
    try:
        # A deck's pictures and sounds travel in the package; only its collection is read.
        check_size(file.stat().st_size, str(file), MAX_PACKAGE_BYTES if package else MAX_FILE_BYTES)
        raw = file.read_bytes()
    except OSError as exc:
        raise ImportRefused(f"cannot read {file}: {exc.strerror}") from None
    except InputRefused as exc:
        raise ImportRefused(exc.message) from None
    try:
        result = import_bytes(raw, str(file), format=format_, pack=pack, title=title)
    except FormatUnknown as exc:
        raise ImportRefused(str(exc)) from None
    if result.refused is not None:  # one line says why the whole deck is refused
        raise ImportRefused(f"{file}: {result.refused}; nothing written")
    existing = _existing_packs(packs_dir, out)
    same = _same_notes(result, existing)
    if same is not None:
        result.items = [item for item in result.items if item.id not in same.ids]
        if same.changed:
            raise ImportRefused(same.stop_line(file))
    ordered = sorted(
        result.problems, key=lambda problem: problem.line
    )  # stable: same line keeps order
    if len(result.items) > MAX_ITEMS:
        raise ImportRefused(
            f"{file}: {len(result.items):,} questions is over the limit of {MAX_ITEMS:,} in one "
            "pack; split the file"
        )
    report = ImportReport(result, None, out, ordered, same)
    if not result.items:
        return report
    yaml_text = to_yaml(result)
    # The written file must lint clean; a problem here is an importer bug, reported as such.
    loaded, problems = load_pack_text(yaml_text.encode("utf-8"), str(out or "<stdout>"))
    for problem in problems:
        report.problems.append(
            Problem(
                problem.path,
                problem.line,
                problem.field,
                f"the generated YAML does not lint ({problem.message}); please report this",
            )
        )
    if loaded is None:
        return report
    report.problems.extend(_against_existing(result, loaded, existing))
    report.yaml_text = yaml_text
    if out is not None and not report.errors:  # a run that fails writes nothing
        write_atomically(out, yaml_text.encode("utf-8"))
    return report


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file beside it, renamed
    over it at the end, so a run that fails (or is stopped) never leaves a partial file that
    the next run would find and refuse to overwrite."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@dataclass(frozen=True, slots=True)
class SameNotes:
    """The notes of a deck that are an existing pack's items, matched by GUID as Anki matches
    its own exports (``questions export --apkg`` derives each note's GUID from the pack's slug
    and the item's id): ``ids`` are the imported items left out, ``changed`` those among them
    whose text differs from the item as exported now."""

    pack: str
    path: str
    ids: frozenset[str]
    changed: tuple[str, ...]

    def stop_line(self, file: Path) -> str:
        shown = ", ".join(self.changed[:3]) + (", ..." if len(self.changed) > 3 else "")
        return (
            f"{file}: {len(self.changed)} of its notes "
            f"{'is an item' if len(self.changed) == 1 else 'are items'} of {self.pack} (matched "
            f"by GUID) that differ{'s' if len(self.changed) == 1 else ''} from {self.path} "
            f"({shown}): edited in Anki or in the pack "
            "since the export; a deck cannot carry an item's code and checks back, so edit "
            f"{self.path} instead; nothing written"
        )

    def summary(self, file: Path) -> str:
        return (
            f"{file}: its {len(self.ids)} note(s) are the items of {self.pack} in {self.path} "
            "(matched by GUID, as Anki does with its own export), unchanged; updated nothing"
        )


def _same_notes(result: ImportResult, existing: Sequence[LoadedPack]) -> SameNotes | None:
    """Which imported items are an existing pack's items, by their notes' GUIDs, and which of
    those differ from that pack exported now; None when no note matches."""
    if not result.guids:
        return None
    by_guid = {
        guid_for_item(loaded.pack.pack, item.id): (loaded, item.id)
        for loaded in existing
        for item in loaded.pack.items
    }
    matched = {
        imported_id: by_guid[guid] for imported_id, guid in result.guids.items() if guid in by_guid
    }
    if not matched:
        return None
    packs = {id(loaded): loaded for loaded, _ in matched.values()}
    loaded = max(
        packs.values(), key=lambda p: sum(m is p for m, _ in matched.values())
    )  # the pack most of the notes belong to names the line
    fresh: dict[str, dict[str, Any]] = {}
    for pack in packs.values():
        again = import_bytes(pack_apkg(pack.pack), "export.apkg", format=Format.ANKI)
        fresh.update(
            {
                again.guids[item.id]: _content(item.data)
                for item in again.items
                if item.id in again.guids
            }
        )
    items = {item.id: item for item in result.items}
    changed = tuple(
        item_id
        for imported_id, (_, item_id) in matched.items()
        if fresh.get(result.guids[imported_id]) != _content(items[imported_id].data)
    )
    return SameNotes(loaded.pack.pack, loaded.path, frozenset(matched), changed)


def _content(data: dict[str, Any]) -> dict[str, Any]:
    """An imported item's data without the id, which the importer numbers by position."""
    return {key: value for key, value in data.items() if key != "id"}


def _check_slug(pack: str) -> None:
    try:
        TypeAdapter(Slug).validate_python(pack)
    except ValidationError:
        raise ImportRefused(
            f"--pack {pack!r}: a pack name is 1-64 lowercase letters, digits, '.', '_' or '-', "
            "starting with a letter or digit, e.g. dynamic-graphs"
        ) from None


def _against_existing(
    result: ImportResult, loaded: LoadedPack, existing: Sequence[LoadedPack]
) -> list[Problem]:
    """Ids and pack names already taken, and near-duplicates, at the source file's lines."""
    source_items = [
        Located(item, result.source, result.item_lines().get(item.id, 1))
        for item in loaded.pack.items
    ]
    problems: list[Problem] = []
    for other in existing:
        if other.pack.pack == result.pack:
            problems.append(
                Problem(
                    result.source,
                    1,
                    "pack",
                    f"pack name {result.pack!r} is already used by {other.path}; "
                    "pass --pack NAME, or --out that file with --force to replace it",
                )
            )
    taken = {
        item.id: (other.path, other.item_lines.get(item.id, 1))
        for other in existing
        for item in other.pack.items
    }
    for entry in source_items:
        if entry.item.id in taken:
            path, line = taken[entry.item.id]
            problems.append(
                Problem(
                    entry.path,
                    entry.line,
                    f"{entry.item.id}.id",
                    f"id {entry.item.id!r} is already used at {path}:{line}; pass --pack NAME",
                )
            )
    problems.extend(duplicate_problems(source_items, against=located_items(existing)))
    return problems


def _existing_packs(packs_dir: Path | None, out: Path | None) -> list[LoadedPack]:
    """The packs already there, minus the file this import replaces (``--out --force``)."""
    if packs_dir is None or not packs_dir.exists() or not pack_files(packs_dir):
        return []
    replaced = out.resolve() if out is not None else None
    return [
        loaded
        for loaded in load_packs(packs_dir).packs
        if replaced is None or Path(loaded.path).resolve() != replaced
    ]
