"""Anki decks in and out: `questions export --apkg` and `questions import` of .apkg and .txt."""

from __future__ import annotations

import io
import os
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import genanki
import pytest
import yaml

from bot.questions.anki_export import pack_apkg
from bot.questions.importers import Format, import_bytes
from bot.questions.importing import ImportRefused, run_import
from bot.questions.loader import load_packs
from tests.test_cli import ROOT, studybot

PACK = """\
pack: anki-trip
title: Anki round trip
items:
  - id: trip-flash
    kind: flashcard
    difficulty: easy
    tags: [autograd, leaf]
    prompt: What makes a tensor a *leaf*?
    answer: |-
      autograd did not compute it from other tensors
      (its grad_fn is None)
  - id: trip-mc
    kind: multiple_choice
    difficulty: hard
    tags: [graph]
    prompt: When is the graph built?
    choices:
      - text: Once, at construction
        why: nothing has run yet
      - text: On every forward pass
        correct: true
      - text: "When <backward> is called & never again"
    explanation: Each operation records a node as it runs.
  - id: trip-code
    kind: flashcard
    difficulty: medium
    prompt: What does this print?
    code: |
      if 1 < 2 and "a" > "<b>":
          print("x & y")
    expect_stdout: "x & y"
    answer: x & y
"""


def _pack_file(tmp_path: Path) -> Path:
    path = tmp_path / "packs" / "anki-trip.yaml"
    path.parent.mkdir()
    path.write_text(PACK)
    return path


def _collection(apkg: bytes) -> sqlite3.Connection:
    with zipfile.ZipFile(io.BytesIO(apkg)) as archive:
        data = archive.read("collection.anki2")
    conn = sqlite3.connect(":memory:")
    conn.deserialize(data)
    return conn


def test_export_then_import_gives_the_same_questions_answers_and_tags(tmp_path: Path) -> None:
    source = _pack_file(tmp_path)
    out = tmp_path / "deck.apkg"
    exported = studybot(
        "questions", "export", "anki-trip", "--apkg", str(out), "--packs", str(source.parent)
    )
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.strip() == (
        f"exported anki-trip (3 notes: 2 flashcard, 1 multiple_choice) to {out}"
    )
    back = tmp_path / "back.yaml"
    imported = studybot(
        "questions", "import", str(out), "--out", str(back), "--packs", str(tmp_path / "none")
    )
    assert imported.returncode == 0, imported.stderr
    assert "imported 3 item(s) (2 flashcard, 1 multiple_choice)" in imported.stderr
    assert "as anki [the file name ends in .apkg]" in imported.stderr

    original = yaml.safe_load(PACK)["items"]
    again = yaml.safe_load(back.read_text())
    assert again["title"] == "Anki round trip"  # the deck's name
    items = again["items"]
    for before, after in zip(original[:2], items[:2], strict=True):
        for key in ("kind", "difficulty", "tags", "prompt"):
            assert after.get(key) == before.get(key), key
    assert items[0]["answer"] == original[0]["answer"]
    assert items[1]["choices"] == original[1]["choices"]
    assert items[1]["explanation"] == original[1]["explanation"]
    # Code comes back as a fenced block in the prompt (no expectation travels with it).
    assert items[2]["prompt"] == (
        'What does this print?\n\n```\nif 1 < 2 and "a" > "<b>":\n    print("x & y")\n```'
    )
    assert items[2]["answer"] == "x & y"
    # ... and the imported pack lints clean.
    assert not load_packs(back).errors


def test_code_is_escaped_inside_pre_and_choices_are_on_the_front(tmp_path: Path) -> None:
    pack = load_packs(_pack_file(tmp_path)).packs[0].pack
    conn = _collection(pack_apkg(pack))
    fields = [row[0].split("\x1f") for row in conn.execute("SELECT flds FROM notes ORDER BY id")]
    code_front = fields[2][0]
    assert "<pre><code>if 1 &lt; 2 and &quot;a&quot; &gt; &quot;&lt;b&gt;&quot;:" in code_front
    assert "<b>" not in code_front
    question, _, choices, answer, explanation = fields[1]
    assert question == "When is the graph built?"
    assert choices.startswith('<ol type="A"><li>Once, at construction</li>')
    assert "When &lt;backward&gt; is called &amp; never again" in choices
    assert answer == "B. On every forward pass"
    assert explanation.startswith("Each operation records a node as it runs.")
    tags = [row[0].split() for row in conn.execute("SELECT tags FROM notes ORDER BY id")]
    assert tags[0] == ["autograd", "leaf", "difficulty::easy"]


