"""Hostile and damaged `.apkg` files: each is refused with one line naming the bound or the
fault, within a time bound, without a traceback, without temporary files, writing nothing."""

from __future__ import annotations

import json
import os
import sqlite3
import struct
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.questions.importers import apkg_read
from bot.questions.importing import ImportRefused, run_import
from tests.test_cli import studybot

BASIC = {"1": {"name": "Basic", "type": 0, "flds": [{"name": "Front"}, {"name": "Back"}]}}
DECKS = {"1": {"name": "Hostile"}}


def _collection(
    path: Path,
    *,
    models: object = json.dumps(BASIC),
    notes: str = "CREATE TABLE notes (id INTEGER PRIMARY KEY, guid TEXT, mid INTEGER, "
    "tags TEXT, flds TEXT)",
    rows: list[tuple[object, ...]] | None = None,
    columns: int = 5,
) -> bytes:
    """A small collection in the legacy layout, with the parts a test makes hostile."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE col (models TEXT, decks TEXT)")
    conn.execute("INSERT INTO col VALUES (?, ?)", (models, json.dumps(DECKS)))
    conn.execute("CREATE TABLE cards (did INTEGER)")
    conn.execute("INSERT INTO cards VALUES (1)")
    conn.execute(notes)
    for row in rows if rows is not None else [(1, "g1", 1, "tag", "Front\x1fBack")]:
        conn.execute(f"INSERT INTO notes VALUES ({', '.join('?' * columns)})", row)
    conn.commit()
    conn.close()
    data = path.read_bytes()
    path.unlink()
    return data


def _package(path: Path, collection: bytes, name: str = "collection.anki2") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, collection)
        archive.writestr("media", "{}")
    return path


def _patch_first_entry(path: Path, offset_local: int, offset_central: int, value: bytes) -> None:
    """Overwrite a field of the first entry's local header and central directory record."""
    data = bytearray(path.read_bytes())
    local = data.index(b"PK\x03\x04")
    central = data.index(b"PK\x01\x02")
    data[local + offset_local : local + offset_local + len(value)] = value
    data[central + offset_central : central + offset_central + len(value)] = value
    path.write_bytes(bytes(data))


def _tree_size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


@pytest.fixture
def tmpdir_watched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR pointed at an empty folder of the test's own, to measure what a read leaves or
    spills there (SQLite spills a big sort into TMPDIR, else /var/tmp)."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setenv("SQLITE_TMPDIR", str(folder))
    return folder


ENDLESS_VIEW = (
    "CREATE VIEW notes AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
    "SELECT x AS id, 'g' || x AS guid, 1 AS mid, '' AS tags, "
    "printf('%.*c', 4000, 'x') || char(31) || 'b' AS flds FROM r"
)


def test_an_endless_view_is_refused_in_one_line_fast_and_spills_nothing(
    tmp_path: Path, tmpdir_watched: Path
) -> None:
    conn = sqlite3.connect(tmp_path / "c.anki2")
    conn.execute("CREATE TABLE col (models TEXT, decks TEXT)")
    conn.execute("INSERT INTO col VALUES (?, ?)", (json.dumps(BASIC), json.dumps(DECKS)))
    conn.execute("CREATE TABLE cards (did INTEGER)")
    conn.execute(ENDLESS_VIEW)
    conn.commit()
    conn.close()
    deck = _package(tmp_path / "endless.apkg", (tmp_path / "c.anki2").read_bytes())
    (tmp_path / "c.anki2").unlink()
    assert deck.stat().st_size < 4096
    out = tmp_path / "endless.yaml"
    started = time.monotonic()
    proc = studybot(
        "questions",
        "import",
        str(deck),
        "--out",
        str(out),
        env={"TMPDIR": str(tmpdir_watched), "SQLITE_TMPDIR": str(tmpdir_watched)},
    )
    assert time.monotonic() - started < 30
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "defines a view (notes)" in lines[0]
    assert not out.exists()
    assert _tree_size(tmpdir_watched) == 0
    assert list(tmpdir_watched.iterdir()) == []


