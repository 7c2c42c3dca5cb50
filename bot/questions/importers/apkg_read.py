"""Read an Anki package's notes within fixed bounds, in a child process.

An ``.apkg`` is a zip holding a SQLite database, and both can be hostile: a 638-byte package
whose ``notes`` is an endless recursive VIEW made ``ORDER BY`` spill gigabytes to ``/var/tmp``;
a zip entry can claim any size, be encrypted, use a compression Python lacks or fail its CRC;
the database can hold any shape (a ``col.models`` that is not JSON, fields that are blobs).
Every one of these is refused here with one line that names the bound or the fault, and the
bounds hold whatever the file does:

- the zip is checked before anything is extracted: entries (:data:`MAX_ENTRIES`), the
  collection's declared size (:data:`MAX_COLLECTION_BYTES`) and compression ratio
  (:data:`MAX_RATIO`), encryption and compression method;
- the collection is loaded into memory (``sqlite3`` ``deserialize``), never written to disk, with
  ``temp_store=MEMORY`` and a hard heap limit (:data:`MAX_SQLITE_HEAP`), so a sort cannot
  spill to a temp file; views, triggers and virtual tables are refused before any query
  (a query only touches tables); a progress handler stops any statement after
  :data:`SQL_SECONDS`; rows are read with ``LIMIT`` (:data:`MAX_NOTES`) and their text is
  capped in total (:data:`MAX_TEXT_BYTES`);
- all of it runs in a short-lived child (``python -m bot.questions.importers.apkg_read``) with
  an address-space cap (:data:`CHILD_MEMORY`), a cap on the size of any file it writes
  (:data:`CHILD_FILE_BYTES`: only Anki's own library, converting a ``collection.anki21b``
  deck, writes files, in a private temporary folder removed afterwards) and a deadline
  (:data:`CHILD_SECONDS`), so even a bug in a parser costs a one-line refusal.

The child answers with plain JSON (never pickle): the notes, or the one line of refusal.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bot

__all__ = [
    "CHILD_FILE_BYTES",
    "CHILD_MEMORY",
    "CHILD_SECONDS",
    "MAX_COLLECTION_BYTES",
    "MAX_ENTRIES",
    "MAX_NOTES",
    "MAX_RATIO",
    "MAX_SQLITE_HEAP",
    "MAX_TEXT_BYTES",
    "SQL_SECONDS",
    "DeckRefused",
    "RawNote",
    "read_package",
]

MAX_ENTRIES = 100_000
"""Files in one package: a deck with many pictures has a few thousand."""
MAX_COLLECTION_BYTES = 200 * 1024 * 1024
"""The collection's size unpacked; a 2,000-note collection is a few MiB."""
MAX_RATIO = 200
"""Unpacked to packed, for a collection over 16 MiB: SQLite pages of text pack about 10:1."""
MAX_NOTES = 2000
"""Notes read from one deck: the most items one pack holds on the command line."""
MAX_TEXT_BYTES = 32 * 1024 * 1024
"""Characters of all notes' fields and tags together (a pack file may be 4 MiB)."""
MAX_SQLITE_HEAP = 256 * 1024 * 1024
"""SQLite's own memory in the child: a sort over the biggest collection fits, an endless one
fails with 'out of memory' instead of writing a temporary file."""
SQL_SECONDS = 20.0
"""Time for all the queries; reading 2,000 notes takes milliseconds."""
CHILD_MEMORY = 1536 * 1024 * 1024
"""Address space of the child: the collection, its copy in SQLite, and Anki's library."""
CHILD_FILE_BYTES = 256 * 1024 * 1024
"""The largest file the child may write (only Anki's library writes, converting anki21b)."""
CHILD_SECONDS = 60.0
"""Wall time of the child, conversion by Anki's library included."""

_COLLECTIONS = ("collection.anki21", "collection.anki2")
_ZIP_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate"}
_EXPECTED_COLUMNS = {
    "col": ("models", "decks"),
    "notes": ("id", "guid", "mid", "tags", "flds"),
    "cards": ("did",),
}


class DeckRefused(ValueError):
    """The package cannot be read within the bounds, or is not an Anki package: one line."""


@dataclass(frozen=True, slots=True)
class RawNote:
    """One note as the collection stores it, its note type resolved."""

    nid: int
    guid: str
    type_name: str
    cloze: bool
    fields: tuple[tuple[str, str], ...]
    tags: tuple[str, ...]


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):,.0f} MiB"


# --- the parent's side ---------------------------------------------------------------------------


