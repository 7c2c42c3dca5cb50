"""Backups of a group's data, and their restore: the database and the packs folder, together.

A backup is one ``.tar.gz`` file: ``studybot.sqlite3`` (an online copy, SQLite backup API),
``packs/`` (the packs uploaded or written in chat, :attr:`Settings.uploads_dir`) and
``studybot-backup.json`` (what it holds). The database alone is not enough: a restored bot
would load only the bundled packs, and the group's own questions would be gone.

``BackupJob`` writes one into ``BACKUP_DIR`` once a day, keeping the newest ``BACKUP_KEEP``.
The schedule is derived from the files themselves (the newest backup's name), so a restart
neither skips a day nor makes an extra copy; a backup is written next to its final name and
renamed into place, so a half-written file is never kept.

On PostgreSQL the database is ``pg_dump``'s job (docs/DEPLOY.md): a backup then holds the packs
folder only, and says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sqlite3
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath

from bot.core.clock import Clock
from bot.log import get_logger
from bot.questions.loader import load_packs, pack_files
from bot.settings import uploads_dir_for
from bot.storage.database import Database
from bot.storage.migrate import available_migrations

__all__ = [
    "BackupError",
    "BackupJob",
    "BackupSummary",
    "RestoreSummary",
    "backup_name",
    "backup_target",
    "database_in_use",
    "restore_backup",
    "write_backup",
]

log = get_logger(__name__)
_NAME = re.compile(r"^studybot-(\d{8}-\d{6})\.(sqlite3|tar\.gz)$")  # .sqlite3: older backups
INTERVAL = timedelta(days=1)
MANIFEST = "studybot-backup.json"
DATABASE = "studybot.sqlite3"
PACKS = "packs"
FORMAT = 1
_SNAPSHOT_TRIES = 5  # a pack changed during the copy: take both again (uploads are rare)


class BackupError(Exception):
    """A backup that cannot be written or restored; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class BackupSummary:
    target: Path
    database: bool  # False on PostgreSQL: the archive holds the packs only
    packs: int


@dataclass(frozen=True, slots=True)
class RestoreSummary:
    database: Path
    packs_dir: Path | None  # None: an older database-only backup; the packs were left alone
    packs: int
    schema_version: int
    set_aside: Path | None  # where what was replaced now is


def _fingerprint(folder: Path | None) -> list[tuple[str, int, int, int]]:
    """What identifies each pack file's content without reading it (a pack is replaced by a
    rename, so a new version has a new inode and mtime)."""
    found = []
    for path in pack_files(folder) if folder is not None and folder.is_dir() else []:
        with contextlib.suppress(FileNotFoundError):
            st = path.stat()
            found.append((path.name, st.st_size, st.st_mtime_ns, st.st_ino))
    return found


async def write_backup(db: Database, packs_dir: Path | None, target: Path) -> BackupSummary:
    """Write a complete backup to ``target`` (a ``.tar.gz``), safe while the bot runs.

    Consistent: the packs are copied, the database is copied (one snapshot), and the packs are
    looked at again; if any pack file changed meanwhile, both are taken again. So the packs in
    the archive are the ones that were installed at the instant of the database snapshot.
    The file work runs on a worker thread: the bot's event loop keeps answering meanwhile.
    """
    sqlite = db.engine != "postgresql"
    staging = await asyncio.to_thread(_staging, target)
    partial = target.with_name(target.name + ".partial")
    try:
        for _ in range(_SNAPSHOT_TRIES):
            before = await asyncio.to_thread(_copy_packs, packs_dir, staging / PACKS)
            if sqlite:
                await db.backup(staging / DATABASE)
            if before == await asyncio.to_thread(_fingerprint, packs_dir):
                break
        else:
            raise BackupError(
                f"the packs in {packs_dir} kept changing during {_SNAPSHOT_TRIES} tries"
            )
        count = await asyncio.to_thread(_archive, staging, partial, db.engine, sqlite)
        await asyncio.to_thread(partial.replace, target)
    except BaseException:
        partial.unlink(missing_ok=True)  # a failed backup leaves nothing behind
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return BackupSummary(target, sqlite, count)


