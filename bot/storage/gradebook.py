"""Each member's figures for a teacher's gradebook, read set-based for a whole workspace.

One statement: the members, joined to per-member ``GROUP BY`` sums of their answers,
exercises and reviews in the scope, so 1,000 members and 100,000 answers are one pass of
each table. The streak is completed in Python from the stored state, as ``/stats`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.scoring import current_streak
from bot.storage.database import Database, Row
from bot.storage.item_stats import ItemScope
from bot.storage.scores import stored_streak
from bot.storage.timefmt import to_db

__all__ = ["GradebookRow", "GradebookStore"]


@dataclass(frozen=True, slots=True)
class GradebookRow:
    member_id: str  # the platform's id
    name: str
    points: int
    answered: int
    scored: int
    right: int
    exercises_solved: int
    streak: int
    reviews: int  # reviews a day or more after the previous one (true retention, as /stats)
    recalled: int

    @property
    def accuracy(self) -> float | None:
        return self.right / self.scored if self.scored else None

    @property
    def retention(self) -> float | None:
        return self.recalled / self.reviews if self.reviews else None


class GradebookStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def rows(self, scope: ItemScope, now: datetime) -> list[GradebookRow]:
        """Every member of the workspace who answered, solved or reviewed in the scope."""
        answers_where, answer_params = scope.where("a.answered_at")
        tries_where, tries_params = scope.where("e.submitted_at")
        period = ""
        period_params: list[object] = []
        if scope.since is not None:
            period += " AND r.reviewed_at >= ?"
            period_params.append(to_db(scope.since))
        if scope.until is not None:
            period += " AND r.reviewed_at < ?"
            period_params.append(to_db(scope.until))
        points_where = period.replace("r.reviewed_at", "s.created_at")
        rows = await self._db.fetchall(
            "SELECT m.external_id, m.display_name, coalesce(pts.points, 0),"
            " coalesce(ans.answered, 0), coalesce(ans.scored, 0), coalesce(ans.right_, 0),"
            " coalesce(ex.solved, 0), coalesce(rv.reviews, 0), coalesce(rv.recalled, 0),"
            " m.streak_days, m.best_streak, m.streak_last_day, m.streak_freezes, m.freezes_used,"
            " w.timezone, w.previous_timezone, w.timezone_from"
            " FROM members m JOIN workspaces w ON w.id = m.workspace_id"
            " LEFT JOIN (SELECT a.member_id, COUNT(*) AS answered, COUNT(a.correct) AS scored,"
            " SUM(a.correct) AS right_ FROM answers a JOIN posts p ON p.id = a.post_id"
            f" JOIN channels c ON c.id = p.channel_id WHERE {answers_where}"
            " GROUP BY a.member_id) ans ON ans.member_id = m.id"
            " LEFT JOIN (SELECT e.member_id, COUNT(DISTINCT e.post_id) AS solved"
            " FROM exercise_attempts e JOIN posts p ON p.id = e.post_id"
            f" JOIN channels c ON c.id = p.channel_id WHERE e.solved = 1 AND {tries_where}"
            " GROUP BY e.member_id) ex ON ex.member_id = m.id"
            " LEFT JOIN (SELECT r.member_id, COUNT(*) AS reviews,"
            " SUM(CASE WHEN r.rating > 1 THEN 1 ELSE 0 END) AS recalled FROM reviews r"
            f" WHERE r.workspace_id = ? AND r.elapsed_days >= 1{period}"
            " GROUP BY r.member_id) rv ON rv.member_id = m.id"
            " LEFT JOIN (SELECT s.member_id, SUM(s.points) AS points FROM score_events s"
            f" WHERE s.workspace_id = ?{points_where} GROUP BY s.member_id) pts"
            " ON pts.member_id = m.id"
            " WHERE m.workspace_id = ? AND (ans.answered IS NOT NULL OR ex.solved IS NOT NULL"
            " OR rv.reviews IS NOT NULL OR pts.points IS NOT NULL)"
            " ORDER BY lower(m.display_name), m.external_id",
            [
                *answer_params,
                *tries_params,
                scope.workspace_id,
                *period_params,
                scope.workspace_id,
                *period_params,
                scope.workspace_id,
            ],
        )
        return [_row(row, now) for row in rows]


def _row(row: Row, now: datetime) -> GradebookRow:
    cells = tuple(row)
    state, today = stored_streak(cells[9:], now)
    return GradebookRow(
        member_id=str(cells[0]),
        name=str(cells[1]),
        points=int(cells[2]),
        answered=int(cells[3]),
        scored=int(cells[4]),
        right=int(cells[5] or 0),
        exercises_solved=int(cells[6]),
        streak=current_streak(state, today),
        reviews=int(cells[7]),
        recalled=int(cells[8] or 0),
    )
