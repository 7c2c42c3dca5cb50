"""Leaderboards and member statistics.

Score events are append-only and never deleted; a board is a read of the running totals of
one period (``score_totals``), kept in the same transaction as the events. So a "reset" is
just a new period, and a board costs the same with a hundred events or a million.
``consistency_problems`` re-derives the all-time totals from the events for ``db check``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from bot.core.models import LeaderboardRow, StreakBoardRow
from bot.core.scoring import MAX_FREEZES, StreakState, current_streak, streak_as_of
from bot.core.workspace_settings import WorkspaceSettings
from bot.storage.database import Database, Row
from bot.storage.timefmt import from_db, to_db

__all__ = [
    "IMPORTED",
    "IMPORT_UNDONE",
    "ImportRecord",
    "KnownMember",
    "MemberTotals",
    "ScoreStore",
    "WorkspaceInfo",
]

IMPORTED = "imported"
"""The reason of a score event brought over from another bot (``scores import``)."""
IMPORT_UNDONE = "import undone"
"""The reason of the opposite event an undo adds (``scores undo-import``): events are never
deleted, so an undone import shows in the log as what it was and what took it back."""


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One ``scores import``, by its id (printed when it landed)."""

    id: int
    workspace_id: int
    source: str
    members: int
    points: int
    imported_at: datetime
    undone_at: datetime | None


@dataclass(frozen=True, slots=True)
class KnownMember:
    id: int
    external_id: str
    display_name: str


@dataclass(frozen=True, slots=True)
class WorkspaceInfo:
    id: int
    platform: str
    external_id: str
    name: str


@dataclass(frozen=True, slots=True)
class MemberTotals:
    member_id: int
    display_name: str
    points_all: int
    points_period: int
    answered: int
    correct: int
    streak_days: int
    best_streak: int
    streak_last_day: date | None
    rank_all: int | None
    freezes: int = 0
    freezes_used: int = 0

    @property
    def streak(self) -> StreakState:
        """The stored streak state (as of the last answered day)."""
        return StreakState(
            self.streak_days,
            self.best_streak,
            self.streak_last_day,
            self.freezes,
            self.freezes_used,
        )


class ScoreStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def leaderboard(
        self,
        workspace_id: int,
        period: str,
        *,
        limit: int = 10,
        caller_member_id: int | None = None,
    ) -> tuple[list[LeaderboardRow], LeaderboardRow | None]:
        """The top ``limit`` members of a period, and the caller's own row if they scored."""
        rows = await self._db.fetchall(
            "WITH ranked AS ("
            "  SELECT member_id, points, answers, rank() OVER (ORDER BY points DESC) AS rank"
            "  FROM score_totals WHERE workspace_id = ? AND period = ? AND points > 0"
            ") SELECT r.rank, r.member_id, m.display_name, r.points, r.answers"
            " FROM ranked r JOIN members m ON m.id = r.member_id"
            " WHERE r.rank <= ? OR r.member_id = ?"
            " ORDER BY r.rank, lower(m.display_name)",
            (workspace_id, period, limit, caller_member_id),
        )
        return _board(rows, limit, caller_member_id)

    async def channel_leaderboard(
        self,
        workspace_id: int,
        channel_id: int,
        since: datetime | None,
        *,
        limit: int = 10,
        caller_member_id: int | None = None,
    ) -> tuple[list[LeaderboardRow], LeaderboardRow | None]:
        """The board of one channel: points from answers to questions posted there.

        Summed from the score events (answers and their streak bonuses) since ``since``
        (``None``: all time), so it needs no running totals of its own; a channel's events are
        a small share of the workspace's.
        """
        rows = await self._db.fetchall(
            "WITH mine AS ("
            "  SELECT e.member_id, sum(e.points) AS points,"
            "    count(DISTINCT CASE WHEN e.reason IN ('answer', 'round', 'exercise')"
            "      THEN e.answer_id END) AS answers"
            # From the channel's posts to their answers to those answers' events (indexes all
            # the way), never through every event of the workspace.
            # (CROSS JOIN keeps that order in SQLite; PostgreSQL plans it the same way.)
            "  FROM posts p CROSS JOIN answers a CROSS JOIN score_events e"
            "  WHERE a.post_id = p.id AND e.answer_id = a.id"
            "  AND e.workspace_id = ? AND p.channel_id = ? AND e.created_at >= ?"
            "  GROUP BY e.member_id HAVING sum(e.points) > 0"
            "), ranked AS ("
            "  SELECT member_id, points, answers, rank() OVER (ORDER BY points DESC) AS rank"
            "  FROM mine"
            ") SELECT r.rank, r.member_id, m.display_name, r.points, r.answers"
            " FROM ranked r JOIN members m ON m.id = r.member_id"
            " WHERE r.rank <= ? OR r.member_id = ?"
            " ORDER BY r.rank, lower(m.display_name)",
            (
                workspace_id,
                channel_id,
                "" if since is None else to_db(since),
                limit,
                caller_member_id,
            ),
        )
        return _board(rows, limit, caller_member_id)

    async def member_totals(self, member_id: int, period: str) -> MemberTotals | None:
        """One member's numbers: all time, one period (e.g. this week), answers, streak."""
        row = await self._db.fetchone(
            "SELECT m.id, m.display_name, m.streak_days, m.best_streak, m.streak_last_day,"
            " coalesce(a.points, 0), coalesce(p.points, 0),"
            " (SELECT count(*) FROM answers WHERE member_id = m.id AND correct IS NOT NULL),"
            " (SELECT count(*) FROM answers WHERE member_id = m.id AND correct = 1),"
            " (SELECT 1 + count(*) FROM score_totals o WHERE o.workspace_id = m.workspace_id"
            "   AND o.period = 'all' AND o.points > coalesce(a.points, 0)),"
            " m.streak_freezes, m.freezes_used"
            " FROM members m"
            " LEFT JOIN score_totals a ON a.workspace_id = m.workspace_id AND a.period = 'all'"
            "   AND a.member_id = m.id"
            " LEFT JOIN score_totals p ON p.workspace_id = m.workspace_id AND p.period = ?"
            "   AND p.member_id = m.id"
            " WHERE m.id = ?",
            (period, member_id),
        )
        if row is None:
            return None
        points_all = int(row[5])
        return MemberTotals(
            member_id=int(row[0]),
            display_name=str(row[1]),
            points_all=points_all,
            points_period=int(row[6]),
            answered=int(row[7]),
            correct=int(row[8]),
            streak_days=int(row[2]),
            best_streak=int(row[3]),
            streak_last_day=date.fromisoformat(row[4]) if row[4] else None,
            rank_all=int(row[9]) if points_all > 0 else None,
            freezes=int(row[10]),
            freezes_used=int(row[11]),
        )

    async def streaks(
        self, workspace_id: int, today: date, *, limit: int = 10, least: int = 1
    ) -> list[StreakBoardRow]:
        """The longest streaks alive ``today`` (at least ``least`` days), longest first.

        A streak is alive if the member answered today or yesterday, or holds freezes for
        every day missed since; the rule is the core's (:func:`current_streak`), so the SQL
        only narrows to streaks that could be alive (last answered within the freezes' reach).
        """
        reach = today - timedelta(days=1 + MAX_FREEZES)
        rows = await self._db.fetchall(
            "SELECT id, display_name, streak_days, best_streak, streak_last_day,"
            " streak_freezes, freezes_used FROM members"
            " WHERE workspace_id = ? AND streak_days >= ? AND streak_last_day >= ?",
            (workspace_id, least, reach.isoformat()),
        )
        alive: list[tuple[int, str, StreakState]] = []
        for row in rows:
            last_day = date.fromisoformat(str(row[4]))
            state = StreakState(int(row[2]), int(row[3]), last_day, int(row[5]), int(row[6]))
            if current_streak(state, today) >= least:
                alive.append((int(row[0]), str(row[1]), streak_as_of(state, today)))
        alive.sort(key=lambda a: (-a[2].days, a[1].lower(), a[0]))
        standings: list[StreakBoardRow] = []
        for index, (member_id, name, state) in enumerate(alive[:limit]):
            rank = index + 1
            if standings and standings[-1].days == state.days:
                rank = standings[-1].rank  # ties share a rank, as on the points board
            standings.append(
                StreakBoardRow(rank, member_id, name, state.days, state.freezes, state.freezes_used)
            )
        return standings

    async def export_rows(
        self, workspace: str | None = None, *, now: datetime
    ) -> list[tuple[object, ...]]:
        """Every member's all-time numbers, workspace by workspace, best first (for CSV).

        ``workspace`` narrows to one workspace by its platform id or its name. The current
        streak is the one ``/stats`` shows at ``now`` (:func:`bot.core.scoring.current_streak`
        in the workspace's zone), not the stored count: that is the streak as of the last
        answer, and stays 1 after a member stopped answering.
        """
        rows = await self._db.fetchall(
            "SELECT w.platform, w.external_id, coalesce(w.name, ''), m.external_id,"
            " m.display_name, coalesce(t.points, 0), coalesce(t.answers, 0),"
            " (SELECT count(*) FROM answers WHERE member_id = m.id AND correct = 1),"
            " m.streak_days, m.best_streak, coalesce(m.streak_last_day, ''),"
            " m.streak_freezes, m.freezes_used,"
            " w.timezone, w.previous_timezone, w.timezone_from"
            " FROM members m JOIN workspaces w ON w.id = m.workspace_id"
            " LEFT JOIN score_totals t ON t.workspace_id = m.workspace_id AND t.period = 'all'"
            "   AND t.member_id = m.id"
            " WHERE CAST(? AS TEXT) IS NULL OR w.external_id = ? OR w.name = ?"
            " ORDER BY w.platform, w.external_id, coalesce(t.points, 0) DESC,"
            " lower(m.display_name)",
            (workspace, workspace, workspace),
        )
        return [_export_row(row, now) for row in rows]

    async def workspaces(self) -> list[WorkspaceInfo]:
        rows = await self._db.fetchall(
            "SELECT id, platform, external_id, coalesce(name, '') FROM workspaces ORDER BY id"
        )
        return [WorkspaceInfo(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    async def members_of(self, workspace_id: int) -> list[KnownMember]:
        rows = await self._db.fetchall(
            "SELECT id, external_id, display_name FROM members WHERE workspace_id = ? ORDER BY id",
            (workspace_id,),
        )
        return [KnownMember(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    async def earlier_import(self, workspace_id: int, sha256: str) -> tuple[str, datetime] | None:
        """When the file with this digest was imported before (its name, when), if it was."""
        row = await self._db.fetchone(
            "SELECT source, imported_at FROM score_imports WHERE workspace_id = ? AND sha256 = ?",
            (workspace_id, sha256),
        )
        return None if row is None else (str(row[0]), from_db(str(row[1])))

    async def import_points(
        self,
        workspace_id: int,
        points: Sequence[tuple[int, int]],
        *,
        sha256: str,
        source: str,
        now: datetime,
    ) -> int | None:
        """Log each ``(member row id, points)`` as one ``imported`` score event, counted in the
        all-time totals only, and return the import's id; ``None`` (and nothing written) when
        this file's digest was imported into the workspace before, by this process or another
        one (and not undone since)."""
        async with self._db.write() as conn:
            created = await conn.fetchone(
                "INSERT INTO score_imports (workspace_id, sha256, source, members, points, "
                "imported_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (workspace_id, sha256) DO NOTHING RETURNING id",
                (workspace_id, sha256, source, len(points), sum(p for _, p in points), to_db(now)),
            )
            if created is None:
                return None
            import_id = int(created[0])
            await conn.executemany(
                "INSERT INTO score_events (workspace_id, member_id, answer_id, reason, points, "
                "created_at, import_id) VALUES (?, ?, NULL, ?, ?, ?, ?)",
                [
                    (workspace_id, member, IMPORTED, value, to_db(now), import_id)
                    for member, value in points
                ],
            )
            await conn.executemany(
                "INSERT INTO score_totals (workspace_id, member_id, period, points, answers) "
                "VALUES (?, ?, 'all', ?, 0) ON CONFLICT (workspace_id, period, member_id) "
                "DO UPDATE SET points = score_totals.points + excluded.points",
                [(workspace_id, member, value) for member, value in points],
            )
        return import_id

    async def import_record(self, import_id: int) -> ImportRecord | None:
        """The import with this id, undone or not (``None``: there is none)."""
        row = await self._db.fetchone(
            "SELECT id, workspace_id, source, members, points, imported_at, undone_at"
            " FROM score_imports WHERE id = ?",
            (import_id,),
        )
        if row is None:
            return None
        return ImportRecord(
            id=int(row[0]),
            workspace_id=int(row[1]),
            source=str(row[2]),
            members=int(row[3]),
            points=int(row[4]),
            imported_at=from_db(str(row[5])),
            undone_at=None if row[6] is None else from_db(str(row[6])),
        )

    async def undo_import(self, import_id: int, *, now: datetime) -> list[tuple[int, int]] | None:
        """Take back exactly what import ``import_id`` added: for each of its events the
        opposite event (reason ``import undone``), and the all-time totals lowered by as much.
        The import is marked undone and its digest set aside, so the same file may be imported
        again. Returns the ``(member row id, points)`` taken back; ``None`` (nothing written)
        when there is no such import or it was undone already, by this process or another."""
        async with self._db.write() as conn:
            marked = await conn.fetchone(
                "UPDATE score_imports SET undone_at = ?,"
                " sha256 = sha256 || ':undone:' || CAST(id AS TEXT)"
                " WHERE id = ? AND undone_at IS NULL RETURNING workspace_id",
                (to_db(now), import_id),
            )
            if marked is None:
                return None
            workspace_id = int(marked[0])
            rows = await conn.fetchall(
                "SELECT member_id, points FROM score_events"
                " WHERE import_id = ? AND reason = ? ORDER BY id",
                (import_id, IMPORTED),
            )
            taken = [(int(r[0]), int(r[1])) for r in rows]
            await conn.executemany(
                "INSERT INTO score_events (workspace_id, member_id, answer_id, reason, points, "
                "created_at, import_id) VALUES (?, ?, NULL, ?, ?, ?, ?)",
                [
                    (workspace_id, member, IMPORT_UNDONE, -value, to_db(now), import_id)
                    for member, value in taken
                ],
            )
            await conn.executemany(
                "UPDATE score_totals SET points = points - ?"
                " WHERE workspace_id = ? AND period = 'all' AND member_id = ?",
                [(value, workspace_id, member) for member, value in taken],
            )
        return taken

    async def consistency_problems(self) -> list[str]:
        """All-time totals that disagree with the sum of their score events."""
        rows = await self._db.fetchall(
            "SELECT e.workspace_id, e.member_id, e.points, coalesce(t.points, 0) FROM"
            " (SELECT workspace_id, member_id, sum(points) AS points,"
            "  sum(CASE WHEN reason IN ('answer', 'round', 'exercise') THEN 1 ELSE 0 END)"
            "  AS answers"
            "  FROM score_events GROUP BY workspace_id, member_id) e"
            " LEFT JOIN score_totals t ON t.workspace_id = e.workspace_id"
            "  AND t.member_id = e.member_id AND t.period = 'all'"
            " WHERE t.points IS DISTINCT FROM e.points OR t.answers IS DISTINCT FROM e.answers"
        )
        return [
            f"score totals: member {r[1]} of workspace {r[0]} has {r[3]} points in totals "
            f"but {r[2]} in score events"
            for r in rows
        ]


def stored_streak(columns: Sequence[object], now: datetime) -> tuple[StreakState, date]:
    """A member's stored streak and the workspace's local day at ``now``, from the columns
    ``streak_days, best_streak, streak_last_day, streak_freezes, freezes_used`` then the
    workspace's ``timezone, previous_timezone, timezone_from`` (in that order)."""
    days, best, last, freezes, used, tz, previous, since = columns
    zone = WorkspaceSettings(
        timezone=str(tz),
        previous_timezone=None if previous is None else str(previous),
        timezone_from=None if since is None else from_db(str(since)),
    ).zone_at(now)
    last_day = date.fromisoformat(str(last)) if last else None
    state = StreakState(int(str(days)), int(str(best)), last_day, int(str(freezes)), int(str(used)))
    return state, now.astimezone(zone).date()


def _export_row(row: Row, now: datetime) -> tuple[object, ...]:
    """One export row with its streak as it stands at ``now`` in the workspace's own zone."""
    cells = list(row)[:-5]
    state, today = stored_streak(tuple(row)[8:], now)
    cells[8] = current_streak(state, today)
    shown = streak_as_of(state, today)
    return (*cells, shown.freezes, shown.freezes_used)


def _board(
    rows: Sequence[Row], limit: int, caller_member_id: int | None
) -> tuple[list[LeaderboardRow], LeaderboardRow | None]:
    """Ranked rows -> the top ``limit`` and the caller's own row (wherever it ranks)."""
    board: list[LeaderboardRow] = []
    caller: LeaderboardRow | None = None
    for row in rows:
        entry = LeaderboardRow(int(row[0]), int(row[1]), str(row[2]), int(row[3]), int(row[4]))
        if entry.member_id == caller_member_id:
            caller = entry
        if entry.rank <= limit and len(board) < limit:
            board.append(entry)
    return board, caller