def _staging(target: Path) -> Path:
    """A private folder beside ``target`` to assemble the backup in."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=target.parent, prefix=".studybot-backup-"))


def _copy_packs(packs_dir: Path | None, into: Path) -> list[tuple[str, int, int, int]]:
    """Copy the pack files into ``into`` (afresh); their fingerprint from before the copy."""
    before = _fingerprint(packs_dir)
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir()
    for name, *_ in before:
        assert packs_dir is not None
        with contextlib.suppress(FileNotFoundError):  # removed since: the check sees it
            shutil.copy2(packs_dir / name, into / name)
    return before


def _archive(staging: Path, partial: Path, engine: str, sqlite: bool) -> int:
    """The manifest, then everything in one gzipped tar, on disk; the number of packs."""
    names = sorted(p.name for p in (staging / PACKS).iterdir())
    manifest = {
        "format": FORMAT,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "engine": engine,
        "database": DATABASE if sqlite else None,
        "packs": names,
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    with tarfile.open(partial, "w:gz") as archive:
        archive.add(staging / MANIFEST, MANIFEST)
        if sqlite:
            archive.add(staging / DATABASE, DATABASE)
        archive.add(staging / PACKS, PACKS)
    with open(partial, "rb") as written:  # on disk before it is renamed into place
        os.fsync(written.fileno())
    return len(names)


def database_in_use(path: Path) -> bool:
    """Whether another process has the SQLite file open (a running bot, a console, a backup).

    Every open connection to a WAL database holds a shared lock on the file for as long as it
    is open, idle or not; asking for an exclusive lock without waiting fails while any exists.
    The lock is the operating system's (fcntl): it disappears with the process that held it,
    so a killed bot leaves no stale marker behind, unlike a pid file. (On a network filesystem
    such locks may not be shared between machines: stop the bot there before a restore.)
    """
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=0, isolation_level=None)
    except sqlite3.Error:
        return False  # not a database we can open: nothing runs on it
    try:
        conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc) or "busy" in str(exc)
    except sqlite3.DatabaseError:
        return False  # a broken file: it is replaced, not used
    finally:
        conn.close()
    return False


def _members_ok(archive: tarfile.TarFile, source: Path) -> None:
    """Only the names a studybot backup has, regular files and folders, nothing outside."""
    for member in archive.getmembers():
        parts = PurePosixPath(member.name).parts
        allowed = member.name in (MANIFEST, DATABASE, PACKS) or (
            len(parts) == 2 and parts[0] == PACKS and member.isfile()
        )
        if not allowed or not (member.isfile() or member.isdir()) or ".." in parts:
            raise BackupError(f"{source} is not a studybot backup: it holds {member.name!r}")


def _unpack(source: Path, staging: Path) -> tuple[Path, Path | None]:
    """Extract ``source`` into ``staging``: the database file, and the packs folder (None for
    an older backup, which is a database file alone)."""
    if source.name.endswith(".sqlite3") or source.name.endswith(".db"):
        shutil.copy2(source, staging / DATABASE)
        return staging / DATABASE, None
    try:
        with tarfile.open(source, "r:*") as archive:
            _members_ok(archive, source)
            archive.extractall(staging, filter="data")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise BackupError(f"{source} is not a readable backup archive: {exc}") from None
    try:
        manifest = json.loads((staging / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackupError(f"{source} is not a studybot backup (no {MANIFEST}): {exc}") from None
    if manifest.get("database") is None:
        raise BackupError(
            f"{source} holds no database (made on PostgreSQL: restore that with pg_restore; "
            "see docs/DEPLOY.md)"
        )
    packs = staging / PACKS
    packs.mkdir(exist_ok=True)
    missing = sorted(set(manifest.get("packs", [])) - {p.name for p in packs.iterdir()})
    if missing or not (staging / DATABASE).is_file():
        lost = ", ".join(missing) or DATABASE
        raise BackupError(f"{source} is incomplete: {lost} listed but not in it")
    return staging / DATABASE, packs


def _check_database(path: Path, source: Path) -> int:
    """SQLite's integrity and foreign-key checks and a schema this studybot can run; the
    schema version."""
    latest = available_migrations()[-1].version
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
            keys = conn.execute("PRAGMA foreign_key_check").fetchall()
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"the database in {source} is not usable: {exc}") from None
    problems += [f"foreign key: {r[0]} row {r[1]} -> {r[2]}" for r in keys]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise BackupError(
            f"the database in {source} fails its integrity check: {problems[0]}{more}"
        )
    if version > latest:
        raise BackupError(
            f"the database in {source} has schema {version}, newer than this studybot "
            f"({latest}): restore it with the studybot that made it"
        )
    return version


def _check_packs(packs: Path, source: Path) -> int:
    """Every pack file parses and passes the schema, as a start would load it."""
    if not pack_files(packs):
        return 0
    result = load_packs(packs)
    if result.errors:
        first = result.errors[0]
        more = f" (and {len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        name = str(first).replace(str(packs), f"{source.name}:packs", 1)
        raise BackupError(f"a pack in {source} does not load: {name}{more}")
    return len(result.packs)


def restore_backup(source: Path, db_path: Path) -> RestoreSummary:
    """Restore ``source`` as the database ``db_path`` and its packs folder beside it.

    Everything is checked before anything is touched: the archive's members, the database
    (integrity, foreign keys, schema version) and every pack. The database must not be open
    in another process (:func:`database_in_use`): a running bot would keep writing to the
    replaced file. What is replaced is set aside, not deleted: into
    ``<name>-before-restore-<time>/`` beside the database (with its ``-wal`` and ``-shm``,
    which must never meet the restored file).
    """
    if not source.is_file():
        raise BackupError(f"no backup at {source}")
    db_path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=db_path.parent, prefix=f".{db_path.stem}-restore-"))
    try:
        database, packs = _unpack(source, staging)
        version = _check_database(database, source)
        count = _check_packs(packs, source) if packs is not None else 0
        if database_in_use(db_path):
            raise BackupError(
                f"{db_path} is open in another process (a running bot, a console, a backup); "
                "stop it first: nothing was changed"
            )
        uploads = uploads_dir_for(db_path)
        replaced = [db_path, *(db_path.with_name(db_path.name + s) for s in ("-wal", "-shm"))]
        if packs is not None:
            replaced.append(uploads)
        present = [p for p in replaced if p.exists()]
        aside = db_path.with_name(
            f"{db_path.stem}-before-restore-{datetime.now(UTC):%Y%m%d-%H%M%S}"
        )
        for n in range(2, 100):  # two restores in one second keep both sets aside
            if not aside.exists():
                break
            aside = aside.with_name(f"{aside.name.split('~')[0]}~{n}")
        moved: list[Path] = []
        placed: list[Path] = []
        try:
            if present:
                aside.mkdir()
            for path in present:
                path.replace(aside / path.name)
                moved.append(path)
            database.replace(db_path)
            placed.append(db_path)
            if packs is not None:
                packs.replace(uploads)
                placed.append(uploads)
        except OSError:
            _put_back(placed, moved, aside)
            raise
        packs_dir = uploads if packs is not None else None
        return RestoreSummary(db_path, packs_dir, count, version, aside if present else None)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _put_back(placed: list[Path], moved: list[Path], aside: Path) -> None:
    """Undo a restore that failed half-way (a full disk, a permission): remove what it put in
    place and move back what it set aside, so a failed restore leaves things as they were."""
    for path in placed:
        with contextlib.suppress(OSError):
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
    for path in moved:
        with contextlib.suppress(OSError):
            (aside / path.name).replace(path)
    with contextlib.suppress(OSError):
        aside.rmdir()  # only if empty


class BackupJob:
    """The daily backups into ``BACKUP_DIR``.

    ``packs_dir`` is the packs folder to include; None: the one beside the SQLite file (the
    same rule as ``Settings.uploads_dir``), and none at all on PostgreSQL.
    """

    def __init__(
        self,
        db: Database,
        clock: Clock,
        directory: Path,
        keep: int,
        *,
        packs_dir: Path | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._dir = directory
        self._keep = keep
        path = getattr(db, "path", None)
        if packs_dir is None and isinstance(path, Path):
            packs_dir = uploads_dir_for(path)
        self._packs = packs_dir

    def backups(self) -> list[tuple[datetime, Path]]:
        """Existing backups, oldest first (files that merely look similar are left alone)."""
        found = []
        if self._dir.is_dir():
            for path in self._dir.iterdir():
                match = _NAME.match(path.name)
                if match:
                    stamp = datetime.strptime(match[1], "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
                    found.append((stamp, path))
        return sorted(found)

    def next_due(self) -> datetime:
        existing = self.backups()
        return existing[-1][0] + INTERVAL if existing else self._clock.now()

    async def backup_once(self) -> Path:
        target = self._dir / backup_name(self._clock.now())
        summary = await write_backup(self._db, self._packs, target)
        for _, old in self.backups()[: -self._keep]:
            old.unlink(missing_ok=True)
            log.info("removed old backup %s", old)
        if summary.database:
            log.info("backed up the database and %d pack(s) to %s", summary.packs, target)
        else:
            log.info(
                "backed up %d pack(s) to %s; PostgreSQL itself is backed up with pg_dump",
                summary.packs,
                target,
            )
        return target

    async def run(self) -> None:
        """Back up whenever a day has passed since the newest copy, until cancelled."""
        while True:
            await self._clock.sleep_until(self.next_due())
            try:
                await self.backup_once()
            except Exception:
                log.exception("daily backup into %s failed; retrying in an hour", self._dir)
                await asyncio.sleep(3600)


def backup_name(now: datetime) -> str:
    """The file name of a backup taken at ``now``: sortable, and what :meth:`backups` finds."""
    return f"studybot-{now.astimezone(UTC):%Y%m%d-%H%M%S}.tar.gz"


def backup_target(path: str, now: datetime) -> Path:
    """Where ``studybot db backup PATH`` writes: a folder (or a path ending in ``/``) means a
    file named by date inside it, as the automatic backups are named; a file must be named
    ``.tar.gz`` (or ``.tgz``), which is what it is."""
    target = Path(path)
    if target.is_dir() or path.endswith("/"):
        return target / backup_name(now)
    if not target.name.endswith((".tar.gz", ".tgz")):
        raise BackupError(
            f"{path}: a backup is one .tar.gz file (the database and the packs folder); "
            "name it e.g. studybot-backup.tar.gz, or give a folder"
        )
    return target
