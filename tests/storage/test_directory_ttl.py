"""Workspace settings changed through another process reach this one (several processes)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bot.storage.database import Database, open_database
from bot.storage.directory import Directory
from tests.conftest import START


class Ticker:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def _window_set_elsewhere(db_target: str | Path, workspace_id: int, seconds: int) -> None:
    """Another process's /settings: its own handle on the same database."""
    async with await open_database(db_target) as other, other.write() as tx:
        await tx.execute(
            "UPDATE workspaces SET quiz_window_seconds = ? WHERE id = ?", (seconds, workspace_id)
        )


async def test_a_change_made_elsewhere_applies_once_the_cached_row_is_older_than_the_ttl(
    db: Database, db_target: str | Path
) -> None:
    ticker = Ticker()
    directory = Directory(db, "UTC", settings_ttl=10.0, now=ticker)
    ws = await directory.workspace("test", "ws1", "Study group", START)
    assert ws.settings.quiz_window is None
    await _window_set_elsewhere(db_target, ws.id, 600)
    ticker.now = 9.0  # still fresh: the hot path reads no row
    assert (await directory.workspace_by_id(ws.id)).settings.quiz_window is None
    ticker.now = 10.5
    assert (await directory.workspace_by_id(ws.id)).settings.quiz_window == timedelta(minutes=10)
    await _window_set_elsewhere(db_target, ws.id, 900)
    ticker.now = 21.0  # by platform id too
    again = await directory.workspace("test", "ws1", "Study group", START)
    assert again.settings.quiz_window == timedelta(minutes=15)