def read_package(raw: bytes) -> tuple[list[RawNote], str | None]:
    """The notes of the package ``raw`` and its deck's name (one deck only), read in a capped
    child process; raises :class:`DeckRefused` with one line naming what was wrong."""
    package_root = str(Path(bot.__file__).resolve().parent.parent)
    env = {key: os.environ[key] for key in ("PATH", "LANG") if key in os.environ}
    env["PYTHONPATH"] = os.pathsep.join(
        [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    with tempfile.TemporaryDirectory(prefix="studybot-apkg-read-") as scratch:
        env["TMPDIR"] = scratch
        env["HOME"] = scratch  # Anki's library looks there; nothing of the user's is touched
        try:
            done = subprocess.run(
                [sys.executable, "-m", "bot.questions.importers.apkg_read"],
                input=raw,
                capture_output=True,
                env=env,
                cwd=scratch,
                timeout=CHILD_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise DeckRefused(
                f"reading it took longer than the limit of {CHILD_SECONDS:.0f} s; refused"
            ) from None
    if done.returncode == -signal.SIGXFSZ:
        raise DeckRefused(
            f"reading it needed a temporary file over the limit of {_mib(CHILD_FILE_BYTES)}; "
            "refused"
        )
    if done.returncode == -signal.SIGXCPU:
        raise DeckRefused(f"reading it took more than {CHILD_SECONDS:.0f} s of CPU; refused")
    try:
        answer = json.loads(done.stdout) if done.returncode == 0 else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        if b"MemoryError" in done.stderr or b"memory" in done.stderr.lower():
            raise DeckRefused(f"reading it needed over {_mib(CHILD_MEMORY)} of memory; refused")
        raise DeckRefused(
            f"reading it failed (the reader exited with status {done.returncode}); refused"
        )
    if "refused" in answer:
        raise DeckRefused(str(answer["refused"]))
    notes = [
        RawNote(
            int(n["nid"]),
            str(n["guid"]),
            str(n["type"]),
            bool(n["cloze"]),
            tuple((str(a), str(b)) for a, b in n["fields"]),
            tuple(str(t) for t in n["tags"]),
        )
        for n in answer["notes"]
    ]
    deck = answer.get("deck")
    return notes, str(deck) if deck is not None else None


# --- the child's side ----------------------------------------------------------------------------


def _collection_bytes(raw: bytes, *, converted: bool = False) -> bytes:
    """The collection's bytes out of the zip, every size checked before anything is inflated."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise DeckRefused("not an Anki package (not a zip file)") from None
    except (ValueError, OSError, EOFError) as exc:
        raise DeckRefused(f"not an Anki package (a damaged zip: {exc})") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise DeckRefused(
                f"holds {len(infos):,} files, over the limit of {MAX_ENTRIES:,} for one package"
            )
        members = {info.filename: info for info in infos}
        chosen = next((members[n] for n in _COLLECTIONS if n in members), None)
        # Anki 2.1.50+ writes a placeholder collection.anki2 beside the real anki21b.
        if "collection.anki21b" in members and "collection.anki21" not in members:
            if converted:
                raise DeckRefused("Anki's library did not convert it to a collection")
            return _collection_bytes(
                _legacy_package(raw, members["collection.anki21b"]), converted=True
            )
        if chosen is None:
            raise DeckRefused("holds no Anki collection (collection.anki2 or collection.anki21)")
        _check_entry(chosen)
        try:
            return archive.read(chosen)
        except zipfile.BadZipFile as exc:  # a bad CRC, a truncated entry
            raise DeckRefused(f"its {chosen.filename} is damaged ({exc})") from None
        except (OSError, EOFError, ValueError, NotImplementedError) as exc:
            raise DeckRefused(f"its {chosen.filename} cannot be unpacked ({exc})") from None


def _check_entry(info: zipfile.ZipInfo) -> None:
    """Refuse an entry that is encrypted, compressed in a way not read here, or too big."""
    if info.flag_bits & 0x1:
        raise DeckRefused(f"its {info.filename} is encrypted; Anki never encrypts a package")
    if info.compress_type not in _ZIP_METHODS:
        raise DeckRefused(
            f"its {info.filename} uses zip compression method {info.compress_type}; only "
            "stored and deflate (what Anki writes) are read"
        )
    if info.file_size > MAX_COLLECTION_BYTES:
        raise DeckRefused(
            f"its collection is {info.file_size:,} bytes unpacked, over the limit of "
            f"{_mib(MAX_COLLECTION_BYTES)}"
        )
    if info.file_size > 16 * 1024 * 1024 and info.file_size > MAX_RATIO * max(
        1, info.compress_size
    ):
        raise DeckRefused(
            f"its collection unpacks {info.file_size // max(1, info.compress_size):,} times its "
            f"packed size, over the limit of {MAX_RATIO}:1 (a zip bomb?)"
        )


def _legacy_package(raw: bytes, entry: zipfile.ZipInfo) -> bytes:
    """A package in Anki's new format (``collection.anki21b``: zstd, schema 18), converted by
    Anki's own library (the ``anki`` package) into a legacy package: imported into a new,
    temporary collection and exported again with "Support older Anki versions". Media are
    left out. Runs inside the capped child, in its private temporary folder."""
    _check_entry(entry)
    try:
        from anki.collection import (
            Collection,
            ExportAnkiPackageOptions,
            ImportAnkiPackageOptions,
            ImportAnkiPackageRequest,
        )
    except ImportError:
        raise DeckRefused(
            "this deck is in the format of Anki 2.1.50 and later (collection.anki21b), which "
            "needs the `anki` package to read (pip install anki); or, in Anki, export the deck "
            "again with File > Export > Anki Deck Package and 'Support older Anki versions' "
            "ticked"
        ) from None
    with tempfile.TemporaryDirectory(prefix="studybot-anki-") as folder:
        package, legacy = Path(folder) / "in.apkg", Path(folder) / "legacy.apkg"
        package.write_bytes(raw)
        col = Collection(str(Path(folder) / "collection.anki2"))
        try:
            col.import_anki_package(
                ImportAnkiPackageRequest(
                    package_path=str(package),
                    options=ImportAnkiPackageOptions(with_scheduling=False),
                )
            )
            col.export_anki_package(
                out_path=str(legacy),
                options=ExportAnkiPackageOptions(
                    legacy=True, with_scheduling=False, with_media=False, with_deck_configs=False
                ),
                limit=None,
            )
        except Exception as exc:  # anki's own errors, for a file that is not what it says
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DeckRefused(f"Anki's library cannot read this package ({first})") from None
        finally:
            col.close()
        return legacy.read_bytes()


def _open(data: bytes) -> sqlite3.Connection:
    """The collection in memory, read-only in effect, with SQLite's bounds on."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(data)
    except sqlite3.Error as exc:
        conn.close()
        raise DeckRefused(f"its collection is not an SQLite database ({exc})") from None
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute(f"PRAGMA hard_heap_limit = {MAX_SQLITE_HEAP}")
    conn.execute("PRAGMA query_only = ON")
    deadline = time.monotonic() + SQL_SECONDS
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
    return conn


def _check_schema(conn: sqlite3.Connection) -> None:
    """Refuse views, triggers and virtual tables (only tables hold data that cannot run
    forever) and tables missing a column the reader needs, before any data is queried."""
    try:
        schema = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as exc:
        raise DeckRefused(f"its collection is not an SQLite database ({exc})") from None
    for kind, name, sql in schema:
        if kind in {"view", "trigger"}:
            raise DeckRefused(
                f"its collection defines a {kind} ({name}); an Anki collection has none, "
                "and a view can run without end; refused"
            )
        if "virtual" in str(sql or "").lower().split("(")[0]:
            raise DeckRefused(f"its collection defines a virtual table ({name}); refused")
    tables = {str(name) for kind, name, _ in schema if kind == "table"}
    for table, needed in _EXPECTED_COLUMNS.items():
        if table not in tables:
            raise DeckRefused(f"its collection has no {table} table; not an Anki collection")
        have = {str(row[1]) for row in conn.execute(f"PRAGMA table_xinfo({table})")}
        missing = [column for column in needed if column not in have]
        if missing:
            raise DeckRefused(
                f"its collection's {table} table has no {', '.join(missing)} column; "
                "not an Anki collection"
            )


def _json_object(text: object, what: str) -> dict[str, Any]:
    if text in (None, ""):
        return {}
    if not isinstance(text, str | bytes):
        raise DeckRefused(f"its {what} is a {type(text).__name__}, not JSON text")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise DeckRefused(f"its {what} is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise DeckRefused(f"its {what} is a JSON {type(value).__name__}, not an object")
    return value


def _note_types(conn: sqlite3.Connection) -> dict[int, tuple[str, bool, list[str]]]:
    row = conn.execute("SELECT models, decks FROM col LIMIT 1").fetchone()
    if row is None:
        raise DeckRefused("its collection's col table is empty; not an Anki collection")
    models = _json_object(row[0], "note types (col.models)")
    types: dict[int, tuple[str, bool, list[str]]] = {}
    for key, model in models.items():
        if not isinstance(model, dict) or not str(key).lstrip("-").isdigit():
            raise DeckRefused(f"its note type {str(key)[:40]!r} (col.models) is not a note type")
        fields = model.get("flds")
        if not isinstance(fields, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in fields
        ):
            raise DeckRefused(
                f"its note type {str(model.get('name', key))[:40]!r} has no list of named fields"
            )
        types[int(key)] = (
            str(model.get("name", "?")),
            model.get("type") == 1,
            [f["name"] for f in fields],
        )
    if not types and "notetypes" in _tables(conn):  # schema 18: note types in their own tables
        for ntid, type_name in conn.execute("SELECT id, name FROM notetypes LIMIT 1000"):
            names = [
                str(r[0])
                for r in conn.execute(
                    "SELECT name FROM fields WHERE ntid = ? ORDER BY ord LIMIT 1000", (ntid,)
                )
            ]
            types[int(ntid)] = (str(type_name), False, names)
    return types


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _read(conn: sqlite3.Connection) -> tuple[list[RawNote], str | None]:
    """The notes in creation order, and the name of the deck they are in (one deck only)."""
    _check_schema(conn)
    types = _note_types(conn)
    notes: list[RawNote] = []
    text_bytes = 0
    rows = conn.execute(
        "SELECT id, guid, mid, tags, flds FROM notes ORDER BY id LIMIT ?", (MAX_NOTES + 1,)
    )
    for index, (nid, guid, mid, tags, flds) in enumerate(rows, start=1):
        if index > MAX_NOTES:
            raise DeckRefused(f"holds more than {MAX_NOTES:,} notes, the limit for one pack")
        for column, value, kind in (
            ("id", nid, int),
            ("mid", mid, int),
            ("guid", guid, str),
            ("tags", tags, str),
            ("flds", flds, str),
        ):
            if not isinstance(value, kind):
                found = "NULL" if value is None else type(value).__name__
                wanted = "an integer" if kind is int else "text"
                raise DeckRefused(
                    f"note {index}: its {column} is {found}, not {wanted}; not an Anki collection"
                )
        text_bytes += len(flds) + len(tags)
        if text_bytes > MAX_TEXT_BYTES:
            raise DeckRefused(
                f"its notes hold more than {_mib(MAX_TEXT_BYTES)} of text, the limit for one deck"
            )
        type_name, cloze, names = types.get(mid, ("unknown note type", False, []))
        values = flds.split("\x1f")
        names = names + [f"Field {i + 1}" for i in range(len(names), len(values))]
        notes.append(
            RawNote(
                nid,
                guid,
                type_name,
                cloze,
                tuple(zip(names, values, strict=False)),
                tuple(tags.split()),
            )
        )
    decks = _json_object(
        conn.execute("SELECT decks FROM col LIMIT 1").fetchone()[0], "decks (col.decks)"
    )
    used = {str(r[0]) for r in conn.execute("SELECT DISTINCT did FROM cards LIMIT 1000")}
    names = [
        str(d.get("name"))
        for key, d in decks.items()
        if key in used and isinstance(d, dict) and d.get("name")
    ]
    return notes, names[0] if len(names) == 1 else None


def read_in_this_process(raw: bytes) -> tuple[list[RawNote], str | None]:
    """What the child does (no caps of its own: call it only inside the capped child)."""
    conn = _open(_collection_bytes(raw))
    with contextlib.closing(conn):
        try:
            return _read(conn)
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise DeckRefused(
                    f"reading its collection took longer than the limit of {SQL_SECONDS:.0f} s"
                ) from None
            if "memory" in str(exc) or "too big" in str(exc):
                raise DeckRefused(
                    f"reading its collection needed over the limit of {_mib(MAX_SQLITE_HEAP)} "
                    "of memory"
                ) from None
            raise DeckRefused(f"its collection cannot be read ({exc})") from None
        except sqlite3.DatabaseError as exc:
            raise DeckRefused(f"its collection is damaged ({exc})") from None
        except MemoryError:  # SQLite's "out of memory" at its heap limit comes as this
            raise DeckRefused(
                f"reading its collection needed over the limit of {_mib(MAX_SQLITE_HEAP)} of memory"
            ) from None


def _main() -> None:
    """The child: the package on stdin, the notes (or one line of refusal) as JSON on stdout."""
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
    resource.setrlimit(resource.RLIMIT_FSIZE, (CHILD_FILE_BYTES, CHILD_FILE_BYTES))
    cpu = int(CHILD_SECONDS) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    raw = sys.stdin.buffer.read()
    try:
        notes, deck = read_in_this_process(raw)
    except DeckRefused as exc:
        answer: dict[str, Any] = {"refused": str(exc)}
    else:
        answer = {
            "notes": [
                {
                    "nid": n.nid,
                    "guid": n.guid,
                    "type": n.type_name,
                    "cloze": n.cloze,
                    "fields": [list(f) for f in n.fields],
                    "tags": list(n.tags),
                }
                for n in notes
            ],
            "deck": deck,
        }
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    _main()
