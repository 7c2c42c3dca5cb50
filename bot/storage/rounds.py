"""Live rounds in the database: the round rows the timer drives, hints taken, the board.

A round's state is one row (see migration 0010): how many questions were asked (``step``) and
when the next step is due. :meth:`RoundStore.claim_step` moves ``step`` on only from the value
it was read at, so when several processes share the database exactly one of them asks each
question; one running round per channel is a partial unique index.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.core.rounds import RoundSpec, Scoring, team_names
from bot.storage.database import INTEGRITY_ERRORS, Database, Row
from bot.storage.timefmt import from_db, from_db_opt, to_db

__all__ = ["BoardRow", "Round", "RoundExists", "RoundStore"]


class RoundExists(Exception):
    """The channel already has a running round."""


@dataclass(frozen=True, slots=True)
class Round:
    id: int
    workspace_id: int
    channel_id: int
    started_by: str
    starter_name: str
    pack: str | None
    difficulty: str | None
    tags: tuple[str, ...]
    questions: int
    seconds: int
    pause: int
    speed_bonus: bool
    step: int
    due_at: datetime
    started_at: datetime
    ended_at: datetime | None
    end_note: str | None
    scoring: Scoring = Scoring.SPEED
    teams: int = 0
    talk: int = 0  # seconds of team talk before each question
    talked: int = 0  # the last question whose team talk was announced
    # Teams made from roles: (platform role id, shown name) per team, in order; () otherwise.
    team_roles: tuple[tuple[str, str], ...] = ()

    @property
    def team_names(self) -> tuple[str, ...]:
        """Each team's name as shown (its colour, and its role when teams are roles)."""
        return team_names(self.teams, [name for _, name in self.team_roles])

    @property
    def spec(self) -> RoundSpec:
        """The round's rules as it was started (the kinds it asks are the workspace's now)."""
        return RoundSpec(
            self.questions,
            self.seconds,
            self.pause,
            self.speed_bonus,
            scoring=self.scoring,
            teams=self.teams,
            talk=self.talk,
        )

    @property
    def running(self) -> bool:
        return self.ended_at is None


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One member's round: points, correct answers, the fastest correct one."""

    member_id: int
    name: str
    points: int
    correct: int
    answered: int
    fastest: timedelta | None
    took: timedelta = timedelta(0)  # the right answers' times, summed: accuracy's tie-break


_COLUMNS = (
    "id, workspace_id, channel_id, started_by, starter_name, pack, difficulty, tags, questions, "
    "seconds, pause_seconds, speed_bonus, step, due_at, started_at, ended_at, end_note, scoring, "
    "teams, talk_seconds, talked, team_roles"
)


def _round(row: Row) -> Round:
    tags = str(row[7] or "")
    return Round(
        id=int(str(row[0])),
        workspace_id=int(str(row[1])),
        channel_id=int(str(row[2])),
        started_by=str(row[3]),
        starter_name=str(row[4]),
        pack=None if row[5] is None else str(row[5]),
        difficulty=None if row[6] is None else str(row[6]),
        tags=tuple(t for t in tags.split(",") if t),
        questions=int(str(row[8])),
        seconds=int(str(row[9])),
        pause=int(str(row[10])),
        speed_bonus=bool(row[11]),
        step=int(str(row[12])),
        due_at=from_db(str(row[13])),
        started_at=from_db(str(row[14])),
        ended_at=from_db_opt(None if row[15] is None else str(row[15])),
        end_note=None if row[16] is None else str(row[16]),
        scoring=Scoring(str(row[17])),
        teams=int(str(row[18])),
        talk=int(str(row[19])),
        talked=int(str(row[20])),
        team_roles=_roles_from_db(str(row[21] or "")),
    )


def _roles_to_db(roles: Sequence[tuple[str, str]]) -> str:
    return json.dumps([list(pair) for pair in roles]) if roles else ""


def _roles_from_db(text: str) -> tuple[tuple[str, str], ...]:
    if not text:
        return ()
    return tuple((str(role), str(name)) for role, name in json.loads(text))


