"""Workspaces, channels and members: platform ids to row ids, created on first sight.

Row ids never change once created, so they are cached in memory; the hot answer path then
needs no lookup at all for a member it has seen before. A workspace's settings (timezone,
quiz window, points) can change: this process re-reads them when its own command changes them,
and with ``settings_ttl`` (several processes share the database) also once they are that old,
so a change made through another process takes effect here within the ttl.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from bot.core.workspace_settings import Setting, WorkspaceSettings
from bot.questions.schema import Difficulty
from bot.storage.database import Database
from bot.storage.timefmt import from_db, to_db

__all__ = ["ChannelRow", "Directory", "MemberRow", "WorkspaceRow"]


@dataclass(frozen=True, slots=True)
class WorkspaceRow:
    id: int
    platform: str
    external_id: str
    timezone: str  # the zone admins chose (it may take over only at the next midnight)
    settings: WorkspaceSettings
    name: str | None = None  # the server's or workspace's name when first seen (for people)

    def zone_at(self, moment: datetime) -> ZoneInfo:
        """The zone whose local days and weeks ``moment`` belongs to."""
        return self.settings.zone_at(moment)

    @property
    def display_zone(self) -> ZoneInfo:
        """The zone times are shown in: the one admins chose, from the moment they chose it.

        Days and weeks (streaks, boards, recaps) switch only at its next midnight (see
        :meth:`zone_at`), but a channel shows one zone: the posts already show the new one,
        so ``/history`` and ``/clock`` must too.
        """
        return ZoneInfo(self.settings.timezone)


_WORKSPACE_COLUMNS = (
    "id, platform, external_id, timezone, previous_timezone, timezone_from, "
    "quiz_window_seconds, points_easy, points_medium, points_hard, "
    "round_questions, round_seconds, round_pause, round_speed_bonus, round_starters, "
    "round_typed, round_scoring, reward_notices, name, analytics"
)
_ROUND_COLUMNS = (
    Setting.ROUND_QUESTIONS,
    Setting.ROUND_SECONDS,
    Setting.ROUND_PAUSE,
    Setting.ROUND_SPEED_BONUS,
    Setting.ROUND_STARTERS,
    Setting.ROUND_TYPED,
    Setting.ROUND_SCORING,
)


def _workspace(row: Sequence[object]) -> WorkspaceRow:
    (ws_id, platform, external, tz, previous, since, window, easy, medium, hard) = row[:10]
    rounds = {
        setting: int(str(value))
        for setting, value in zip(_ROUND_COLUMNS, row[10:17], strict=True)
        if value is not None
    }
    points = {
        level: int(str(value))
        for level, value in zip(
            (Difficulty.EASY, Difficulty.MEDIUM, Difficulty.HARD), (easy, medium, hard), strict=True
        )
        if value is not None
    }
    settings = WorkspaceSettings(
        timezone=str(tz),
        previous_timezone=None if previous is None else str(previous),
        timezone_from=None if since is None else from_db(str(since)),
        quiz_window=None if window is None else timedelta(seconds=int(str(window))),
        points=points,
        rounds=rounds,
        reward_notices_by_dm=bool(row[17]),
        analytics=row[19] is None or bool(row[19]),
    )
    name = None if row[18] is None else str(row[18])
    return WorkspaceRow(int(str(ws_id)), str(platform), str(external), str(tz), settings, name)


@dataclass(frozen=True, slots=True)
class ChannelRow:
    id: int
    workspace_id: int
    external_id: str
    name: str | None


@dataclass(frozen=True, slots=True)
class MemberRow:
    id: int
    workspace_id: int
    external_id: str
    display_name: str


class Directory:
    def __init__(
        self,
        db: Database,
        default_timezone: str,
        *,
        settings_ttl: float | None = None,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._default_tz = default_timezone
        self._settings_ttl = settings_ttl
        self._now = now
        self._read_at: dict[int, float] = {}  # workspace id -> when its row was read
        self._workspaces: dict[tuple[str, str], WorkspaceRow] = {}
        self._workspaces_by_id: dict[int, WorkspaceRow] = {}
        self._channels: dict[tuple[int, str], ChannelRow] = {}
        self._channels_by_id: dict[int, ChannelRow] = {}
        self._members: dict[tuple[int, str], MemberRow] = {}

    async def workspace(
        self, platform: str, external_id: str, name: str | None, now: datetime
    ) -> WorkspaceRow:
        key = (platform, external_id)
        if (cached := self._workspaces.get(key)) is not None:
            return cached if self._fresh(cached) else await self.reload_workspace(cached.id)
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO workspaces (platform, external_id, name, timezone, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (platform, external_id) DO NOTHING",
                (platform, external_id, name, self._default_tz, to_db(now)),
            )
            row = await conn.fetchone(
                f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces "
                "WHERE platform = ? AND external_id = ?",
                key,
            )
        assert row is not None
        return self._cache(_workspace(tuple(row)))

    async def workspace_by_id(self, workspace_id: int) -> WorkspaceRow:
        if (cached := self._workspaces_by_id.get(workspace_id)) is not None and self._fresh(cached):
            return cached
        return await self.reload_workspace(workspace_id)

    async def reload_workspace(self, workspace_id: int) -> WorkspaceRow:
        """Read the row again (after its settings changed) and cache it."""
        found = await self._db.fetchone(
            f"SELECT {_WORKSPACE_COLUMNS} FROM workspaces WHERE id = ?", (workspace_id,)
        )
        assert found is not None, f"workspace {workspace_id} vanished"
        return self._cache(_workspace(tuple(found)))

    def _cache(self, ws: WorkspaceRow) -> WorkspaceRow:
        self._workspaces[(ws.platform, ws.external_id)] = self._workspaces_by_id[ws.id] = ws
        self._read_at[ws.id] = self._now()
        return ws

    def _fresh(self, ws: WorkspaceRow) -> bool:
        """Whether the cached row may be used (always, unless other processes share the data)."""
        if self._settings_ttl is None:
            return True
        return self._now() - self._read_at.get(ws.id, float("-inf")) < self._settings_ttl

    async def channel(
        self, workspace: WorkspaceRow, external_id: str, name: str | None, now: datetime
    ) -> ChannelRow:
        key = (workspace.id, external_id)
        cached = self._channels.get(key)
        if cached is not None and (name is None or cached.name == name):
            return cached
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO channels (workspace_id, external_id, name, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, external_id) "
                "DO UPDATE SET name = coalesce(excluded.name, channels.name)",
                (workspace.id, external_id, name, to_db(now)),
            )
            row = await conn.fetchone(
                "SELECT id, name FROM channels WHERE workspace_id = ? AND external_id = ?", key
            )
        assert row is not None
        found = ChannelRow(int(row[0]), workspace.id, external_id, row[1])
        self._channels[key] = self._channels_by_id[found.id] = found
        return found

    async def channel_by_id(self, channel_id: int) -> ChannelRow:
        if (cached := self._channels_by_id.get(channel_id)) is not None:
            return cached
        found = await self._db.fetchone(
            "SELECT id, workspace_id, external_id, name FROM channels WHERE id = ?", (channel_id,)
        )
        assert found is not None, f"channel {channel_id} vanished"
        channel = ChannelRow(int(found[0]), int(found[1]), str(found[2]), found[3])
        key = (channel.workspace_id, channel.external_id)
        self._channels[key] = self._channels_by_id[channel.id] = channel
        return channel

    async def load_channels(self, channel_ids: Iterable[int]) -> None:
        """Fill the cache for many channels in one query (the scheduler, before 09:00)."""
        sql = self._db.sql
        wanted = sql.list_value(sorted({i for i in channel_ids if i not in self._channels_by_id}))
        for row in await self._db.fetchall(
            f"SELECT id, workspace_id, external_id, name FROM channels WHERE id {sql.in_list()}",
            (wanted,),
        ):
            channel = ChannelRow(int(row[0]), int(row[1]), str(row[2]), row[3])
            key = (channel.workspace_id, channel.external_id)
            self._channels[key] = self._channels_by_id[channel.id] = channel

    async def workspace_ids(self, platform: str) -> list[int]:
        """The ids of every workspace of ``platform``, oldest first (the admin page's list)."""
        rows = await self._db.fetchall(
            "SELECT id FROM workspaces WHERE platform = ? ORDER BY id", (platform,)
        )
        return [int(r[0]) for r in rows]

    async def channels_of(self, workspace_id: int) -> list[ChannelRow]:
        """Every channel of a workspace seen so far, by name (the admin page's list)."""
        rows = await self._db.fetchall(
            "SELECT id, workspace_id, external_id, name FROM channels WHERE workspace_id = ? "
            "ORDER BY coalesce(name, external_id), id",
            (workspace_id,),
        )
        found = [ChannelRow(int(r[0]), int(r[1]), str(r[2]), r[3]) for r in rows]
        for channel in found:
            key = (channel.workspace_id, channel.external_id)
            self._channels[key] = self._channels_by_id[channel.id] = channel
        return found

    def cached_member(self, workspace_id: int, external_id: str) -> MemberRow | None:
        return self._members.get((workspace_id, external_id))

    def remember_member(self, member: MemberRow) -> None:
        self._members[(member.workspace_id, member.external_id)] = member

    async def member(
        self, workspace: WorkspaceRow, external_id: str, display_name: str, now: datetime
    ) -> MemberRow:
        key = (workspace.id, external_id)
        cached = self._members.get(key)
        if cached is not None and cached.display_name == display_name:
            return cached
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO members (workspace_id, external_id, display_name, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, external_id) "
                "DO UPDATE SET display_name = excluded.display_name",
                (workspace.id, external_id, display_name, to_db(now)),
            )
            row = await conn.fetchone(
                "SELECT id FROM members WHERE workspace_id = ? AND external_id = ?", key
            )
        assert row is not None
        found = MemberRow(int(row[0]), workspace.id, external_id, display_name)
        self._members[key] = found
        return found

    async def member_by_id(self, workspace_id: int, member_id: int) -> MemberRow | None:
        """A member by row id, only if they belong to ``workspace_id``."""
        row = await self._db.fetchone(
            "SELECT id, external_id, display_name FROM members WHERE workspace_id = ? AND id = ?",
            (workspace_id, member_id),
        )
        if row is None:
            return None
        return MemberRow(int(row[0]), workspace_id, str(row[1]), str(row[2]))

    async def find_member(self, workspace_id: int, name_or_id: str) -> MemberRow | None:
        """Look a member up by platform id or display name (case-insensitive)."""
        row = await self._db.fetchone(
            "SELECT id, external_id, display_name FROM members WHERE workspace_id = ? "
            "AND (external_id = ? OR lower(display_name) = lower(?)) "
            "ORDER BY external_id = ? DESC LIMIT 1",
            (workspace_id, name_or_id, name_or_id, name_or_id),
        )
        if row is None:
            return None
        return MemberRow(int(row[0]), workspace_id, str(row[1]), str(row[2]))
