"""`studybot scores import FILE.csv` and `scores undo-import ID`, run as an operator runs them,
on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

from bot.app import Built
from bot.core.models import Window
from bot.storage.database import Database
from bot.storage.scores import ScoreStore
from tests.helpers import member
from tests.test_cli import studybot


def _import(db_target: str | Path, csv_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    if isinstance(db_target, Path):
        return studybot("scores", "import", str(csv_path), "--db", str(db_target), *extra)
    return studybot("scores", "import", str(csv_path), *extra, env={"DATABASE_URL": db_target})


async def _members(built: Built, *names: str) -> None:
    """Members the bot knows: each has run /stats once in workspace ws1."""
    for name in names:
        await built.services.standings.member_report(member(name))


async def test_points_count_all_time_only_and_the_same_file_is_refused_the_second_time(
    built: Built, db: Database, db_target: str | Path, tmp_path: Path
) -> None:
    await _members(built, "alice", "bob", "Carol")
    before = await built.services.standings.member_report(member("alice"))
    source = tmp_path / "old-bot.csv"
    source.write_text("name,points\r\nalice,120\r\ncarol,30\r\n")  # names ignore case
    done = _import(db_target, source)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"imported 150 point(s) for 2 member(s) from {source} into test ws1: they count in "
        "the all-time board (not this week's or month's, not streaks)",
        "import #1; to take it back: studybot scores undo-import 1",
    ]
    alice = await built.services.standings.member_report(member("alice"))
    assert (alice.stats.points_all, alice.stats.points_week) == (120, 0)
    assert alice.stats.current_streak == before.stats.current_streak == 0
    assert alice.stats.answered == 0
    board = (await built.services.standings.leaderboard(member("bob"), Window.ALL)).plain_text()
    assert board.index("alice") < board.index("Carol")
    assert "120" in board
    week = (await built.services.standings.leaderboard(member("bob"), Window.WEEK)).plain_text()
    assert "alice" not in week
    assert await ScoreStore(db).consistency_problems() == []

    # The same rows again, with other line endings, order and case: refused, not doubled.
    again = tmp_path / "again.csv"
    again.write_text("Name,Points\nCAROL,30\nAlice,120\n")
    refused = _import(db_target, again)
    assert refused.returncode == 1
    assert f"{again}: these points were imported already ({source}, " in refused.stderr
    assert f"studybot: {again} was not imported; nothing changed" in refused.stderr
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 120


async def test_a_bad_row_refuses_the_whole_file_naming_each_row_and_field(
    built: Built, db_target: str | Path, tmp_path: Path
) -> None:
    await _members(built, "alice", "bob")
    source = tmp_path / "bad.csv"
    source.write_text(
        "member_id,points\n"
        "id-alice,10\n"  # good, but not written: another row is bad
        "id-bob,ten\n"
        "id-nobody,5\n"
        ",3\n"
        "id-alice,4\n"
    )
    proc = _import(db_target, source)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"{source}: row 3, points: 'ten' is not a whole number",
        f"{source}: row 4, member_id: 'id-nobody' is not a member the bot knows here",
        f"{source}: row 5, member_id: empty",
        f"{source}: row 6, member_id: 'id-alice' is alice, already on row 2",
        f"studybot: {source} was not imported; nothing changed",
    ]
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 0


async def test_an_ambiguous_name_and_several_workspaces_are_refused_clearly(
    built: Built, db_target: str | Path, tmp_path: Path
) -> None:
    await built.services.standings.member_report(member("sam"))
    await built.services.standings.member_report(replace(member("sam"), member="id-sam2"))
    source = tmp_path / "names.csv"
    source.write_text("points,member\n7,Sam\n")
    proc = _import(db_target, source)
    assert proc.returncode == 1
    assert (
        f"{source}: row 2, member: 'Sam' is the name of 2 members (id-sam, id-sam2); "
        "use a member_id column"
    ) in proc.stderr
    source.write_text("points,member\n7,id-sam2\n")  # `member` takes an id too
    assert _import(db_target, source).returncode == 0
    await built.services.standings.member_report(member("zed", workspace="ws2"))
    second = tmp_path / "more.csv"
    second.write_text("name,points\nzed,1\n")
    proc = _import(db_target, second)
    assert proc.returncode == 1
    assert "has 2 workspaces; pass --workspace ID (one of: test ws1, test ws2)" in proc.stderr
    proc = _import(db_target, second, "--workspace", "ws2")
    assert proc.returncode == 0, proc.stderr
    assert "for 1 member(s)" in proc.stdout and "into test ws2" in proc.stdout
    header = tmp_path / "header.csv"
    header.write_text("who,score\nzed,1\n")
    proc = _import(db_target, header, "--workspace", "ws2")
    assert proc.returncode == 1
    assert (
        "row 1 (the header) needs a member column (member_id, member or name) and a points "
        "column; found 'who', 'score'"
    ) in proc.stderr


async def test_the_workspace_is_chosen_by_its_exact_id_never_by_a_name(
    built: Built, db_target: str | Path, tmp_path: Path
) -> None:
    """A server named after another workspace's id received the points: a name never picks."""
    await _members(built, "alice")
    impostor = replace(member("mallory", workspace="ws3"), workspace_name="ws1")
    await built.services.standings.member_report(impostor)
    named = replace(member("nina", workspace="ws4"), workspace_name="Study Hall")
    await built.services.standings.member_report(named)
    source = tmp_path / "points.csv"
    source.write_text("name,points\nalice,5\n")

    proc = _import(db_target, source, "--workspace", "ws1")  # ws1's id, and ws3's name
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[:3] == [
        "'ws1' matches 2 workspaces; --workspace takes a platform id (or PLATFORM:ID), exactly:",
        "  test:ws1 (id ws1, platform test, name '')",
        "  test:ws3 (id ws3, platform test, name 'ws1')",
    ]
    proc = _import(db_target, source, "--workspace", "Study Hall")
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[:2] == [
        "'Study Hall' is the name of a workspace, not its id; --workspace takes a platform id "
        "(or PLATFORM:ID), exactly:",
        "  test:ws4 (id ws4, platform test, name 'Study Hall')",
    ]
    proc = _import(db_target, source, "--workspace", "ws")
    assert proc.returncode == 1 and "no workspace has the id 'ws' in" in proc.stderr
    proc = _import(db_target, source, "--workspace", "ws1\x01")
    assert proc.returncode == 2
    assert (
        "Invalid value for '--workspace': 'ws1\\x01' holds a control character (\\x01 at "
        "position 4)"
    ) in _unboxed(proc.stderr)
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 0  # nothing landed anywhere

    proc = _import(db_target, source, "--workspace", "test:ws1")
    assert proc.returncode == 0, proc.stderr
    assert "into test ws1:" in proc.stdout
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 5