def test_ids_are_stable_so_re_exporting_updates_rather_than_duplicates(tmp_path: Path) -> None:
    pack = load_packs(_pack_file(tmp_path)).packs[0].pack
    first, second = _collection(pack_apkg(pack)), _collection(pack_apkg(pack))

    def ids(conn: sqlite3.Connection) -> tuple[object, ...]:
        guids = [row[0] for row in conn.execute("SELECT guid FROM notes ORDER BY guid")]
        mids = sorted({row[0] for row in conn.execute("SELECT mid FROM notes")})
        decks = sorted({row[0] for row in conn.execute("SELECT did FROM cards")})
        return guids, mids, decks

    assert ids(first) == ids(second)
    renamed = pack.model_copy(update={"pack": "other-pack"})
    assert ids(_collection(pack_apkg(renamed)))[1:] != ids(first)[1:]


def _deck_with_cloze_and_media(path: Path) -> None:
    deck = genanki.Deck(2059400110, "Mixed deck")
    deck.add_note(
        genanki.Note(model=genanki.BASIC_MODEL, fields=["Front one", "Back one"], tags=["ok"])
    )
    deck.add_note(
        genanki.Note(model=genanki.CLOZE_MODEL, fields=["{{c1::Paris}} is in France", ""])
    )
    deck.add_note(
        genanki.Note(
            model=genanki.BASIC_MODEL, fields=['Who is this? <img src="cat.png">', "A cat"]
        )
    )
    deck.add_note(genanki.Note(model=genanki.BASIC_MODEL, fields=["Say it", "[sound:hello.mp3]"]))
    deck.add_note(
        genanki.Note(
            model=genanki.BASIC_MODEL,
            fields=["Two<br>lines &amp; more", "<div>back</div><div>two</div>"],
            tags=["Deck::Sub_Topic"],
        )
    )
    genanki.Package(deck).write_to_file(str(path))


def test_cloze_and_media_notes_are_named_and_the_rest_imports(tmp_path: Path) -> None:
    deck = tmp_path / "mixed.apkg"
    _deck_with_cloze_and_media(deck)
    report = run_import(deck, out=tmp_path / "mixed.yaml")
    errors = [str(p) for p in report.errors]
    assert len(errors) == 3
    assert errors[0].startswith(f"{deck}:2: note 2 (id ")
    assert "a cloze note (Cloze (genanki)) cannot become a question; not imported" in errors[0]
    assert errors[1].startswith(f"{deck}:3: note 3 ")
    assert "refers to media (cat.png)" in errors[1]
    assert "refers to media (hello.mp3)" in errors[2]
    # A run with errors (exit 1) writes no file; the rest is in the YAML it prints.
    assert not (tmp_path / "mixed.yaml").exists()
    assert report.yaml_text is not None
    items = yaml.safe_load(report.yaml_text)["items"]
    assert [(i["prompt"], i["answer"]) for i in items] == [
        ("Front one", "Back one"),
        ("Two\nlines & more", "back\ntwo"),
    ]
    assert items[1]["tags"] == ["deck-sub_topic"]
    assert report.summary().endswith("-> nothing written; 0 warning(s), 3 error(s)")


def _modern(legacy: Path, out: Path) -> None:
    """``legacy`` re-exported by Anki's own library in the format of Anki 2.1.50+."""
    from anki.collection import (
        Collection,
        ExportAnkiPackageOptions,
        ImportAnkiPackageOptions,
        ImportAnkiPackageRequest,
    )

    col = Collection(str(out.with_suffix(".anki2")))
    try:
        col.import_anki_package(
            ImportAnkiPackageRequest(
                package_path=str(legacy), options=ImportAnkiPackageOptions(with_scheduling=False)
            )
        )
        col.export_anki_package(
            out_path=str(out),
            options=ExportAnkiPackageOptions(
                legacy=False, with_scheduling=False, with_media=False, with_deck_configs=False
            ),
            limit=None,
        )
    finally:
        col.close()


def test_a_deck_in_the_new_anki_format_is_read_through_ankis_library(tmp_path: Path) -> None:
    legacy = tmp_path / "mixed.apkg"
    _deck_with_cloze_and_media(legacy)
    modern = tmp_path / "modern" / "mixed.apkg"
    modern.parent.mkdir()
    _modern(legacy, modern)
    with zipfile.ZipFile(modern) as archive:
        assert "collection.anki21b" in archive.namelist()
        assert "collection.anki21" not in archive.namelist()
    report = run_import(modern)
    assert [(i.data["prompt"], i.data["answer"]) for i in report.result.items] == [
        ("Front one", "Back one"),
        ("Two\nlines & more", "back\ntwo"),
    ]
    assert report.result.title == "Mixed deck"
    assert ["cloze note" in p.message or "media" in p.message for p in report.errors] == [
        True,
        True,
        True,
    ]


