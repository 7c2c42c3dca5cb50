"""Daily database backups into ``BACKUP_DIR``, keeping the newest ``BACKUP_KEEP`` copies.

The schedule is derived from the files themselves (the newest backup's name), so a restart
neither skips a day nor makes an extra copy; copies are written with SQLite's online backup
API next to their final name and renamed into place, so a half-written file is never kept.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.core.clock import Clock
from bot.log import get_logger
from bot.storage.database import Database

__all__ = ["BackupJob"]

log = get_logger(__name__)
_NAME = re.compile(r"^studybot-(\d{8}-\d{6})\.sqlite3$")
INTERVAL = timedelta(days=1)


class BackupJob:
    def __init__(self, db: Database, clock: Clock, directory: Path, keep: int) -> None:
        self._db = db
        self._clock = clock
        self._dir = directory
        self._keep = keep

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
        await self._db.backup(target)
        for _, old in self.backups()[: -self._keep]:
            old.unlink(missing_ok=True)
            log.info("removed old backup %s", old)
        log.info("backed up the database to %s", target)
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
    return f"studybot-{now.astimezone(UTC):%Y%m%d-%H%M%S}.sqlite3"


def backup_target(path: str, now: datetime) -> Path:
    """Where ``studybot db backup PATH`` writes: a folder (or a path ending in ``/``) means a
    file named by date inside it, as the automatic backups are named."""
    target = Path(path)
    if target.is_dir() or path.endswith("/"):
        return target / backup_name(now)
    return target