async def test_a_dry_run_writes_nothing_and_an_import_is_undone_once(
    built: Built, db: Database, db_target: str | Path, tmp_path: Path
) -> None:
    await _members(built, "alice", "bob")
    source = tmp_path / "old.csv"
    source.write_text("member_id,points\nid-alice,120\nid-bob,30\n")
    dry = _import(db_target, source, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        "  alice (id-alice): +120",
        "  bob (id-bob): +30",
        f"dry run: would import 150 point(s) for 2 member(s) from {source} into test ws1; "
        "nothing was written",
    ]
    assert int(await db.fetchval("SELECT count(*) FROM score_imports")) == 0
    assert int(await db.fetchval("SELECT count(*) FROM score_events")) == 0

    assert _import(db_target, source).returncode == 0
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 120

    undo = _undo(db_target, "1")
    assert undo.returncode == 0, undo.stderr
    assert undo.stdout.strip() == (
        "undid import #1 (" + str(source) + ", into test ws1): took back 150 point(s) from "
        "2 member(s)"
    )
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 0
    board = (await built.services.standings.leaderboard(member("bob"), Window.ALL)).plain_text()
    assert "alice" not in board
    assert await ScoreStore(db).consistency_problems() == []

    again = _undo(db_target, "1")
    assert again.returncode == 1
    assert "studybot: import #1 (" + str(source) + ") was undone already" in again.stderr
    assert _undo(db_target, "9").stderr.strip() == "studybot: there is no import #9"
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 0

    # Undone, the same file may land again (where it belongs), and be undone on its own.
    redo = _import(db_target, source)
    assert redo.returncode == 0, redo.stderr
    assert "import #2;" in redo.stdout
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 120