def test_a_broken_new_format_deck_is_one_clear_problem(tmp_path: Path) -> None:
    deck = tmp_path / "new.apkg"
    with zipfile.ZipFile(deck, "w") as archive:
        archive.writestr("collection.anki2", b"placeholder")
        archive.writestr("collection.anki21b", b"\x28\xb5\x2f\xfd")
        archive.writestr("media", b"")
    with pytest.raises(ImportRefused) as refused:
        run_import(deck)
    assert str(refused.value).startswith(f"{deck}: Anki's library cannot read this package (")
    assert "\n" not in str(refused.value)


def test_a_file_that_is_not_a_package_is_one_problem(tmp_path: Path) -> None:
    deck = tmp_path / "fake.apkg"
    deck.write_text("front\tback\n")
    with pytest.raises(ImportRefused) as refused:
        run_import(deck)
    assert str(refused.value) == f"{deck}: not an Anki package (not a zip file); nothing written"


ANKI_TEXT = (
    "#separator:tab\n"
    "#html:true\n"
    "#notetype column:1\n"
    "#tags column:4\n"
    "Basic\tWhat is <b>autograd</b> in <code>torch</code>?\tReverse-mode &amp; automatic differentiation\tautograd Basics\n"
    'Basic\t"Multi\nline front"\t<pre><code>x = 1 &lt; 2</code></pre>\t\n'
    "Cloze\t{{c1::torch}} is a library\t\tcloze\n"
    "Basic\tOnly a front\t\t\n"
)


def test_anki_plain_text_export_imports_with_tags_and_names_what_it_cannot(
    tmp_path: Path,
) -> None:
    result = import_bytes(ANKI_TEXT.encode(), "deck.txt")
    assert result.format is Format.ANKI_TEXT
    assert result.detected_by == "an Anki text export header (#separator:)"
    assert [(i.data["prompt"], i.data["answer"], i.data.get("tags")) for i in result.items] == [
        (
            "What is autograd in `torch`?",
            "Reverse-mode & automatic differentiation",
            ["autograd", "basics"],
        ),
        ("Multi line front", "```\nx = 1 < 2\n```", None),
    ]
    assert [(p.line, p.field) for p in result.errors] == [(8, "line 8"), (9, "line 9")]
    assert "cloze note" in result.errors[0].message
    assert "needs a filled front and back" in result.errors[1].message


def test_format_anki_on_text_and_an_unreadable_package_never_write_a_pack(tmp_path: Path) -> None:
    text = tmp_path / "deck.txt"
    text.write_text("a\tb\n")
    with pytest.raises(ImportRefused, match="not an Anki package"):
        run_import(text, format_=Format.ANKI, out=tmp_path / "x.yaml")
    assert not (tmp_path / "x.yaml").exists()
    with pytest.raises(ImportRefused, match="over the"):
        big = tmp_path / "big.txt"
        big.write_bytes(b"x" * (5 * 1024 * 1024))
        run_import(big)


def test_export_takes_a_pack_file_and_refuses_an_unknown_slug_or_an_existing_file(
    tmp_path: Path,
) -> None:
    source = _pack_file(tmp_path)
    out = tmp_path / "by-path.apkg"
    proc = studybot("questions", "export", str(source), "--apkg", str(out))
    assert proc.returncode == 0, proc.stderr
    assert _collection(out.read_bytes()).execute("SELECT count(*) FROM notes").fetchone() == (3,)

    again = studybot("questions", "export", str(source), "--apkg", str(out))
    assert again.returncode == 2
    assert f"{out} exists; pass --force to overwrite it" in again.stderr

    missing = studybot(
        "questions", "export", "no-such-pack", "--apkg", str(tmp_path / "x.apkg"),
        "--packs", str(source.parent),
    )  # fmt: skip
    assert missing.returncode == 1
    assert f"no pack 'no-such-pack' in {source.parent} (packs there: anki-trip)" in missing.stderr
    assert not (tmp_path / "x.apkg").exists()


# --- the README's round trip: export, then import the same deck ---------------------------------


def _studybot_in(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI run from ``cwd``, as a user standing in their own folder runs it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=env,
    )


