"""`studybot questions import`: the flow around the importers, and the command itself."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from bot.questions.importers import Format
from bot.questions.importing import ImportRefused, run_import
from tests.test_cli import studybot

DATA = Path(__file__).resolve().parents[1] / "data" / "import"
SHIPPED = Path(__file__).resolve().parents[2] / "questions"

NEAR_COPY = """\
pack: group-cards
title: Group cards
items:
  - id: g-flash-1
    kind: flashcard
    difficulty: easy
    prompt: "What does setting requires_grad on a tensor tell PyTorch?"
    answer: To record operations on it.
"""


def test_run_import_writes_a_pack_and_reports_every_problem(tmp_path: Path) -> None:
    out = tmp_path / "questions" / "sheet.yaml"
    report = run_import(DATA / "broken-sheet.txt", out=out, packs_dir=tmp_path / "none")
    assert not out.exists()  # a run with errors exits 1 and writes no file
    assert not out.parent.exists() or not any(out.parent.iterdir())  # no temporary left
    assert len(report.errors) == 7
    assert report.summary().startswith(
        f"imported 3 item(s) (2 flashcard, 1 practice) from {DATA / 'broken-sheet.txt'} as "
        "cheatsheet [cheat-sheet layout (title 'Broken sheet - Cheat Sheet & Quick Revision' "
        "at line 1)]"
    )
    assert report.summary().endswith(" -> nothing written; 0 warning(s), 7 error(s)")
    assert [p.line for p in report.problems] == sorted(p.line for p in report.problems)


def test_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "sheet.yaml"
    out.write_text("precious")
    with pytest.raises(ImportRefused, match="exists; pass --force"):
        run_import(DATA / "autograd-sheet.txt", out=out)
    assert out.read_text() == "precious"
    run_import(DATA / "autograd-sheet.txt", out=out, force=True)
    assert out.read_text().startswith("# Imported from autograd-sheet.txt")


def test_pack_option_sets_the_slug_and_the_ids(tmp_path: Path) -> None:
    report = run_import(DATA / "quizlet-terms.tsv", pack="terms", packs_dir=tmp_path)
    assert report.result.pack == "terms"
    assert report.result.items[0].id == "terms-flash-01"
    with pytest.raises(ImportRefused, match="--pack 'Bad Name'"):
        run_import(DATA / "quizlet-terms.tsv", pack="Bad Name")


def test_import_warns_about_near_duplicates_of_existing_packs(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "group.yaml").write_text(NEAR_COPY)
    report = run_import(DATA / "autograd-sheet.txt", packs_dir=packs)
    duplicates = [p for p in report.warnings if "near-duplicate" in p.message]
    assert [str(p) for p in duplicates] == [
        f"{DATA / 'autograd-sheet.txt'}:7: warning: autograd-sheet-flash-01: near-duplicate of "
        f"g-flash-1 ({packs / 'group.yaml'}:4), similarity 100: 'What does setting "
        "requires_grad on a tensor tell…' ~ 'What does setting requires_grad on a tensor tell…'"
    ]


def test_import_reports_ids_and_pack_names_already_taken(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    first = run_import(DATA / "quizlet-terms.tsv", packs_dir=packs)
    assert not [p for p in first.problems if p.severity == "error" and "already" in p.message]
    assert first.yaml_text is not None
    (packs / "terms.yaml").write_text(first.yaml_text)
    # Importing the same file again into another file would clash with the first one ...
    again = run_import(DATA / "quizlet-terms.tsv", out=tmp_path / "copy.yaml", packs_dir=packs)
    taken = [p.message for p in again.errors if "already used" in p.message]
    assert taken[0].startswith("pack name 'quizlet-terms' is already used by")
    assert len(taken) == 5  # the pack name and four ids
    # ... but replacing the same file is an update, not a clash.
    update = run_import(
        DATA / "quizlet-terms.tsv", out=packs / "terms.yaml", force=True, packs_dir=packs
    )
    assert not [p for p in update.problems if "already used" in p.message]
    assert not [p for p in update.problems if "near-duplicate" in p.message]


def test_the_reference_style_import_has_no_duplicates_with_the_shipped_pack() -> None:
    report = run_import(DATA / "autograd-sheet.txt", packs_dir=SHIPPED)
    assert not [p for p in report.problems if "near-duplicate" in p.message]


# --- the command ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("autograd-sheet.txt", "cheatsheet"),
        ("quizlet-terms.tsv", "tsv"),
        ("spreadsheet-mc.csv", "csv"),
        ("opentdb-computers.json", "opentdb"),
    ],
)
def test_command_output_lints_ok(name: str, fmt: str, tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    proc = studybot(
        "questions", "import", str(DATA / name), "--format", fmt, "--packs", str(tmp_path)
    )
    assert proc.returncode in {0, 1}, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("imported ")
    out.write_text(proc.stdout)
    lint = studybot("questions", "lint", str(out))
    assert lint.returncode == 0, lint.stdout + lint.stderr
    *warnings, summary = lint.stdout.strip().splitlines()
    assert summary.startswith("ok: 1 pack(s)")
    # An imported choice that is a value ("6", "True") has no `why` and no check behind it:
    # lint says so, as for any pack. Nothing else is warned about.
    assert all(
        re.search(r": warning: [a-z0-9-]+: choice \d+ is code or a value ", line)
        for line in warnings
    ), warnings


def test_command_prints_yaml_to_stdout_and_problems_to_stderr(tmp_path: Path) -> None:
    proc = studybot(
        "questions", "import", str(DATA / "mixed-noheader.csv"), "--packs", str(tmp_path)
    )
    assert proc.returncode == 1  # one row could not be imported
    assert proc.stdout.startswith("# Imported from mixed-noheader.csv (csv)")
    assert "pack: mixed-noheader\n" in proc.stdout
    # Paths are named as the user would type them, from where the command runs.
    assert "tests/data/import/mixed-noheader.csv:4: a row with 3 filled cell(s)" in proc.stderr
    assert str(DATA) not in proc.stderr


def test_command_refuses_unknown_formats_and_existing_files(tmp_path: Path) -> None:
    prose = tmp_path / "notes.txt"
    prose.write_text("just prose\nand more prose\n")
    proc = studybot("questions", "import", str(prose))
    assert proc.returncode == 2
    assert "cannot tell the format" in proc.stderr
    assert "--format cheatsheet, notes, csv, tsv, opentdb, anki or anki-text" in proc.stderr
    existing = tmp_path / "x.yaml"
    existing.write_text("keep")
    proc = studybot("questions", "import", str(DATA / "quizlet-terms.tsv"), "--out", str(existing))
    assert proc.returncode == 2
    assert existing.read_text() == "keep"


def test_format_enum_matches_the_cli_choices() -> None:
    assert [f.value for f in Format] == [
        "cheatsheet",
        "csv",
        "tsv",
        "opentdb",
        "notes",
        "anki",
        "anki-text",
    ]


def test_a_file_of_a_million_tiny_rows_is_refused_at_the_item_limit_quickly(
    tmp_path: Path,
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text("question,answer\n" + "a,b\n" * 900_000)  # under the 4 MiB file limit
    started = time.monotonic()
    proc = studybot("questions", "import", str(rows), "--out", str(tmp_path / "rows.yaml"))
    assert time.monotonic() - started < 20
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"studybot: {rows}: more than 2,000 questions (line 2002), the limit for one pack; "
        "split the file; nothing written"
    ]
    assert not (tmp_path / "rows.yaml").exists()


def test_a_file_of_endless_bad_rows_stops_at_the_problem_limit(tmp_path: Path) -> None:
    rows = tmp_path / "bad.csv"
    rows.write_text("question,answer\n" + "only one cell\n" * 100_000)
    with pytest.raises(
        ImportRefused, match=r"more than 1,000 problems by line 100\d; stopped reading"
    ):
        run_import(rows, format_=Format.CSV)
