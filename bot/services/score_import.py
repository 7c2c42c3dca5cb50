"""``studybot scores import FILE.csv``: points brought over from another bot.

The file is a CSV with a header row: a column naming the member (``member_id`` for the
platform id, ``name`` for the display name, ``member`` for either) and ``points``. Every row
is checked before anything is written, and the file is refused whole when any row is bad,
each bad row named with its number (the header is row 1, as a spreadsheet counts) and field.
Names must match exactly one member the bot knows in the workspace (case-insensitively).

Each member's points become one score event with the reason ``imported``, counted in the
all-time board only (:meth:`bot.storage.scores.ScoreStore.import_points`): the event is dated
today, and counting it in this week's and month's boards would make them about the old bot,
not this week; it is no answer either, so streaks do not see it. The same file (the SHA-256
of its normalised rows: cells trimmed, rows sorted, so line endings, a BOM, quoting or row
order do not make it another file) is refused the second time instead of counted twice.

Points must land where they were meant to, and a mistake must be undoable:

- **The workspace is named by its platform id, exactly** (what ``scores export`` prints in its
  ``workspace_id`` column: a Discord server id, a Slack team id). A name is never matched: a
  server can be named after another workspace's id, and the points went there. A value that
  is one workspace's id and another's name, or the id of workspaces on two platforms, is
  refused with the candidates listed; ``PLATFORM:ID`` (``discord:1234``) then names one.
- **A dry run** resolves every row and shows who would get what, and writes nothing.
- **Each import has an id**, printed when it lands, and ``scores undo-import ID`` takes back
  exactly what it added (the opposite events: events are never deleted), once.

Points changed by an import or its undo are handed to the role rewards
(:meth:`bot.services.rewards.Rewards.scored`); a bot running in another process sees them too,
at its next look (the rewards store's marks count imports and undos).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.core.clock import Clock
from bot.storage.scores import ImportRecord, KnownMember, ScoreStore, WorkspaceInfo
from bot.text import id_problem

__all__ = [
    "MAX_POINTS",
    "ImportLine",
    "ImportUndone",
    "PointsFile",
    "PointsRow",
    "ScoreImports",
    "ScoresImportRefused",
    "ScoresImported",
    "parse_points",
    "workspace_label",
]

MAX_POINTS = 1_000_000_000
_ID_COLUMNS = ("member_id",)
_NAME_COLUMNS = ("name",)
_EITHER_COLUMNS = ("member",)
_WHO_COLUMNS = (*_ID_COLUMNS, *_EITHER_COLUMNS, *_NAME_COLUMNS)
# Thousands separators between groups of three digits: 1,234 / 1.234 / 1 234 / 1_234 / 1'234.
_THOUSANDS = re.compile(r"(?<=\d)[,._ '\u00a0\u202f](?=\d{3}(?:\D|$))")


class ScoresImportRefused(Exception):
    """The file is refused; nothing was written. ``problems``: one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True, slots=True)
class PointsRow:
    row: int  # the spreadsheet's row number (the header is row 1)
    field: str  # the column the member is named by
    who: str
    points: int


@dataclass(frozen=True, slots=True)
class PointsFile:
    """The rows that parsed, the problems of those that did not (``(row, text)``; the file is
    refused by :func:`import_points` with these and the members it cannot find, together)."""

    name: str
    rows: tuple[PointsRow, ...]
    sha256: str
    problems: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ImportLine:
    """One member's points in an import (what a dry run shows)."""

    member: str  # the platform's id
    name: str
    points: int