def _edit_note(apkg: Path, old: str, new: str) -> None:
    """Change a note's text inside the package, as an edit in Anki would."""
    with zipfile.ZipFile(apkg) as archive:
        data = archive.read("collection.anki2")
    conn = sqlite3.connect(":memory:")
    conn.deserialize(data)
    changed = conn.execute("UPDATE notes SET flds = replace(flds, ?, ?)", (old, new)).rowcount
    assert changed
    conn.commit()
    edited = conn.serialize()
    conn.close()
    with zipfile.ZipFile(apkg, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("collection.anki2", edited)
        archive.writestr("media", "{}")


def test_reimporting_an_exported_deck_matches_notes_by_guid_in_one_line(tmp_path: Path) -> None:
    source = _pack_file(tmp_path)
    exported = _studybot_in(
        tmp_path, "questions", "export", "anki-trip", "--apkg", "trip.apkg", "--packs", "packs"
    )
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.strip().endswith(" to trip.apkg")
    again = _studybot_in(
        tmp_path, "questions", "import", "trip.apkg", "--packs", str(source.parent)
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout == ""
    assert again.stderr.strip().splitlines() == [
        "trip.apkg: its 3 note(s) are the items of anki-trip in packs/anki-trip.yaml (matched "
        "by GUID, as Anki does with its own export), unchanged; updated nothing"
    ]


def test_a_deck_edited_since_export_stops_with_one_line_and_writes_nothing(
    tmp_path: Path,
) -> None:
    _pack_file(tmp_path)
    assert (
        _studybot_in(
            tmp_path, "questions", "export", "anki-trip", "--apkg", "trip.apkg", "--packs", "packs"
        ).returncode
        == 0
    )
    _edit_note(tmp_path / "trip.apkg", "On every forward pass", "On every pass")
    args = ("questions", "import", "trip.apkg", "--packs", "packs", "--out", "trip.yaml")
    stopped = _studybot_in(tmp_path, *args)
    assert stopped.returncode == 2
    assert "Traceback" not in stopped.stderr
    assert stopped.stderr.strip().splitlines() == [
        "studybot: trip.apkg: 1 of its notes is an item of anki-trip (matched by GUID) that "
        "differs from packs/anki-trip.yaml (trip-mc): edited in Anki or in the pack since the "
        "export; a deck cannot carry an item's code and checks back, so edit "
        "packs/anki-trip.yaml instead; nothing written"
    ]
    assert not (tmp_path / "trip.yaml").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["packs", "trip.apkg"]


def test_a_failed_import_leaves_no_file_so_the_next_run_is_not_refused(tmp_path: Path) -> None:
    deck = tmp_path / "mixed.apkg"
    _deck_with_cloze_and_media(deck)
    for _ in range(2):
        proc = _studybot_in(tmp_path, "questions", "import", "mixed.apkg", "--out", "mixed.yaml")
        assert proc.returncode == 1
        assert "exists" not in proc.stderr
        assert (
            proc.stderr.strip()
            .splitlines()[-1]
            .endswith("-> nothing written; 0 warning(s), 3 error(s)")
        )
        assert proc.stderr.startswith("mixed.apkg:2: note 2 (id ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mixed.apkg"]


def test_export_names_the_packs_folder_relative_to_where_the_user_stands(
    tmp_path: Path,
) -> None:
    _pack_file(tmp_path)
    (tmp_path / "packs" / "anki-trip.yaml").write_text("pack: [broken\n")
    proc = _studybot_in(
        tmp_path,
        "questions",
        "export",
        "anki-trip",
        "--apkg",
        str(tmp_path / "x.apkg"),
        "--packs",
        str(tmp_path / "packs"),
    )
    assert proc.returncode == 1
    assert str(tmp_path) not in proc.stderr
    assert "packs/anki-trip.yaml:1" in proc.stderr
    assert "no pack 'anki-trip' in packs " in proc.stderr
    assert not (tmp_path / "x.apkg").exists()


def test_notes_added_in_anki_import_and_the_packs_own_are_left_out(tmp_path: Path) -> None:
    source = _pack_file(tmp_path)
    deck = tmp_path / "trip.apkg"
    deck.write_bytes(pack_apkg(load_packs(source).packs[0].pack))
    with zipfile.ZipFile(deck) as archive:
        data = archive.read("collection.anki2")
    conn = sqlite3.connect(":memory:")
    conn.deserialize(data)
    nid, mid = conn.execute("SELECT id, mid FROM notes ORDER BY id LIMIT 1").fetchone()
    conn.execute(
        "INSERT INTO notes (id, guid, mid, mod, usn, tags, flds, sfld, csum, flags, data) "
        "VALUES (?, ?, ?, 0, -1, '', ?, '', 0, 0, '')",
        (nid + 1000, "new-in-anki", mid, "What is a new note?\x1fOne added in Anki"),
    )
    conn.commit()
    with zipfile.ZipFile(deck, "w") as archive:
        archive.writestr("collection.anki2", conn.serialize())
        archive.writestr("media", "{}")
    conn.close()
    report = run_import(deck, pack="added", packs_dir=source.parent)
    assert [(i.data["prompt"], i.data["answer"]) for i in report.result.items] == [
        ("What is a new note?", "One added in Anki")
    ]
    assert not report.errors
    assert "3 note(s) already in anki-trip (by GUID) left out" in report.summary()