class RoundStore:
    """SQL for live rounds."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def create(
        self,
        *,
        due_at: datetime,
        schedule_id: int | None = None,
        occurrence: str | None = None,
        workspace_id: int,
        channel_id: int,
        started_by: str,
        starter_name: str,
        pack: str | None,
        difficulty: str | None,
        tags: Sequence[str],
        questions: int,
        seconds: int,
        pause: int,
        speed_bonus: bool,
        now: datetime,
        scoring: Scoring = Scoring.SPEED,
        teams: int = 0,
        talk: int = 0,
        team_roles: Sequence[tuple[str, str]] = (),
    ) -> Round:
        """A new round, its first question due at ``due_at``; :class:`RoundExists` if the
        channel has a running one
        (checked, and held by a partial unique index when two processes race)."""
        try:
            return await self._create(
                (
                    workspace_id,
                    channel_id,
                    started_by,
                    starter_name,
                    pack,
                    difficulty,
                    ",".join(tags),
                    questions,
                    seconds,
                    pause,
                    int(speed_bonus),
                    to_db(due_at),
                    to_db(now),
                    schedule_id,
                    occurrence,
                    scoring.value,
                    teams,
                    talk,
                    _roles_to_db(team_roles),
                ),
                channel_id,
            )
        except INTEGRITY_ERRORS:
            raise RoundExists from None

    async def _create(self, values: tuple[object, ...], channel_id: int) -> Round:
        async with self._db.write() as conn:
            running = await conn.fetchall(
                "SELECT id FROM rounds WHERE channel_id = ? AND ended_at IS NULL", (channel_id,)
            )
            if list(running):
                raise RoundExists
            rows = list(
                await conn.fetchall(
                    "INSERT INTO rounds (workspace_id, channel_id, started_by, starter_name, pack,"
                    " difficulty, tags, questions, seconds, pause_seconds, speed_bonus, step,"
                    " due_at, started_at, schedule_id, occurrence, scoring, teams, talk_seconds,"
                    " team_roles)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?)"
                    f" RETURNING {_COLUMNS}",
                    values,
                )
            )
        return _round(rows[0])

    async def get(self, round_id: int) -> Round | None:
        row = await self._db.fetchone(f"SELECT {_COLUMNS} FROM rounds WHERE id = ?", (round_id,))
        return None if row is None else _round(row)

    async def running_in(self, channel_id: int) -> Round | None:
        row = await self._db.fetchone(
            f"SELECT {_COLUMNS} FROM rounds WHERE channel_id = ? AND ended_at IS NULL",
            (channel_id,),
        )
        return None if row is None else _round(row)

    async def due(self, now: datetime) -> list[Round]:
        rows = await self._db.fetchall(
            f"SELECT {_COLUMNS} FROM rounds WHERE ended_at IS NULL AND due_at <= ? ORDER BY due_at",
            (to_db(now),),
        )
        return [_round(r) for r in rows]

    async def next_due(self) -> datetime | None:
        value = await self._db.fetchval("SELECT min(due_at) FROM rounds WHERE ended_at IS NULL")
        return None if value is None else from_db(str(value))

    async def claim_step(self, round_: Round, due_at: datetime) -> bool:
        """Move the round from the step it was read at to the next, due at ``due_at``; False
        if another process (or an earlier pass) has moved it already, or it ended."""
        async with self._db.write() as conn:
            claimed = await conn.fetchall(
                "UPDATE rounds SET step = step + 1, due_at = ? "
                "WHERE id = ? AND step = ? AND ended_at IS NULL RETURNING id",
                (to_db(due_at), round_.id, round_.step),
            )
            return bool(list(claimed))

    async def claim_talk(self, round_: Round, due_at: datetime) -> bool:
        """Mark the next question's team talk announced, the question itself due at
        ``due_at``; False if another process (or an earlier pass) announced it already."""
        async with self._db.write() as conn:
            claimed = await conn.fetchall(
                "UPDATE rounds SET talked = step + 1, due_at = ? WHERE id = ? AND step = ?"
                " AND talked <= step AND ended_at IS NULL RETURNING id",
                (to_db(due_at), round_.id, round_.step),
            )
            return bool(list(claimed))

    async def end(self, round_id: int, now: datetime, note: str | None) -> bool:
        """End a running round; False if it had ended already (the board is posted once)."""
        async with self._db.write() as conn:
            ended = await conn.fetchall(
                "UPDATE rounds SET ended_at = ?, end_note = ? "
                "WHERE id = ? AND ended_at IS NULL RETURNING id",
                (to_db(now), note, round_id),
            )
            return bool(list(ended))

    async def answers_to(self, post_ids: Sequence[int]) -> int:
        """How many answers these posts got (a round that nobody plays ends itself)."""
        if not post_ids:
            return 0
        marks = ", ".join("?" * len(post_ids))
        value = await self._db.fetchval(
            f"SELECT count(*) FROM answers WHERE post_id IN ({marks})", tuple(post_ids)
        )
        return int(str(value or 0))

    async def post_ids(self, round_id: int, *, counted: bool = False) -> list[int]:
        """The round's questions in the order asked (``counted``: without the skipped ones,
        which count for nobody)."""
        skipped = " AND skipped_at IS NULL" if counted else ""
        rows = await self._db.fetchall(
            f"SELECT id FROM posts WHERE round_id = ?{skipped} ORDER BY id", (round_id,)
        )
        return [int(str(r[0])) for r in rows]

    async def take_hint(self, post_id: int, member_id: int) -> None:
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO round_hints (post_id, member_id, hints) VALUES (?, ?, 1) "
                "ON CONFLICT (post_id, member_id) DO UPDATE SET hints = round_hints.hints + 1",
                (post_id, member_id),
            )

    async def hints(self, post_id: int, member_id: int) -> int:
        value = await self._db.fetchval(
            "SELECT hints FROM round_hints WHERE post_id = ? AND member_id = ?",
            (post_id, member_id),
        )
        return int(str(value or 0))

    async def board(self, round_id: int, scoring: Scoring = Scoring.SPEED) -> list[BoardRow]:
        """Everyone who answered in the round, best first: points, correct, fastest correct.
        A skipped question counts for nobody. Accuracy first ranks equal points by the right
        answers' summed time (the quicker first); speed ranks them by right answers."""
        rows = await self._db.fetchall(
            "SELECT a.member_id, m.display_name,"
            "  coalesce(sum(e.points), 0) AS points,"
            "  sum(CASE WHEN a.correct = 1 THEN 1 ELSE 0 END) AS correct,"
            "  count(*) AS answered"
            " FROM answers a JOIN posts p ON p.id = a.post_id"
            " JOIN members m ON m.id = a.member_id"
            " LEFT JOIN score_events e ON e.answer_id = a.id AND e.reason = 'round'"
            " WHERE p.round_id = ? AND p.skipped_at IS NULL"
            " GROUP BY a.member_id, m.display_name"
            " ORDER BY points DESC, correct DESC, lower(m.display_name)",
            (round_id,),
        )
        times = await self._right_times(round_id)
        board = [
            BoardRow(
                member_id=int(str(r[0])),
                name=str(r[1]),
                points=int(str(r[2])),
                correct=int(str(r[3])),
                answered=int(str(r[4])),
                fastest=min(times.get(int(str(r[0])), ()), default=None),
                took=sum(times.get(int(str(r[0])), ()), timedelta(0)),
            )
            for r in rows
        ]
        if scoring is Scoring.ACCURACY:  # stable: equal times keep the order above
            board.sort(key=lambda row: (-row.points, row.took))
        return board

    async def _right_times(self, round_id: int) -> dict[int, list[timedelta]]:
        """Each member's right answers' times from their question's post (skips left out)."""
        rows = await self._db.fetchall(
            "SELECT a.member_id, a.answered_at, p.posted_at FROM answers a"
            " JOIN posts p ON p.id = a.post_id"
            " WHERE p.round_id = ? AND a.correct = 1 AND p.skipped_at IS NULL",
            (round_id,),
        )
        found: dict[int, list[timedelta]] = {}
        for member, answered, posted in rows:
            taken = from_db(str(answered)) - from_db(str(posted))
            found.setdefault(int(str(member)), []).append(taken)
        return found

    # --- teams -----------------------------------------------------------------------------

    async def mastery(self, workspace_id: int, member_id: int, tags: Sequence[str]) -> float:
        """A member's share right on questions with any of ``tags`` (every question with no
        tags), over all they answered in the workspace: how strong they come to a team
        round on its subject. 0.5 for someone with no answers yet (neither strong nor weak)."""
        tagged = " OR ".join(self._db.sql.contains("q.tags", "?") for _ in tags) or "1 = 1"
        row = await self._db.fetchone(
            "SELECT count(a.correct), coalesce(sum(a.correct), 0) FROM answers a"
            " JOIN posts p ON p.id = a.post_id"
            " JOIN question_versions v ON v.id = p.question_version_id"
            " JOIN questions q ON q.id = v.question_id"
            f" WHERE a.member_id = ? AND ({tagged})",
            (member_id, *(f",{t}," for t in tags)),
        )
        scored, right = (0, 0) if row is None else (int(row[0] or 0), int(row[1] or 0))
        return right / scored if scored else 0.5

    async def join_team(
        self,
        round_: Round,
        member_id: int,
        mastery: float,
        now: datetime,
        pick: Callable[[list[int], list[float]], int],
        *,
        first_question: bool,
    ) -> tuple[int, bool]:
        """The member's team in the round, placed now if they had none (``pick`` chooses from
        each team's size and strength: summed mastery while the first question is open, mean
        points after). ``(team, joined now)``."""
        async with self._db.write() as conn:
            found = await conn.fetchval(
                "SELECT team FROM round_team_members WHERE round_id = ? AND member_id = ?",
                (round_.id, member_id),
            )
            if found is not None:
                return int(str(found)), False
            sizes = [0] * round_.teams
            strength = [0.0] * round_.teams
            for team, size, summed in await conn.fetchall(
                "SELECT team, count(*), sum(mastery) FROM round_team_members"
                " WHERE round_id = ? GROUP BY team",
                (round_.id,),
            ):
                sizes[int(team)] = int(size)
                strength[int(team)] = float(summed or 0)
            if not first_question:
                points = [0.0] * round_.teams
                for team, total in await conn.fetchall(
                    "SELECT t.team, coalesce(sum(e.points), 0) FROM round_team_members t"
                    " JOIN answers a ON a.member_id = t.member_id"
                    " JOIN posts p ON p.id = a.post_id AND p.round_id = t.round_id"
                    " JOIN score_events e ON e.answer_id = a.id AND e.reason = 'round'"
                    " WHERE t.round_id = ? AND p.skipped_at IS NULL GROUP BY t.team",
                    (round_.id,),
                ):
                    points[int(team)] = float(total)
                strength = [p / n if n else 0.0 for p, n in zip(points, sizes, strict=True)]
            team = pick(sizes, strength)
            await conn.execute(
                "INSERT INTO round_team_members (round_id, member_id, team, mastery, joined_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (round_.id, member_id, team, mastery, to_db(now)),
            )
        return team, True

    async def rosters(self, round_id: int) -> dict[int, list[str]]:
        """Each team's players' names, in the order they joined."""
        rows = await self._db.fetchall(
            "SELECT t.team, m.display_name FROM round_team_members t"
            " JOIN members m ON m.id = t.member_id WHERE t.round_id = ?"
            " ORDER BY t.team, t.joined_at, m.id",
            (round_id,),
        )
        found: dict[int, list[str]] = {}
        for team, name in rows:
            found.setdefault(int(str(team)), []).append(str(name))
        return found

    async def teams_of(self, round_id: int) -> dict[int, int]:
        """Each player's team (member row id to team number)."""
        rows = await self._db.fetchall(
            "SELECT member_id, team FROM round_team_members WHERE round_id = ?", (round_id,)
        )
        return {int(str(r[0])): int(str(r[1])) for r in rows}

    # --- skip votes ------------------------------------------------------------------------

    async def answerers(self, post_ids: Sequence[int]) -> set[int]:
        """The members (row ids) who answered any of these posts."""
        if not post_ids:
            return set()
        marks = ", ".join("?" * len(post_ids))
        rows = await self._db.fetchall(
            f"SELECT DISTINCT member_id FROM answers WHERE post_id IN ({marks})",
            tuple(post_ids),
        )
        return {int(str(r[0])) for r in rows}

    async def open_question(self, round_id: int, now: datetime) -> int | None:
        """The round's question still taking answers at ``now``, if any."""
        value = await self._db.fetchval(
            "SELECT max(id) FROM posts WHERE round_id = ? AND closed_at IS NULL"
            " AND skipped_at IS NULL AND closes_at > ?",
            (round_id, to_db(now)),
        )
        return None if value is None else int(str(value))

    async def vote_skip(self, post_id: int, member_id: int, now: datetime) -> int:
        """Record ``member_id``'s vote to skip ``post_id`` (once); the votes it has now."""
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO round_skip_votes (post_id, member_id, voted_at) VALUES (?, ?, ?) "
                "ON CONFLICT (post_id, member_id) DO NOTHING",
                (post_id, member_id, to_db(now)),
            )
            value = await conn.fetchval(
                "SELECT count(*) FROM round_skip_votes WHERE post_id = ?", (post_id,)
            )
        return int(str(value or 0))

    async def skip(
        self,
        round_: Round,
        post_id: int,
        now: datetime,
        periods_of: Callable[[datetime], Sequence[str]],
        next_due: datetime,
    ) -> bool:
        """Skip an open question, in one transaction: it closes now, the round's next step is
        due at ``next_due`` (sooner only), and every point its answers scored is taken back
        by an opposite event (reason ``round skipped``) in each period the event counted in
        (``periods_of`` its time). False if it was skipped or closed already (once, however
        many processes count the deciding vote)."""
        async with self._db.write() as conn:
            marked = await conn.fetchall(
                "UPDATE posts SET skipped_at = ?, closes_at = ? WHERE id = ? AND round_id = ?"
                " AND skipped_at IS NULL AND closed_at IS NULL AND closes_at > ? RETURNING id",
                (to_db(now), to_db(now), post_id, round_.id, to_db(now)),
            )
            if not list(marked):
                return False
            events = await conn.fetchall(
                "SELECT e.workspace_id, e.member_id, e.answer_id, e.points, e.created_at"
                " FROM score_events e JOIN answers a ON a.id = e.answer_id"
                " WHERE a.post_id = ? AND e.reason = 'round'",
                (post_id,),
            )
            taken = [
                (int(r[0]), int(r[1]), int(r[2]), int(r[3]), from_db(str(r[4]))) for r in events
            ]
            if taken:
                await conn.executemany(
                    "INSERT INTO score_events (workspace_id, member_id, answer_id, reason, "
                    "points, created_at) VALUES (?, ?, ?, 'round skipped', ?, ?)",
                    [(ws, m, a, -p, to_db(now)) for ws, m, a, p, _ in taken],
                )
                await conn.executemany(
                    "UPDATE score_totals SET points = points - ?"
                    " WHERE workspace_id = ? AND member_id = ? AND period = ?",
                    [(p, ws, m, period) for ws, m, _, p, at in taken for period in periods_of(at)],
                )
            await conn.execute(
                "UPDATE rounds SET due_at = ? WHERE id = ? AND ended_at IS NULL AND due_at > ?",
                (to_db(next_due), round_.id, to_db(next_due)),
            )
        return True

    async def close_early(
        self, round_: Round, post_id: int, closes_at: datetime, next_due: datetime
    ) -> bool:
        """Bring an open question's close forward to ``closes_at`` (every accommodated player
        has answered) and the round's next step to ``next_due``; False if it closes sooner."""
        async with self._db.write() as conn:
            moved = await conn.fetchall(
                "UPDATE posts SET closes_at = ? WHERE id = ? AND closed_at IS NULL"
                " AND closes_at > ? RETURNING id",
                (to_db(closes_at), post_id, to_db(closes_at)),
            )
            if not list(moved):
                return False
            await conn.execute(
                "UPDATE rounds SET due_at = ? WHERE id = ? AND ended_at IS NULL AND due_at > ?",
                (to_db(next_due), round_.id, to_db(next_due)),
            )
        return True

    async def skipped(self, post_id: int) -> bool:
        value = await self._db.fetchval("SELECT skipped_at FROM posts WHERE id = ?", (post_id,))
        return value is not None

    async def previous_points(self, round_: Round, member_ids: Sequence[int]) -> dict[int, int]:
        """Each member's points in the last round they played in this channel before this one
        (for "most improved")."""
        if not member_ids:
            return {}
        marks = ", ".join("?" * len(member_ids))
        rows = await self._db.fetchall(
            "SELECT a.member_id, p.round_id, coalesce(sum(e.points), 0)"
            " FROM answers a JOIN posts p ON p.id = a.post_id"
            " LEFT JOIN score_events e ON e.answer_id = a.id AND e.reason = 'round'"
            f" WHERE p.round_id < ? AND p.channel_id = ? AND a.member_id IN ({marks})"
            " GROUP BY a.member_id, p.round_id ORDER BY p.round_id",
            (round_.id, round_.channel_id, *member_ids),
        )
        last: dict[int, int] = {}
        for member, _, points in rows:
            last[int(str(member))] = int(str(points))  # ordered by round: the latest wins
        return last

    async def points_of(self, post_id: int) -> list[tuple[str, int, int]]:
        """Who got a round question right, their points for it and member row id, best
        first."""
        rows = await self._db.fetchall(
            "SELECT m.display_name, e.points, m.id FROM answers a"
            " JOIN members m ON m.id = a.member_id"
            " JOIN score_events e ON e.answer_id = a.id AND e.reason = 'round'"
            " WHERE a.post_id = ? AND a.correct = 1 ORDER BY e.points DESC, lower(m.display_name)",
            (post_id,),
        )
        return [(str(r[0]), int(str(r[1])), int(str(r[2]))) for r in rows]

    async def missed(self, round_id: int) -> list[tuple[int, int]]:
        """(member, question) for each question of the round a player left unanswered; a
        player is whoever answered at least one of its questions."""
        rows = await self._db.fetchall(
            "WITH asked AS (SELECT p.id, v.question_id FROM posts p"
            "  JOIN question_versions v ON v.id = p.question_version_id"
            "  WHERE p.round_id = ? AND p.skipped_at IS NULL),"
            " players AS (SELECT DISTINCT a.member_id FROM answers a"
            "  JOIN posts p ON p.id = a.post_id WHERE p.round_id = ?)"
            " SELECT pl.member_id, q.question_id FROM players pl CROSS JOIN asked q"
            " WHERE NOT EXISTS (SELECT 1 FROM answers a"
            "  WHERE a.post_id = q.id AND a.member_id = pl.member_id)"
            " ORDER BY pl.member_id, q.id",
            (round_id, round_id),
        )
        return [(int(str(r[0])), int(str(r[1]))) for r in rows]

    async def position(self, round_id: int, post_id: int) -> tuple[int, int]:
        """Which question of its round a post is (1-based), and how many the round asks."""
        row = await self._db.fetchone(
            "SELECT (SELECT count(*) FROM posts WHERE round_id = ? AND id <= ?), questions"
            " FROM rounds WHERE id = ?",
            (round_id, post_id, round_id),
        )
        assert row is not None, f"round {round_id} vanished"
        return int(str(row[0])), int(str(row[1]))

    async def wrong(self, round_id: int) -> list[tuple[int, int]]:
        """(member, question) for each wrong answer given in the round."""
        rows = await self._db.fetchall(
            "SELECT a.member_id, v.question_id FROM answers a JOIN posts p ON p.id = a.post_id"
            " JOIN question_versions v ON v.id = p.question_version_id"
            " WHERE p.round_id = ? AND a.correct = 0 AND p.skipped_at IS NULL ORDER BY a.id",
            (round_id,),
        )
        return [(int(str(r[0])), int(str(r[1]))) for r in rows]