def _undo(db_target: str | Path, *args: str) -> subprocess.CompletedProcess[str]:
    if isinstance(db_target, Path):
        return studybot("scores", "undo-import", *args, "--db", str(db_target))
    return studybot("scores", "undo-import", *args, env={"DATABASE_URL": db_target})


async def test_ids_with_control_characters_are_refused_at_the_door(
    built: Built, db_target: str | Path, tmp_path: Path
) -> None:
    await _members(built, "alice")
    source = tmp_path / "nul.csv"
    source.write_text("member_id,points\nid-al\x00ice,5\n")
    proc = _import(db_target, source)
    assert proc.returncode == 1
    assert (
        f"{source}: row 2, member_id: 'id-al\\x00ice' holds a control character (NUL at "
        "position 6); ids and names are plain text"
    ) in proc.stderr
    if isinstance(db_target, Path):
        export = studybot(
            "scores", "export", "--csv", "--workspace", "ws\x011", "--db", str(db_target)
        )
    else:
        export = studybot(
            "scores", "export", "--csv", "--workspace", "ws\x011", env={"DATABASE_URL": db_target}
        )
    assert export.returncode == 2
    assert (
        "Invalid value for '--workspace': 'ws\\x011' holds a control character (\\x01 at "
        "position 3)"
    ) in _unboxed(export.stderr)
    assert "Traceback" not in export.stderr
    optimize = studybot("review", "optimize", "--workspace", "w\x1b", "--db", str(tmp_path))
    assert optimize.returncode == 2
    assert "'w\\x1b' holds a control character (\\x1b at position 2)" in _unboxed(optimize.stderr)


def _unboxed(stderr: str) -> str:
    """Typer's error box, as one line of words (it wraps long messages in a frame)."""
    return " ".join(stderr.replace("│", " ").split())


async def test_a_semicolon_csv_from_excel_in_a_european_locale_is_read(
    built: Built, db_target: str | Path, tmp_path: Path
) -> None:
    """Excel writes `;` between cells where the comma is the decimal mark, with a BOM, and
    may group thousands with a dot; the file is read, not refused."""
    await _members(built, "alice", "carol")
    source = tmp_path / "excel.csv"
    source.write_bytes("\ufeffName;Points\r\nalice;1.200\r\ncarol;30\r\n".encode())
    done = _import(db_target, source)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(
        f"imported 1,230 point(s) for 2 member(s) from {source} into test ws1"
    )
    alice = await built.services.standings.member_report(member("alice"))
    assert alice.stats.points_all == 1200
    # A decimal is still not a whole number, in either locale.
    half = tmp_path / "half.csv"
    half.write_text("name;points\ncarol;12,5\n")
    refused = _import(db_target, half)
    assert refused.returncode == 1
    assert f"{half}: row 2, points: '12,5' is not a whole number" in refused.stderr


def test_the_console_workspace_is_named_once_not_console_console() -> None:
    from bot.services.score_import import workspace_label
    from bot.storage.scores import WorkspaceInfo

    assert workspace_label(WorkspaceInfo(1, "console", "console", "")) == "the console chat"
    assert workspace_label(WorkspaceInfo(2, "discord", "99", "Study")) == "discord 99 (Study)"