@dataclass(frozen=True, slots=True)
class ScoresImported:
    members: int
    points: int
    import_id: int | None = None  # None: a dry run, nothing was written
    lines: tuple[ImportLine, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportUndone:
    record: ImportRecord
    workspace: WorkspaceInfo | None
    members: int
    points: int


def _delimiter(text: str) -> str:
    """The delimiter the header row is written with: a comma, or the semicolon (or tab) that
    Excel uses in locales where the comma is the decimal mark. The one that splits the header
    into a member column and a points column wins; a header none splits is read with commas,
    so its message names what was found."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    for delimiter in (",", ";", "\t"):
        cells = [c.strip().lower() for c in next(csv.reader([first], delimiter=delimiter), [])]
        if "points" in cells and any(c in cells for c in _WHO_COLUMNS):
            return delimiter
    return ","


def parse_points(raw: bytes, name: str) -> PointsFile:
    """Read and check the CSV. Raises :class:`ScoresImportRefused` when the file as a whole is
    wrong (not UTF-8 CSV, no header naming the columns, no rows); a bad row is kept in
    ``problems`` so that it is reported with the rows whose member is unknown."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScoresImportRefused(
            [f"{name}: not UTF-8 text (byte {exc.start}); save it as UTF-8 CSV"]
        ) from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(text))
    try:
        table = [(reader.line_num, row) for row in reader]
    except csv.Error as exc:
        raise ScoresImportRefused([f"{name}: not a CSV file ({exc})"]) from None
    table = [(line, row) for line, row in table if any(cell.strip() for cell in row)]
    if not table:
        raise ScoresImportRefused([f"{name}: the file is empty"])
    header = [cell.strip().lower() for cell in table[0][1]]
    who_column = next(
        (c for c in (*_ID_COLUMNS, *_EITHER_COLUMNS, *_NAME_COLUMNS) if c in header), None
    )
    missing = [
        what
        for what, present in (
            ("a member column (member_id, member or name)", who_column is not None),
            ("a points column", "points" in header),
        )
        if not present
    ]
    if missing:
        found = ", ".join(repr(c) for c in header) or "nothing"
        raise ScoresImportRefused(
            [f"{name}: row 1 (the header) needs {' and '.join(missing)}; found {found}"]
        )
    assert who_column is not None
    who_at, points_at = header.index(who_column), header.index("points")
    rows: list[PointsRow] = []
    problems: list[tuple[int, str]] = []
    for number, (_, cells) in enumerate(table[1:], start=2):
        who = cells[who_at].strip() if who_at < len(cells) else ""
        typed = cells[points_at].strip() if points_at < len(cells) else ""
        if not who:
            problems.append((number, f"{name}: row {number}, {who_column}: empty"))
        elif (bad := id_problem(who, repr(who))) is not None:
            problems.append((number, f"{name}: row {number}, {who_column}: {bad}"))
            who = ""
        try:
            points = int(_THOUSANDS.sub("", typed))
        except ValueError:
            problems.append(
                (number, f"{name}: row {number}, points: {typed!r} is not a whole number")
            )
            continue
        if not 0 <= points <= MAX_POINTS:
            problems.append(
                (
                    number,
                    f"{name}: row {number}, points: {points} is not between 0 and {MAX_POINTS:,}",
                )
            )
            continue
        if who:
            rows.append(PointsRow(number, who_column, who, points))
    if not rows and not problems:
        raise ScoresImportRefused([f"{name}: no rows under the header"])
    canonical = "\n".join(
        sorted(f"{r.field}\x1f{r.who.casefold()}\x1f{r.points}" for r in rows)
    ).encode("utf-8")
    return PointsFile(name, tuple(rows), hashlib.sha256(canonical).hexdigest(), tuple(problems))


class ScoreImports:
    """``studybot scores import`` and ``undo-import``: which workspace, what the file adds (or
    would: a dry run), and taking an import back. ``scored`` is the role rewards' hook."""

    def __init__(
        self,
        *,
        store: ScoreStore,
        clock: Clock,
        scored: Callable[[Iterable[tuple[int, int]]], None],
    ) -> None:
        self._store = store
        self._clock = clock
        self._scored = scored

    async def workspace(self, typed: str | None, where: str) -> WorkspaceInfo:
        """The one workspace ``--workspace`` names in the database ``where``, by its platform
        id exactly (or ``PLATFORM:ID``); without it, the only workspace. Anything else, a name
        included, is refused with the candidates (:func:`choose_workspace`)."""
        return choose_workspace(await self._store.workspaces(), typed, where)

    async def import_file(
        self, workspace: WorkspaceInfo, file: PointsFile, *, dry_run: bool = False
    ) -> ScoresImported:
        """Resolve every row to a member of the workspace and log the points; all or nothing.
        ``dry_run``: resolve and check the same way, write nothing.

        Raises :class:`ScoresImportRefused` for an unknown or ambiguous member (every such
        row), a member named on two rows, or a file imported into this workspace before.
        """
        lines = await self._resolve(workspace.id, file)
        earlier = await self._store.earlier_import(workspace.id, file.sha256)
        if earlier is not None:
            raise _again(file, earlier)
        total = sum(line.points for _, line in lines)
        shown = tuple(line for _, line in lines)
        if dry_run:
            return ScoresImported(len(lines), total, None, shown)
        now = self._clock.now()
        points = [(member_id, line.points) for member_id, line in lines]
        import_id = await self._store.import_points(
            workspace.id, points, sha256=file.sha256, source=file.name, now=now
        )
        if import_id is None:  # another process imported it in between
            again = await self._store.earlier_import(workspace.id, file.sha256)
            raise _again(file, again or (file.name, now))
        self._scored((workspace.id, member_id) for member_id, _ in points)
        return ScoresImported(len(lines), total, import_id, shown)

    async def undo(self, import_id: int) -> ImportUndone:
        """Take back exactly what import ``import_id`` added. Refused (nothing written) when
        there is no such import, or it was undone already."""
        record = await self._store.import_record(import_id)
        if record is None:
            raise ScoresImportRefused([f"there is no import #{import_id}"])
        if record.undone_at is not None:
            raise ScoresImportRefused(
                [
                    f"import #{import_id} ({record.source}) was undone already, "
                    f"{record.undone_at:%Y-%m-%d %H:%M} UTC; nothing changed"
                ]
            )
        taken = await self._store.undo_import(import_id, now=self._clock.now())
        if taken is None:  # another process undid it in between
            raise ScoresImportRefused([f"import #{import_id} was undone already; nothing changed"])
        self._scored((record.workspace_id, member_id) for member_id, _ in taken)
        spaces = {w.id: w for w in await self._store.workspaces()}
        return ImportUndone(
            record, spaces.get(record.workspace_id), len(taken), sum(p for _, p in taken)
        )

    async def _resolve(self, workspace_id: int, file: PointsFile) -> list[tuple[int, ImportLine]]:
        """Each row's member (row id) and points, rows of 0 points left out; every problem
        of the file at once as :class:`ScoresImportRefused`."""
        members = await self._store.members_of(workspace_id)
        by_id = {m.external_id: m for m in members}
        by_name: dict[str, list[KnownMember]] = {}
        for member in members:
            by_name.setdefault(member.display_name.casefold(), []).append(member)
        problems: list[tuple[int, str]] = list(file.problems)
        seen: dict[int, int] = {}
        lines: list[tuple[int, ImportLine]] = []
        for row in file.rows:
            where = f"{file.name}: row {row.row}, {row.field}"
            found: KnownMember | None = None
            if row.field in (*_ID_COLUMNS, *_EITHER_COLUMNS):
                found = by_id.get(row.who)
            if found is None and row.field in (*_NAME_COLUMNS, *_EITHER_COLUMNS):
                named = by_name.get(row.who.casefold(), [])
                if len(named) > 1:
                    ids = ", ".join(m.external_id for m in named)
                    problems.append(
                        (
                            row.row,
                            f"{where}: {row.who!r} is the name of {len(named)} members ({ids}); "
                            "use a member_id column",
                        )
                    )
                    continue
                found = named[0] if named else None
            if found is None:
                problems.append(
                    (row.row, f"{where}: {row.who!r} is not a member the bot knows here")
                )
                continue
            if found.id in seen:
                problems.append(
                    (
                        row.row,
                        f"{where}: {row.who!r} is {found.display_name}, already on row "
                        f"{seen[found.id]}",
                    )
                )
                continue
            seen[found.id] = row.row
            if row.points:
                lines.append(
                    (found.id, ImportLine(found.external_id, found.display_name, row.points))
                )
        if problems:
            raise ScoresImportRefused([text for _, text in sorted(problems, key=lambda p: p[0])])
        return lines


