"""Backups and restores: a backup holds the database and the group's own packs, one a day
whatever the restarts, the newest N kept; a restore checks what it restores, refuses a database
a running bot has open, and brings back every pack and score."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
import tarfile
import time
from datetime import timedelta
from pathlib import Path

import pytest

from bot.backups import BackupJob, backup_name, database_in_use, write_backup
from bot.core.clock import SimulatedClock
from bot.storage.database import Database, open_database
from tests.conftest import TEST_PACKS
from tests.test_cli import ROOT, studybot

MINE = (TEST_PACKS / "mini.yaml").read_text().replace("pack: mini", "pack: mine", 1)


async def test_backups_are_daily_and_pruned(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    uploads = tmp_path / "studybot-packs"  # beside the database file, as the bot keeps it
    uploads.mkdir()
    (uploads / "mine.yaml").write_text(MINE)
    job = BackupJob(db, clock, folder, keep=3)
    task = asyncio.create_task(job.run())

    async def todays_copy_is_done() -> None:
        """Wait (real time, generously) for the job to write and prune today's copy."""
        today = folder / backup_name(clock.now())
        for _ in range(3000):  # up to 30 s
            if today.exists() and not list(folder.glob("*.partial*")) and len(job.backups()) <= 3:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"no {today.name} after 30 s: {sorted(folder.iterdir())}")

    try:
        for _ in range(5):
            await todays_copy_is_done()
            clock.advance(timedelta(days=1))
        await todays_copy_is_done()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "studybot-20260307-090000.tar.gz",
        "studybot-20260308-090000.tar.gz",
        "studybot-20260309-090000.tar.gz",
    ]
    with tarfile.open(folder / names[-1]) as archive:
        assert sorted(archive.getnames()) == [
            "packs", "packs/mine.yaml", "studybot-backup.json", "studybot.sqlite3"
        ]  # fmt: skip
        archive.extractall(tmp_path / "out", filter="data")
    assert (tmp_path / "out" / "packs" / "mine.yaml").read_text() == MINE
    with sqlite3.connect(tmp_path / "out" / "studybot.sqlite3") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_restart_does_not_make_an_extra_copy(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = tmp_path / "backups"
    await BackupJob(db, clock, folder, keep=7).backup_once()
    clock.advance(timedelta(hours=5))
    restarted = BackupJob(db, clock, folder, keep=7)
    assert restarted.next_due() == clock.now() + timedelta(hours=19)
    (folder / "notes.txt").write_text("not a backup")
    assert len(restarted.backups()) == 1


async def test_a_backup_that_fails_at_the_end_leaves_no_partial_file(tmp_path: Path) -> None:
    db_path = tmp_path / "bot.sqlite3"
    destination = tmp_path / "taken"
    destination.mkdir()
    (destination / "keep").write_text("a folder in the way")  # the final rename must fail
    async with await open_database(db_path) as db:
        try:
            await db.backup(destination)
        except OSError:
            pass
        else:
            raise AssertionError("a backup onto a non-empty folder must fail")
    leftovers = await asyncio.to_thread(lambda: [p.name for p in tmp_path.glob("*.partial")])
    assert leftovers == []


async def test_older_database_only_backups_still_count_for_the_schedule(
    db: Database, clock: SimulatedClock, tmp_path: Path
) -> None:
    """Copies made before backups held the packs (``.sqlite3``) are found and pruned too."""
    folder = tmp_path / "backups"
    folder.mkdir()
    (folder / "studybot-20260303-090000.sqlite3").write_bytes(b"old")
    job = BackupJob(db, clock, folder, keep=1)
    assert job.next_due() == clock.now()
    await job.backup_once()
    assert [p.name for _, p in job.backups()] == ["studybot-20260304-090000.tar.gz"]


async def test_a_complete_backup_that_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "taken.tar.gz"
    target.mkdir()
    (target / "keep").write_text("a folder in the way")  # the final rename must fail
    async with await open_database(tmp_path / "bot.sqlite3") as db:
        with pytest.raises(IsADirectoryError):
            await write_backup(db, tmp_path / "bot-packs", target)
    names = await asyncio.to_thread(lambda: [p.name for p in tmp_path.iterdir()])
    assert [n for n in names if n.startswith(".") or "partial" in n] == []


# --- the commands: `db backup` and `db restore` ------------------------------------------------


def _play(db: Path, script: str) -> None:
    """Play ``script`` in the console on ``db`` (with the test packs and the db's own)."""
    proc = studybot(
        "console", "--db", str(db), "--packs", str(TEST_PACKS), stdin=script + "/quit\n"
    )
    assert proc.returncode == 0, proc.stderr


def _export(db: Path) -> str:
    proc = studybot("scores", "export", "--csv", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_backup_restored_into_a_fresh_place_has_every_pack_and_score(tmp_path: Path) -> None:
    db = tmp_path / "group" / "bot.sqlite3"
    uploads = tmp_path / "group" / "bot-packs"  # where chat installs uploaded packs
    uploads.mkdir(parents=True)
    (uploads / "mine.yaml").write_text(MINE)
    _play(db, "/quiz mine --difficulty medium\n/answer B\n/as bob\n/answer A\n")
    before = _export(db)
    assert "bob" in before and ",20," in before

    proc = studybot("db", "backup", f"{tmp_path / 'backups'}/", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    (archive,) = (tmp_path / "backups").iterdir()
    assert proc.stdout.strip() == f"backed up {db} and 1 pack(s) from {uploads} to {archive}"

    fresh = tmp_path / "elsewhere" / "restored.sqlite3"
    proc = studybot("db", "restore", str(archive), "--db", str(fresh))
    assert proc.returncode == 0, proc.stderr
    restored_packs = tmp_path / "elsewhere" / "restored-packs"
    assert proc.stdout.splitlines() == [
        f"restored {archive} to {fresh} (schema {_schema(fresh)}, checked) and 1 pack(s) in "
        f"{restored_packs}"
    ]
    assert (restored_packs / "mine.yaml").read_text() == MINE
    assert _export(fresh) == before
    assert studybot("db", "check", "--db", str(fresh)).returncode == 0
    listed = studybot(
        "console", "--db", str(fresh), "--packs", str(TEST_PACKS), stdin="/pack list\n"
    )
    assert "mine — Mini pack" in listed.stdout and "mini — Mini pack" in listed.stdout

    # Over an existing database: what it replaces is set aside, not lost.
    _play(fresh, "/as carol\n/stats\n")
    again = studybot("db", "restore", str(archive), "--db", str(fresh))
    assert again.returncode == 0, again.stderr
    (aside,) = [p for p in fresh.parent.iterdir() if "-before-restore-" in p.name]
    assert again.stdout.splitlines()[-1] == f"what it replaced is in {aside}"
    assert {p.name for p in aside.iterdir()} >= {"restored.sqlite3", "restored-packs"}
    assert _export(fresh) == before


def _schema(db: Path) -> int:
    """(Closed at once: an open connection is what `db restore` refuses to restore over.)"""
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_restore_refuses_the_database_of_a_running_bot(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    _play(db, "/stats\n")
    assert studybot("db", "backup", str(tmp_path / "b.tar.gz"), "--db", str(db)).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STUDYBOT_", "DISCORD_"))}
    bot = subprocess.Popen(  # a console waiting for input holds the database open, as a bot does
        [sys.executable, "-m", "bot", "console", "--db", str(db), "--packs", str(TEST_PACKS)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not database_in_use(db):
            assert time.monotonic() < deadline and bot.poll() is None, "the console never opened"
            time.sleep(0.1)
        before = db.read_bytes()
        proc = studybot("db", "restore", str(tmp_path / "b.tar.gz"), "--db", str(db))
        assert proc.returncode == 1
        assert proc.stderr.splitlines() == [
            f"db restore: {db} is open in another process (a running bot, a console, a "
            "backup); stop it first: nothing was changed"
        ]
        assert db.read_bytes() == before
        assert not [p for p in tmp_path.iterdir() if "restore" in p.name]
    finally:
        assert bot.stdin is not None
        bot.stdin.close()  # end of input: the console stops
        bot.wait(60)
    assert studybot("db", "restore", str(tmp_path / "b.tar.gz"), "--db", str(db)).returncode == 0


def _archive(path: Path, files: dict[str, bytes]) -> Path:
    import io
    import json

    manifest = {"format": 1, "engine": "sqlite", "database": "studybot.sqlite3"}
    manifest["packs"] = [n.removeprefix("packs/") for n in files if n.startswith("packs/")]
    files = {"studybot-backup.json": json.dumps(manifest).encode(), **files}
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_restore_checks_what_it_restores_and_changes_nothing_when_it_refuses(
    tmp_path: Path,
) -> None:
    good_db = tmp_path / "good.sqlite3"
    _play(good_db, "/stats\n")
    healthy = good_db.read_bytes()
    corrupt = bytearray(healthy)
    corrupt[len(corrupt) // 2 :] = b"\xff" * (len(corrupt) - len(corrupt) // 2)
    bad_pack = (TEST_PACKS / "mini.yaml").read_bytes().replace(b"kind: flashcard", b"kind: ?", 1)
    cases = {
        "corrupt": (
            {"studybot.sqlite3": bytes(corrupt)},
            "the database in {a} ",
        ),
        "not-sqlite": ({"studybot.sqlite3": b"hello"}, "the database in {a} is not usable: "),
        "bad-pack": (
            {"studybot.sqlite3": healthy, "packs/mine.yaml": bad_pack},
            "a pack in {a} does not load: ",
        ),
        "escape": (
            {"studybot.sqlite3": healthy, "../evil.yaml": b"x"},
            "{a} is not a studybot backup: it holds '../evil.yaml'",
        ),
    }
    target = tmp_path / "live" / "bot.sqlite3"
    _play(target, "/stats\n")
    before = sorted(p.name for p in target.parent.iterdir())
    for name, (files, message) in cases.items():
        archive = _archive(tmp_path / f"{name}.tar.gz", files)
        proc = studybot("db", "restore", str(archive), "--db", str(target))
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        (line,) = proc.stderr.splitlines()
        assert line.startswith("db restore: " + message.format(a=archive)), (name, line)
        assert sorted(p.name for p in target.parent.iterdir()) == before, name
    missing = studybot("db", "restore", str(tmp_path / "nope.tar.gz"), "--db", str(target))
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"db restore: no backup at {tmp_path / 'nope.tar.gz'}"


def test_backup_names_its_file_for_what_it_is(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    _play(db, "/stats\n")
    proc = studybot("db", "backup", str(tmp_path / "copy.sqlite3"), "--db", str(db))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"studybot: {tmp_path / 'copy.sqlite3'}: a backup is one .tar.gz file (the database "
        "and the packs folder); name it e.g. studybot-backup.tar.gz, or give a folder"
    )
    absent = studybot("db", "backup", str(tmp_path / "b.tar.gz"), "--db", str(tmp_path / "no"))
    assert absent.returncode == 1 and absent.stderr.strip() == f"no database at {tmp_path / 'no'}"


async def test_on_postgresql_backup_says_it_holds_the_packs_only(tmp_path: Path) -> None:
    """The database is pg_dump's job (docs/DEPLOY.md); `db backup` copies the packs and says
    so, and `db restore` points to pg_restore instead of touching anything."""
    from tests.conftest import fresh_schema

    uploads = tmp_path / "bot-packs"
    uploads.mkdir()
    (uploads / "mine.yaml").write_text(MINE)
    target = tmp_path / "b.tar.gz"
    async with fresh_schema() as url:
        env = {"DATABASE_URL": url, "STUDYBOT_DB": str(tmp_path / "bot.sqlite3")}
        proc = await asyncio.to_thread(studybot, "db", "backup", str(target), env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == (
            f"PostgreSQL: backed up only the packs (1 pack(s) from {uploads}) to {target}; the "
            "database is not in it: back it up with pg_dump --format=custom --file FILE "
            '"$DATABASE_URL" (docs/DEPLOY.md)'
        )
        restore = await asyncio.to_thread(studybot, "db", "restore", str(target), env=env)
    assert restore.returncode == 2
    assert "pg_restore --clean --if-exists" in restore.stderr
    assert f"tar -xzf {target} -C {uploads} --strip-components=1 packs" in restore.stderr

    def names_in(path: Path) -> list[str]:
        with tarfile.open(path) as archive:
            return archive.getnames()

    names = await asyncio.to_thread(names_in, target)
    assert sorted(names) == ["packs", "packs/mine.yaml", "studybot-backup.json"]
    # A packs-only archive restored into a SQLite file is refused, with the reason.
    refused = await asyncio.to_thread(
        studybot, "db", "restore", str(target), "--db", str(tmp_path / "x.sqlite3")
    )
    assert refused.returncode == 1
    assert "holds no database (made on PostgreSQL: restore that with pg_restore" in refused.stderr


async def test_a_pack_installed_during_the_backup_is_in_it_with_the_database_that_knows_it(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload lands while the database is being copied: the packs copied before it are
    stale, so both are taken again, and the archive has the pack."""
    uploads = tmp_path / "studybot-packs"
    uploads.mkdir()
    snapshot = db.backup
    calls = []

    async def upload_meanwhile(destination: Path) -> None:
        calls.append(destination)
        if len(calls) == 1:
            await asyncio.to_thread((uploads / "mine.yaml").write_text, MINE)
        await snapshot(destination)

    monkeypatch.setattr(db, "backup", upload_meanwhile)
    summary = await write_backup(db, uploads, tmp_path / "b.tar.gz")
    assert len(calls) == 2 and summary.packs == 1

    def names() -> list[str]:
        with tarfile.open(tmp_path / "b.tar.gz") as archive:
            return archive.getnames()

    assert "packs/mine.yaml" in await asyncio.to_thread(names)


def test_a_restore_that_fails_half_way_puts_everything_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.backups import BackupError, restore_backup

    source = tmp_path / "old" / "bot.sqlite3"
    _play(source, "/stats\n")
    assert studybot("db", "backup", str(tmp_path / "b.tar.gz"), "--db", str(source)).returncode == 0
    db = tmp_path / "live" / "bot.sqlite3"
    _play(db, "/as dora\n/stats\n")
    (tmp_path / "live" / "bot-packs" / "mine.yaml").write_text(MINE)
    before = {p.name: p.read_bytes() for p in db.parent.rglob("*") if p.is_file()}
    listed = sorted(p.name for p in db.parent.iterdir())
    real_replace = Path.replace

    def full_disk(self: Path, target: Path) -> Path:
        if Path(target).name == "bot-packs" and ".bot-restore-" in str(self):
            raise OSError(28, "No space left on device")
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        restore_backup(tmp_path / "b.tar.gz", db)
    monkeypatch.undo()
    after = {p.name: p.read_bytes() for p in db.parent.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in db.parent.iterdir()) == listed  # no staging, nothing aside
    with pytest.raises(BackupError, match="no backup at"):
        restore_backup(tmp_path / "nothing.tar.gz", db)
