"""The sums item analysis is computed from, read set-based on either engine.

A question's statistics (bot.core.item_analysis) need, over the answers in a scope: how many
were right, how strong members did against weak ones, how long answers took and which choice
each group picked. Every figure here is a ``GROUP BY`` over the answers, so 100,000 answers
come back as a few hundred rows; Python only divides. The members' overall shares, their
upper and lower 27 % groups and the rest score of the point-biserial correlation are window
functions and sums in the same statement, so both engines rank members the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core.item_analysis import ChoiceCount, ExerciseTotals, ItemTotals, QuestionRow
from bot.storage.database import Database
from bot.storage.timefmt import to_db

__all__ = [
    "Bounds",
    "ChoiceCount",
    "ExerciseTotals",
    "ItemScope",
    "ItemStatsStore",
    "ItemTotals",
    "QuestionRow",
]

#: A member needs this many scored answers in the scope to be ranked into a 27 % group.
MIN_RANKED = 3

#: The upper and lower groups' bounding shares, ``(right, scored)`` each (None: no groups).
Bounds = tuple[tuple[int, int], tuple[int, int]] | None


@dataclass(frozen=True, slots=True)
class ItemScope:
    """Which answers count: one workspace, optionally one channel and a period [since, until)."""

    workspace_id: int
    channel_id: int | None = None
    since: datetime | None = None
    until: datetime | None = None

    def where(self, moment: str) -> tuple[str, list[object]]:
        """The scope's conditions on ``c`` (channels) and the text column ``moment``."""
        clauses: list[str] = ["c.workspace_id = ?"]
        params: list[object] = [self.workspace_id]
        if self.channel_id is not None:
            clauses.append("c.id = ?")
            params.append(self.channel_id)
        if self.since is not None:
            clauses.append(f"{moment} >= ?")
            params.append(to_db(self.since))
        if self.until is not None:
            clauses.append(f"{moment} < ?")
            params.append(to_db(self.until))
        return " AND ".join(clauses), params


class ItemStatsStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def bounds(self, scope: ItemScope) -> Bounds:
        """The upper and lower 27 % groups' bounds, as shares ``(right, scored)``: a member
        with at least :data:`MIN_RANKED` scored answers is upper at or above the first, lower
        at or below the second (ties at a bound join its group). One small ``GROUP BY`` per
        member; ``None`` when the groups would meet (nobody stands out)."""
        where, params = scope.where("a.answered_at")
        rows = await self._db.fetchall(
            "SELECT COUNT(a.correct), COALESCE(SUM(a.correct), 0) FROM answers a"
            " JOIN posts p ON p.id = a.post_id JOIN channels c ON c.id = p.channel_id"
            f" WHERE {where} GROUP BY a.member_id HAVING COUNT(a.correct) >= {MIN_RANKED}",
            params,
        )
        shares = sorted(((int(r[1]), int(r[0])) for r in rows), key=lambda s: s[0] / s[1])
        if len(shares) < 2:
            return None
        size = -(-len(shares) * 27 // 100)  # ceil(27 %)
        lower, upper = shares[size - 1], shares[-size]
        if upper[0] * lower[1] <= lower[0] * upper[1]:  # upper share <= lower share
            return None
        return upper, lower

    def _scoped(self, scope: ItemScope, bounds: Bounds) -> tuple[str, list[object]]:
        """``scoped``: the answers in scope, each with its member's group (U, M or L) and the
        member's scored answers ``n`` and right ones ``r`` (window sums, so no join)."""
        where, params = scope.where("a.answered_at")
        if bounds is None:
            group = "'M'"
        else:
            (ur, un), (lr, ln) = bounds
            group = (
                f"CASE WHEN n >= {MIN_RANKED} AND r * {un} >= {ur} * n THEN 'U'"
                f" WHEN n >= {MIN_RANKED} AND r * {ln} <= {lr} * n THEN 'L' ELSE 'M' END"
            )
        # The window sums once in an inner select; the group read from them outside.
        sql = (
            f"WITH scoped AS (SELECT *, {group} AS g FROM ("
            " SELECT a.member_id, a.correct, a.choice, v.question_id,"
            " p.question_version_id AS version_id,"
            " CASE WHEN q.kind IN ('multiple_choice', 'practice') THEN p.choice_seed END AS seed,"
            f" {self._db.sql.seconds_between('a.answered_at', 'p.posted_at')} AS secs,"
            " CASE WHEN h.post_id IS NULL THEN 0 ELSE 1 END AS hinted,"
            " COUNT(a.correct) OVER w AS n, COALESCE(SUM(a.correct) OVER w, 0) AS r"
            " FROM answers a JOIN posts p ON p.id = a.post_id"
            " JOIN channels c ON c.id = p.channel_id"
            " JOIN question_versions v ON v.id = p.question_version_id"
            " JOIN questions q ON q.id = v.question_id"
            " LEFT JOIN hint_views h ON h.post_id = a.post_id AND h.member_id = a.member_id"
            f" WHERE {where} WINDOW w AS (PARTITION BY a.member_id)) AS rows_)"
        )
        return sql, params

    async def fingerprint(self, workspace_id: int) -> tuple[object, ...]:
        """What the figures are made of, in one cheap read: it changes when an answer, a
        hint view, an exercise attempt, a report, an ended flag or a question version is
        added, a question retired, a report resolved or a flag ended (answers are written once
        and never changed)."""
        row = await self._db.fetchone(
            "SELECT (SELECT max(id) FROM answers), (SELECT count(*) FROM hint_views),"
            " (SELECT max(id) FROM exercise_attempts), (SELECT max(id) FROM question_versions),"
            " (SELECT count(*) FROM questions WHERE retired_at IS NOT NULL),"
            " (SELECT max(id) FROM question_reports),"
            " (SELECT count(*) FROM question_reports WHERE workspace_id = ?"
            " AND resolved_at IS NULL),"
            " (SELECT count(*) FROM question_flags WHERE workspace_id = ?"
            " AND ended_at IS NOT NULL)",
            (workspace_id, workspace_id),
        )
        return () if row is None else tuple(row)

    async def find_workspaces(self, typed: str | None) -> list[int]:
        """Workspaces by platform id, name or row id; every workspace when ``typed`` is None."""
        rows = await self._db.fetchall(
            "SELECT id FROM workspaces WHERE CAST(? AS TEXT) IS NULL OR external_id = ? "
            "OR name = ? OR CAST(id AS TEXT) = ? ORDER BY id",
            (typed, typed, typed, typed),
        )
        return [int(r[0]) for r in rows]

    async def questions(self, workspace_id: int) -> list[QuestionRow]:
        """Every live question the workspace can be asked: the shared packs' questions, and
        the community questions this workspace wrote."""
        rows = await self._db.fetchall(
            "SELECT q.id, q.slug, k.slug, q.kind, q.difficulty, q.tags, q.current_version_id "
            "FROM questions q JOIN packs k ON k.id = q.pack_id "
            "WHERE q.retired_at IS NULL AND k.retired_at IS NULL AND (k.slug <> 'community' "
            "OR q.slug IN (SELECT item_id FROM community_items WHERE workspace_id = ?)) "
            "ORDER BY k.slug, q.slug",
            (workspace_id,),
        )
        return [
            QuestionRow(
                int(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                tuple(t for t in str(r[5]).split(",") if t),
                None if r[6] is None else int(r[6]),
            )
            for r in rows
        ]

    async def totals(self, scope: ItemScope, bounds: Bounds) -> dict[int, ItemTotals]:
        """Each answered question's sums, its median seconds to answer and open reports
        (``bounds``: :meth:`bounds` of the same scope, read once for this and :meth:`choices`)."""
        head, params = self._scoped(scope, bounds)
        rest = "(s.r - s.correct) * 1.0 / (s.n - 1)"
        pb = "s.correct IS NOT NULL AND s.n > 1"
        rows = await self._db.fetchall(
            head + ", per AS (SELECT s.question_id, COUNT(*) AS answers,"
            " COUNT(s.correct) AS scored, COALESCE(SUM(s.correct), 0) AS right_,"
            " COUNT(DISTINCT s.member_id) AS members, SUM(s.hinted) AS hinted,"
            f" SUM(CASE WHEN {pb} THEN 1 ELSE 0 END) AS pb_n,"
            f" SUM(CASE WHEN {pb} THEN s.correct ELSE 0 END) AS pb_x,"
            f" SUM(CASE WHEN {pb} THEN {rest} ELSE 0 END) AS pb_y,"
            f" SUM(CASE WHEN {pb} THEN s.correct * {rest} ELSE 0 END) AS pb_xy,"
            f" SUM(CASE WHEN {pb} THEN {rest} * {rest} ELSE 0 END) AS pb_yy,"
            " SUM(CASE WHEN s.g = 'U' AND s.correct IS NOT NULL THEN 1 ELSE 0 END) AS un,"
            " SUM(CASE WHEN s.g = 'U' THEN COALESCE(s.correct, 0) ELSE 0 END) AS ur,"
            " SUM(CASE WHEN s.g = 'L' AND s.correct IS NOT NULL THEN 1 ELSE 0 END) AS ln,"
            " SUM(CASE WHEN s.g = 'L' THEN COALESCE(s.correct, 0) ELSE 0 END) AS lr"
            " FROM scoped s GROUP BY s.question_id)"
            " SELECT * FROM per",
            params,
        )
        medians = await self._medians(scope)
        reports = await self.open_reports(scope.workspace_id)
        return {
            int(r[0]): ItemTotals(
                question_id=int(r[0]),
                answers=int(r[1]),
                scored=int(r[2]),
                right=int(r[3]),
                members=int(r[4]),
                hinted=int(r[5] or 0),
                pb_n=int(r[6] or 0),
                pb_x=float(r[7] or 0),
                pb_y=float(r[8] or 0),
                pb_xy=float(r[9] or 0),
                pb_yy=float(r[10] or 0),
                upper=int(r[11] or 0),
                upper_right=int(r[12] or 0),
                lower=int(r[13] or 0),
                lower_right=int(r[14] or 0),
                median_seconds=medians.get(int(r[0])),
                reports=reports.get(int(r[0]), 0),
            )
            for r in rows
        }

    async def _medians(self, scope: ItemScope) -> dict[int, float]:
        """Each question's median seconds from post to answer: its own lean pass (the middle
        row or two of each question's answers in time order)."""
        where, params = scope.where("a.answered_at")
        secs = self._db.sql.seconds_between("a.answered_at", "p.posted_at")
        rows = await self._db.fetchall(
            "WITH timed AS (SELECT v.question_id, s.secs, ROW_NUMBER() OVER ("
            " PARTITION BY v.question_id ORDER BY s.secs) AS rn,"
            " COUNT(*) OVER (PARTITION BY v.question_id) AS cnt"
            f" FROM (SELECT a.post_id, {secs} AS secs FROM answers a"
            " JOIN posts p ON p.id = a.post_id JOIN channels c ON c.id = p.channel_id"
            f" WHERE {where}) s JOIN posts p ON p.id = s.post_id"
            " JOIN question_versions v ON v.id = p.question_version_id)"
            " SELECT question_id, AVG(secs) FROM timed"
            " WHERE rn IN ((cnt + 1) / 2, (cnt + 2) / 2) GROUP BY question_id",
            params,
        )
        return {int(r[0]): max(0.0, float(r[1])) for r in rows}

    async def choices(self, scope: ItemScope, bounds: Bounds) -> list[ChoiceCount]:
        """The answers given, counted per question version, seed, answer and group."""
        head, params = self._scoped(scope, bounds)
        rows = await self._db.fetchall(
            head + " SELECT s.question_id, s.version_id, s.seed, s.choice, s.g, COUNT(*)"
            " FROM scoped s GROUP BY s.question_id, s.version_id, s.seed, s.choice, s.g",
            params,
        )
        return [
            ChoiceCount(
                int(r[0]),
                int(r[1]),
                None if r[2] is None else int(r[2]),
                str(r[3]),
                str(r[4]),
                int(r[5]),
            )
            for r in rows
        ]

    async def hint_shown(self, post_id: int, member_id: int, now: datetime) -> None:
        """Record that ``member_id`` saw a hint of ``post_id`` (the first view is kept)."""
        async with self._db.write() as tx:
            await tx.execute(
                "INSERT INTO hint_views (post_id, member_id, shown_at) VALUES (?, ?, ?) "
                "ON CONFLICT (post_id, member_id) DO NOTHING",
                (post_id, member_id, to_db(now)),
            )

    async def open_reports(self, workspace_id: int) -> dict[int, int]:
        rows = await self._db.fetchall(
            "SELECT question_id, COUNT(*) FROM question_reports "
            "WHERE workspace_id = ? AND resolved_at IS NULL GROUP BY question_id",
            (workspace_id,),
        )
        return {int(r[0]): int(r[1]) for r in rows}

    async def exercises(self, scope: ItemScope) -> dict[int, ExerciseTotals]:
        """Per exercise: attempts, members who tried and who solved, and the failing checks."""
        where, params = scope.where("e.submitted_at")
        joins = (
            "FROM exercise_attempts e JOIN posts p ON p.id = e.post_id "
            "JOIN channels c ON c.id = p.channel_id "
            "JOIN question_versions v ON v.id = p.question_version_id "
        )
        rows = await self._db.fetchall(
            "SELECT v.question_id, COUNT(*), COUNT(DISTINCT e.member_id), "
            "COUNT(DISTINCT CASE WHEN e.solved = 1 THEN e.member_id END) "
            f"{joins}WHERE {where} GROUP BY v.question_id",
            params,
        )
        found = {
            int(r[0]): ExerciseTotals(int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in rows
        }
        failing = await self._db.fetchall(
            f"SELECT v.question_id, e.failed, COUNT(*) {joins}"
            f"WHERE {where} AND e.failed <> '' GROUP BY v.question_id, e.failed",
            params,
        )
        for question_id, labels, count in failing:
            totals = found.get(int(question_id))
            if totals is None:
                continue
            for label in str(labels).split(","):
                totals.failed[label] = totals.failed.get(label, 0) + int(count)
        return found
