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
"""

from __future__ import annotations

import csv
import hashlib
import io
from dataclasses import dataclass
from datetime import datetime

from bot.storage.scores import KnownMember, ScoreStore

__all__ = [
    "MAX_POINTS",
    "PointsFile",
    "PointsRow",
    "ScoresImportRefused",
    "ScoresImported",
    "import_points",
    "parse_points",
]

MAX_POINTS = 1_000_000_000
_ID_COLUMNS = ("member_id",)
_NAME_COLUMNS = ("name",)
_EITHER_COLUMNS = ("member",)


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
class ScoresImported:
    members: int
    points: int


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
    reader = csv.reader(io.StringIO(text.replace("\r\n", "\n").replace("\r", "\n")))
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
        try:
            points = int(typed.replace(",", "").replace("_", ""))
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


async def import_points(
    store: ScoreStore, workspace_id: int, file: PointsFile, *, now: datetime
) -> ScoresImported:
    """Resolve every row to a member of the workspace and log the points; all or nothing.

    Raises :class:`ScoresImportRefused` for an unknown or ambiguous member (every such row),
    a member named on two rows, or a file imported into this workspace before.
    """
    members = await store.members_of(workspace_id)
    by_id = {m.external_id: m for m in members}
    by_name: dict[str, list[KnownMember]] = {}
    for member in members:
        by_name.setdefault(member.display_name.casefold(), []).append(member)
    problems: list[tuple[int, str]] = list(file.problems)
    seen: dict[int, int] = {}
    points: list[tuple[int, int]] = []
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
            problems.append((row.row, f"{where}: {row.who!r} is not a member the bot knows here"))
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
            points.append((found.id, row.points))
    if problems:
        raise ScoresImportRefused([text for _, text in sorted(problems, key=lambda p: p[0])])
    earlier = await store.earlier_import(workspace_id, file.sha256)
    if earlier is not None:
        raise _again(file, earlier)
    stored = await store.import_points(
        workspace_id, points, sha256=file.sha256, source=file.name, now=now
    )
    if not stored:  # another process imported it in between
        again = await store.earlier_import(workspace_id, file.sha256)
        raise _again(file, again or (file.name, now))
    return ScoresImported(len(points), sum(p for _, p in points))


def _again(file: PointsFile, earlier: tuple[str, datetime]) -> ScoresImportRefused:
    source, at = earlier
    return ScoresImportRefused(
        [
            f"{file.name}: these points were imported already ({source}, "
            f"{at:%Y-%m-%d %H:%M} UTC); nothing was added"
        ]
    )
