"""The workspace settings admins change in chat, and the append-only log of each change.

A change and its log row are one transaction, so the log can never disagree with the value in
force. The directory caches workspace rows; the service reloads the row after a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.workspace_settings import Setting
from bot.storage.database import Database, Tx
from bot.storage.timefmt import from_db, to_db

__all__ = ["SettingRecord", "SettingsStore"]

_COLUMN = {
    Setting.QUIZ_WINDOW: "quiz_window_seconds",
    Setting.POINTS_EASY: "points_easy",
    Setting.POINTS_MEDIUM: "points_medium",
    Setting.POINTS_HARD: "points_hard",
    Setting.ROUND_QUESTIONS: "round_questions",
    Setting.ROUND_SECONDS: "round_seconds",
    Setting.ROUND_PAUSE: "round_pause",
    Setting.ROUND_SPEED_BONUS: "round_speed_bonus",
    Setting.ROUND_STARTERS: "round_starters",
    Setting.ROUND_TYPED: "round_typed",
    Setting.ROUND_SCORING: "round_scoring",
    Setting.REWARD_NOTICES: "reward_notices",
    Setting.ANALYTICS: "analytics",
}


@dataclass(frozen=True, slots=True)
class SettingRecord:
    setting: str
    old_value: str | None
    new_value: str
    changed_by: str
    changed_by_name: str
    changed_at: datetime


class SettingsStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def set_timezone(
        self,
        workspace_id: int,
        new: str,
        *,
        in_force_now: str,
        takes_over: datetime,
        by: str,
        by_name: str,
        now: datetime,
    ) -> str:
        """Make ``new`` the workspace's zone from ``takes_over``; ``in_force_now`` until then.

        Returns the zone that was chosen before (for the log and the reply).
        """
        async with self._db.write() as conn:
            row = await conn.fetchone(
                "SELECT timezone FROM workspaces WHERE id = ?", (workspace_id,)
            )
            assert row is not None, f"workspace {workspace_id} vanished"
            old = str(row[0])
            await conn.execute(
                "UPDATE workspaces SET timezone = ?, previous_timezone = ?, timezone_from = ? "
                "WHERE id = ?",
                (new, in_force_now, to_db(takes_over), workspace_id),
            )
            await _log(conn, workspace_id, Setting.TIMEZONE, old, new, by, by_name, now)
        return old

    async def set_value(
        self,
        workspace_id: int,
        setting: Setting,
        value: str,
        *,
        by: str,
        by_name: str,
        now: datetime,
    ) -> str | None:
        """Store a quiz window (seconds) or points value; returns the previous stored value."""
        column = _COLUMN[setting]
        async with self._db.write() as conn:
            row = await conn.fetchone(
                f"SELECT {column} FROM workspaces WHERE id = ?", (workspace_id,)
            )
            assert row is not None, f"workspace {workspace_id} vanished"
            old = None if row[0] is None else str(row[0])
            await conn.execute(
                f"UPDATE workspaces SET {column} = ? WHERE id = ?", (int(value), workspace_id)
            )
            await _log(conn, workspace_id, setting, old, value, by, by_name, now)
        return old

    async def history(self, workspace_id: int, limit: int = 15) -> list[SettingRecord]:
        """The latest changes, newest first."""
        rows = await self._db.fetchall(
            "SELECT setting, old_value, new_value, changed_by, changed_by_name, changed_at "
            "FROM setting_changes WHERE workspace_id = ? ORDER BY id DESC LIMIT ?",
            (workspace_id, limit),
        )
        return [
            SettingRecord(
                str(r[0]),
                None if r[1] is None else str(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                from_db(str(r[5])),
            )
            for r in rows
        ]


async def _log(
    conn: Tx,
    workspace_id: int,
    setting: Setting,
    old: str | None,
    new: str,
    by: str,
    by_name: str,
    now: datetime,
) -> None:
    await conn.execute(
        "INSERT INTO setting_changes (workspace_id, setting, old_value, new_value, changed_by, "
        "changed_by_name, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (workspace_id, setting.value, old, new, by, by_name, to_db(now)),
    )