def test_a_runaway_query_hits_the_heap_limit_not_the_disk(
    tmp_path: Path, tmpdir_watched: Path
) -> None:
    """No view: a generated column that builds a 600 MB value is stopped by SQLite's heap
    limit, with the bound named."""
    collection = _collection(
        tmp_path / "c.anki2",
        notes="CREATE TABLE notes (id INTEGER PRIMARY KEY, guid TEXT, mid INTEGER, tags TEXT, "
        "front TEXT, flds TEXT AS (front || printf('%.*c', 600000000, 'x')))",
        rows=[],
        columns=6,
    )
    conn = sqlite3.connect(tmp_path / "c2.anki2")
    conn.deserialize(collection)
    conn.execute("INSERT INTO notes (id, guid, mid, tags, front) VALUES (1, 'g', 1, '', 'f')")
    conn.commit()
    data = conn.serialize()
    conn.close()
    deck = _package(tmp_path / "heap.apkg", data)
    started = time.monotonic()
    with pytest.raises(ImportRefused, match=r"over the limit of 256 MiB of memory"):
        run_import(deck)
    assert time.monotonic() - started < 30
    assert _tree_size(tmpdir_watched) == 0


def test_a_slow_query_hits_the_time_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The progress handler stops a statement past the budget (shortened here to 0 s)."""
    rows = [(i, f"g{i}", 1, "", f"Front {i}\x1fBack {i}") for i in range(1, 1500)]
    data = _collection(tmp_path / "c.anki2", rows=rows)
    monkeypatch.setattr(apkg_read, "SQL_SECONDS", 0.0)
    with pytest.raises(apkg_read.DeckRefused, match=r"took longer than the limit of 0 s"):
        apkg_read.read_in_this_process(_package(tmp_path / "slow.apkg", data).read_bytes())


def _encrypted(path: Path) -> None:
    _patch_first_entry(path, 6, 8, struct.pack("<H", 0x1))


def _zstd_method(path: Path) -> None:
    _patch_first_entry(path, 8, 10, struct.pack("<H", 93))


def _bad_crc(path: Path) -> None:
    _patch_first_entry(path, 14, 16, b"\xde\xad\xbe\xef")


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (_encrypted, "its collection.anki2 is encrypted"),
        (_zstd_method, "uses zip compression method 93; only stored and deflate"),
        (_bad_crc, "its collection.anki2 is damaged (Bad CRC-32"),
    ],
    ids=["encrypted", "unknown-compression", "bad-crc"],
)
def test_a_damaged_zip_entry_is_one_line_and_writes_nothing(
    tmp_path: Path, damage: Callable[[Path], None], words: str
) -> None:
    deck = _package(tmp_path / "damaged.apkg", _collection(tmp_path / "c.anki2"))
    damage(deck)
    out = tmp_path / "out.yaml"
    proc = studybot("questions", "import", str(deck), "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"studybot: {deck}: {proc.stderr.split(': ', 2)[2].strip()}"
    ]
    assert words in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda p: _collection(p, models="{not json"), "note types (col.models) is not valid JSON"),
        (lambda p: _collection(p, models="[1, 2]"), "is a JSON list, not an object"),
        (lambda p: _collection(p, models='{"1": 5}'), "note type '1' (col.models) is not a note"),
        (
            lambda p: _collection(p, models='{"1": {"name": "X", "flds": "Front"}}'),
            "note type 'X' has no list of named fields",
        ),
        (
            lambda p: _collection(p, rows=[(1, "g", 1, "", b"Front\x1fBack")]),
            "note 1: its flds is bytes, not text",
        ),
        (
            lambda p: _collection(p, rows=[(1, "g", "one", "", "Front\x1fBack")]),
            "note 1: its mid is str, not an integer",
        ),
        (
            lambda p: _collection(p, notes="CREATE TABLE notes (id, guid, mid, tags, flds2)"),
            "notes table has no flds column",
        ),
        (lambda p: b"SQLite format 3\x00" + b"\xff" * 200, "is not an SQLite database"),
        (lambda p: b"hello", "is not an SQLite database"),
    ],
    ids=[
        "bad-json",
        "models-list",
        "model-number",
        "fields-string",
        "blob-fields",
        "text-mid",
        "missing-column",
        "damaged-sqlite",
        "not-sqlite",
    ],
)
def test_collection_data_of_the_wrong_shape_is_one_line(
    tmp_path: Path, build: Callable[[Path], bytes], words: str
) -> None:
    deck = _package(tmp_path / "odd.apkg", build(tmp_path / "c.anki2"))
    with pytest.raises(ImportRefused) as refused:
        run_import(deck, out=tmp_path / "out.yaml")
    assert words in str(refused.value)
    assert "\n" not in str(refused.value)
    assert str(refused.value).startswith(f"{deck}: ")
    assert not (tmp_path / "out.yaml").exists()


def test_a_missing_table_is_named(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "c.anki2")
    conn.execute("CREATE TABLE col (models TEXT, decks TEXT)")
    conn.commit()
    conn.close()
    deck = _package(tmp_path / "bare.apkg", (tmp_path / "c.anki2").read_bytes())
    with pytest.raises(ImportRefused, match="its collection has no notes table"):
        run_import(deck)


def test_a_trigger_is_refused_before_any_query(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "c.anki2")
    conn.deserialize(_collection(tmp_path / "x.anki2"))
    conn.execute("CREATE TRIGGER t AFTER INSERT ON cards BEGIN DELETE FROM notes; END")
    conn.commit()
    data = conn.serialize()
    conn.close()
    with pytest.raises(ImportRefused, match=r"defines a trigger \(t\)"):
        run_import(_package(tmp_path / "trigger.apkg", data))


def test_too_many_notes_is_refused_with_the_limit(tmp_path: Path) -> None:
    rows = [(i, f"g{i}", 1, "", f"Front {i}\x1fBack {i}") for i in range(1, 2003)]
    deck = _package(tmp_path / "many.apkg", _collection(tmp_path / "c.anki2", rows=rows))
    with pytest.raises(ImportRefused, match="holds more than 2,000 notes, the limit for one pack"):
        run_import(deck)


def test_a_zip_bomb_collection_is_refused_before_it_is_unpacked(tmp_path: Path) -> None:
    deck = tmp_path / "bomb.apkg"
    with (
        zipfile.ZipFile(deck, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open("collection.anki2", "w", force_zip64=True) as entry,
    ):
        for _ in range(40):
            entry.write(b"\0" * (1 << 20))
    assert deck.stat().st_size < 200_000
    with pytest.raises(ImportRefused, match=r"over the limit of 200:1 \(a zip bomb\?\)"):
        run_import(deck)


def test_a_package_of_too_many_files_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _collection(tmp_path / "c.anki2")
    deck = tmp_path / "crowded.apkg"
    with zipfile.ZipFile(deck, "w") as archive:
        archive.writestr("collection.anki2", data)
        for n in range(30):
            archive.writestr(str(n), b"")
    monkeypatch.setattr(apkg_read, "MAX_ENTRIES", 20)
    with pytest.raises(apkg_read.DeckRefused, match="holds 31 files, over the limit of 20"):
        apkg_read.read_in_this_process(deck.read_bytes())


def test_a_well_formed_small_deck_still_imports(tmp_path: Path, tmpdir_watched: Path) -> None:
    deck = _package(tmp_path / "fine.apkg", _collection(tmp_path / "c.anki2"))
    report = run_import(deck)
    assert [(i.data["prompt"], i.data["answer"]) for i in report.result.items] == [
        ("Front", "Back")
    ]
    assert report.result.title == "Hostile"
    assert os.listdir(tmpdir_watched) == []