def workspace_label(workspace: WorkspaceInfo) -> str:
    """``discord 1234 (Study group)``: the platform, its id, and the name when it has one;
    ``the console chat`` for the console's own (its platform and id are both "console")."""
    if workspace.platform == "console" and workspace.external_id == "console":
        return "the console chat"
    named = workspace.name not in ("", workspace.external_id)
    return f"{workspace.platform} {workspace.external_id}" + (
        f" ({workspace.name})" if named else ""
    )


def choose_workspace(
    spaces: Sequence[WorkspaceInfo], typed: str | None, where: str
) -> WorkspaceInfo:
    """The workspace ``typed`` names by its platform id, exactly, or as ``PLATFORM:ID``.

    A name never chooses: a value that only names a workspace, that is the id of several
    (on two platforms), or that is one's id and another's name, is refused with every
    candidate listed, so the operator picks by ``PLATFORM:ID``.
    """
    listed = ", ".join(workspace_label(w) for w in spaces)
    if typed is None:
        if len(spaces) == 1:
            return spaces[0]
        raise ScoresImportRefused(
            [f"{where} has no workspace yet: run the bot there first"]
            if not spaces
            else [f"{where} has {len(spaces)} workspaces; pass --workspace ID (one of: {listed})"]
        )
    platform, colon, external = typed.partition(":")
    if colon and any(w.platform == platform for w in spaces):
        exact = [w for w in spaces if (w.platform, w.external_id) == (platform, external)]
        if len(exact) == 1:
            return exact[0]
    by_id = [w for w in spaces if w.external_id == typed]
    by_name = [w for w in spaces if w.name == typed and w not in by_id]
    if len(by_id) == 1 and not by_name:
        return by_id[0]
    candidates = [*by_id, *by_name]
    if not candidates:
        raise ScoresImportRefused(
            [f"no workspace has the id {typed!r} in {where} (there: {listed or 'none'})"]
        )
    lines = [
        f"  {w.platform}:{w.external_id} (id {w.external_id}, platform {w.platform}, "
        f"name {w.name!r})"
        for w in candidates
    ]
    why = (
        f"{typed!r} is the name of a workspace, not its id"
        if not by_id
        else f"{typed!r} matches {len(candidates)} workspaces"
    )
    raise ScoresImportRefused(
        [f"{why}; --workspace takes a platform id (or PLATFORM:ID), exactly:", *lines]
    )


def _again(file: PointsFile, earlier: tuple[str, datetime]) -> ScoresImportRefused:
    source, at = earlier
    return ScoresImportRefused(
        [
            f"{file.name}: these points were imported already ({source}, "
            f"{at:%Y-%m-%d %H:%M} UTC); nothing was added"
        ]
    )
