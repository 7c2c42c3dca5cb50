"""Recording answers with group commit: many concurrent clicks, one transaction per batch.

A popular question gets hundreds of clicks within a second. Each click must be durable before
it is acknowledged, and SQLite has one writer; a transaction per click would cap throughput at
the cost of a commit. Instead, clicks queue up while a batch is being written and the next
batch takes them all: a handful of set-based statements (``executemany``) per batch, whatever
its size, then one commit, then every waiting click gets its own outcome.

``UNIQUE(post_id, member_id)`` makes "the first answer counts" a database fact: within a batch
the earliest request wins, across batches the row already there wins. Scoring rules are passed
in by the core, so storage decides nothing about points.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import TypeVar

from bot.core.scoring import ScoreDecision, StreakState
from bot.core.srs import CardState, Grade
from bot.log import get_logger
from bot.storage.database import Database, Tx, chunks
from bot.storage.directory import Directory, MemberRow
from bot.storage.reviews import ReviewItem, ReviewStore
from bot.storage.timefmt import from_db_opt, to_db

__all__ = ["AnswerOutcome", "AnswerRequest", "AnswerStatus", "AnswerWriter", "Rules"]

log = get_logger(__name__)
MAX_BATCH = 1000
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    post_id: int
    workspace_id: int
    member_external: str
    member_name: str
    choice: str
    correct: bool | None
    answered_at: datetime
    local_day: date
    difficulty: str
    self_graded: bool
    periods: tuple[str, ...] = ()  # leaderboard periods this answer's points count towards
    # Spaced repetition: the question (``questions.id``, stable across edits) and how the
    # answer grades the member's card; None for answers that are not reviews.
    question_id: int | None = None
    grade: Grade | None = None
    base_points: int | None = None  # the workspace's points for this difficulty; None: built in
    # A live round's question: what a correct answer scores there (speed bonus and hints
    # counted in); its score event is of the kind ``round``. None: an ordinary question.
    round_points: int | None = None
    # An exercise: the points its best submission earned (all of them for a full pass, a share
    # at close for a partial one); its score event is of the kind ``exercise``.
    exercise_points: int | None = None


class AnswerStatus(enum.StrEnum):
    RECORDED = "recorded"
    DUPLICATE = "duplicate"  # this member had already answered this post
    CLOSED = "closed"  # the post closed before the answer was written


@dataclass(frozen=True, slots=True)
class AnswerOutcome:
    status: AnswerStatus
    member_id: int
    choice: str  # for DUPLICATE: the choice that was recorded first
    points: int = 0
    bonus: int = 0
    streak: StreakState = field(default_factory=StreakState)
    card: CardState | None = None  # the member's card after this answer's review
    before: StreakState = field(default_factory=StreakState)  # the streak before this answer


Rules = Callable[[StreakState, AnswerRequest], ScoreDecision]


@dataclass(slots=True)
class _Batch:
    outcomes: list[AnswerOutcome] = field(default_factory=list)
    events: list[tuple[object, ...]] = field(default_factory=list)
    streaks: dict[int, StreakState] = field(default_factory=dict)
    totals: dict[tuple[int, int, str], list[int]] = field(default_factory=dict)

    def add_total(
        self, workspace_id: int, member_id: int, periods: Sequence[str], points: int
    ) -> None:
        for period in periods:
            total = self.totals.setdefault((workspace_id, member_id, period), [0, 0])
            total[0] += points
            total[1] += 1


class AnswerWriter:
    def __init__(
        self,
        db: Database,
        directory: Directory,
        rules: Rules,
        reviews: ReviewStore | None = None,
        scored: Callable[[Sequence[tuple[int, int]]], None] | None = None,
    ) -> None:
        self._db = db
        # Told, after each commit, the (workspace id, member id) of every answer recorded:
        # what changed a score (role rewards look at those members at once).
        self._scored = scored
        self._directory = directory
        self._rules = rules
        self._reviews = reviews  # every graded answer is also a review, in the same commit
        self._pending: list[tuple[AnswerRequest, asyncio.Future[AnswerOutcome]]] = []
        self._drainer: asyncio.Task[None] | None = None

    async def submit(self, request: AnswerRequest) -> AnswerOutcome:
        """Queue one answer and wait until its batch is committed."""
        future: asyncio.Future[AnswerOutcome] = asyncio.get_running_loop().create_future()
        self._pending.append((request, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain(), name="answer-writer")
        return await future

    async def flushed(self) -> None:
        """Wait until every queued answer is committed (or failed): nothing is left in memory."""
        while self._drainer is not None and not self._drainer.done():
            await asyncio.shield(self._drainer)

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending[:MAX_BATCH], self._pending[MAX_BATCH:]
            requests = [request for request, _ in batch]
            try:
                outcomes = await self._write(requests)
            except Exception as exc:
                log.exception("writing a batch of %d answers failed", len(batch))
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            for (_, future), outcome in zip(batch, outcomes, strict=True):
                if not future.done():
                    future.set_result(outcome)

    async def _write(self, requests: Sequence[AnswerRequest]) -> list[AnswerOutcome]:
        async with self._db.write() as conn:
            members = await self._members(conn, requests)
            open_posts = await self._open_posts(conn, requests)
            rows = [
                (
                    r.post_id,
                    members[(r.workspace_id, r.member_external)][0].id,
                    r.choice,
                    None if r.correct is None else int(r.correct),
                    to_db(r.answered_at),
                    r.local_day.isoformat(),
                )
                for r in requests
                if _is_open(r, open_posts)
            ]
            # The first answer counts: a second one (here, or from another bot process) is
            # skipped by the unique (post, member) and is not among the rows returned.
            inserted: dict[tuple[int, int], int] = {}
            for chunk in chunks(rows):
                for got in await conn.fetchall(
                    "INSERT INTO answers (post_id, member_id, choice, correct, answered_at, "
                    "local_day) VALUES "
                    + ",".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk))
                    + " ON CONFLICT (post_id, member_id) DO NOTHING "
                    "RETURNING id, post_id, member_id",
                    [value for values in chunk for value in values],
                ):
                    inserted[(int(got[1]), int(got[2]))] = int(got[0])
            batch = self._score(requests, members, open_posts, inserted)
            if batch.events:
                await conn.executemany(
                    "INSERT INTO score_events (workspace_id, member_id, answer_id, reason, "
                    "points, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    batch.events,
                )
            if batch.totals:
                await conn.executemany(
                    "INSERT INTO score_totals (workspace_id, member_id, period, points, answers) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (workspace_id, period, member_id) "
                    "DO UPDATE SET points = score_totals.points + excluded.points, "
                    "answers = score_totals.answers + excluded.answers",
                    [(ws, m, period, pts, n) for (ws, m, period), (pts, n) in batch.totals.items()],
                )
            if batch.streaks:
                await conn.executemany(
                    "UPDATE members SET streak_days = ?, best_streak = ?, streak_last_day = ?, "
                    "streak_freezes = ?, freezes_used = ? WHERE id = ?",
                    [
                        (
                            s.days,
                            s.best,
                            s.last_day.isoformat() if s.last_day else None,
                            s.freezes,
                            s.freezes_used,
                            member_id,
                        )
                        for member_id, s in batch.streaks.items()
                    ],
                )
            outcomes = await self._review(conn, requests, batch.outcomes, inserted)
            duplicates = [
                (r.post_id, o.member_id)
                for r, o in zip(requests, outcomes, strict=True)
                if o.status is AnswerStatus.DUPLICATE
            ]
            if duplicates:
                earlier = await self._recorded_choices(conn, duplicates)
                outcomes = [
                    replace(o, choice=earlier.get((r.post_id, o.member_id), "?"))
                    if o.status is AnswerStatus.DUPLICATE
                    else o
                    for r, o in zip(requests, outcomes, strict=True)
                ]
        # Cache member ids only once they are committed: a rolled-back batch must not leave
        # behind ids that SQLite will hand to somebody else.
        for member, _ in members.values():
            self._directory.remember_member(member)
        if self._scored is not None:
            recorded = [
                (r.workspace_id, o.member_id)
                for r, o in zip(requests, outcomes, strict=True)
                if o.status is AnswerStatus.RECORDED
            ]
            if recorded:
                self._scored(recorded)
        return outcomes

    async def _review(
        self,
        conn: Tx,
        requests: Sequence[AnswerRequest],
        outcomes: list[AnswerOutcome],
        inserted: dict[tuple[int, int], int],
    ) -> list[AnswerOutcome]:
        """Record a review for every answer recorded in this batch that grades a card."""
        if self._reviews is None:
            return outcomes
        graded = [
            (index, r, o)
            for index, (r, o) in enumerate(zip(requests, outcomes, strict=True))
            if o.status is AnswerStatus.RECORDED
            and r.grade is not None
            and r.question_id is not None
        ]
        if not graded:
            return outcomes
        cards = await self._reviews.record_in(
            conn,
            [
                ReviewItem(
                    workspace_id=r.workspace_id,
                    member_id=o.member_id,
                    question_id=r.question_id,
                    grade=r.grade,
                    reviewed_at=r.answered_at,
                    answer_id=inserted[(r.post_id, o.member_id)],
                )
                for _, r, o in graded
                if r.question_id is not None and r.grade is not None
            ],
        )
        result = list(outcomes)
        for (index, _, outcome), card in zip(graded, cards, strict=True):
            result[index] = replace(outcome, card=card)
        return result

    def _score(
        self,
        requests: Sequence[AnswerRequest],
        members: dict[tuple[int, str], tuple[MemberRow, StreakState]],
        open_posts: dict[int, datetime | None],
        inserted: dict[tuple[int, int], int],
    ) -> _Batch:
        """Apply the rules in arrival order; a member's streak carries across the batch."""
        batch = _Batch()
        claimed: set[tuple[int, int]] = set()
        for request in requests:
            member, state = members[(request.workspace_id, request.member_external)]
            key = (request.post_id, member.id)
            if not _is_open(request, open_posts):
                batch.outcomes.append(AnswerOutcome(AnswerStatus.CLOSED, member.id, request.choice))
                continue
            if key not in inserted or key in claimed:
                batch.outcomes.append(AnswerOutcome(AnswerStatus.DUPLICATE, member.id, ""))
                continue
            claimed.add(key)
            before = batch.streaks.get(member.id, state)
            decision = self._rules(before, request)
            batch.streaks[member.id] = decision.streak
            stamp = to_db(request.answered_at)
            answer_id = inserted[key]
            if request.correct is not None:
                reason = (
                    "round"
                    if request.round_points is not None
                    else "exercise"
                    if request.exercise_points is not None
                    else "answer"
                )
                batch.events.append(
                    (request.workspace_id, member.id, answer_id, reason, decision.points, stamp)
                )
                batch.add_total(
                    request.workspace_id,
                    member.id,
                    request.periods,
                    decision.points + decision.bonus,
                )
            if decision.bonus:
                batch.events.append(
                    (
                        request.workspace_id,
                        member.id,
                        answer_id,
                        "streak_bonus",
                        decision.bonus,
                        stamp,
                    )
                )
            batch.outcomes.append(
                AnswerOutcome(
                    AnswerStatus.RECORDED,
                    member.id,
                    request.choice,
                    decision.points,
                    decision.bonus,
                    decision.streak,
                    before=before,
                )
            )
        return batch

    async def _members(
        self, conn: Tx, requests: Sequence[AnswerRequest]
    ) -> dict[tuple[int, str], tuple[MemberRow, StreakState]]:
        """Create unseen members and read everyone's streak state inside this transaction."""
        names: dict[tuple[int, str], str] = {}
        for r in requests:
            names.setdefault((r.workspace_id, r.member_external), r.member_name)
        unseen = [
            (ws, ext, name, to_db(requests[0].answered_at))
            for (ws, ext), name in names.items()
            if (cached := self._directory.cached_member(ws, ext)) is None
            or cached.display_name != name
        ]
        if unseen:
            await conn.executemany(
                "INSERT INTO members (workspace_id, external_id, display_name, created_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (workspace_id, external_id) "
                "DO UPDATE SET display_name = excluded.display_name",
                unseen,
            )
        found: dict[tuple[int, str], tuple[MemberRow, StreakState]] = {}
        by_workspace: dict[int, list[str]] = {}
        for ws, ext in names:
            by_workspace.setdefault(ws, []).append(ext)
        for ws, externals in by_workspace.items():
            for chunk in chunks(externals):
                for row in await conn.fetchall(
                    "SELECT id, external_id, display_name, streak_days, best_streak, "
                    "streak_last_day, streak_freezes, freezes_used FROM members "
                    "WHERE workspace_id = ? "
                    f"AND external_id IN ({','.join('?' * len(chunk))})" + conn.sql.for_update(),
                    (ws, *chunk),
                ):
                    member = MemberRow(int(row[0]), ws, str(row[1]), str(row[2]))
                    last = date.fromisoformat(row[5]) if row[5] else None
                    found[(ws, member.external_id)] = (
                        member,
                        StreakState(int(row[3]), int(row[4]), last, int(row[6]), int(row[7])),
                    )
        return found

    async def _open_posts(
        self, conn: Tx, requests: Sequence[AnswerRequest]
    ) -> dict[int, datetime | None]:
        """Posts still open, read inside the transaction (a reveal may have just closed one)."""
        post_ids = sorted({r.post_id for r in requests})
        open_posts: dict[int, datetime | None] = {}
        for chunk in chunks(post_ids):
            for row in await conn.fetchall(
                "SELECT id, closes_at FROM posts WHERE closed_at IS NULL "
                f"AND id IN ({','.join('?' * len(chunk))})",
                tuple(chunk),
            ):
                open_posts[int(row[0])] = from_db_opt(row[1])
        return open_posts

    async def _recorded_choices(
        self, conn: Tx, keys: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], str]:
        found: dict[tuple[int, int], str] = {}
        by_post: dict[int, list[int]] = {}
        for post_id, member_id in keys:
            by_post.setdefault(post_id, []).append(member_id)
        for post_id, member_ids in by_post.items():
            for chunk in chunks(sorted(set(member_ids))):
                for row in await conn.fetchall(
                    "SELECT member_id, choice FROM answers WHERE post_id = ? "
                    f"AND member_id IN ({','.join('?' * len(chunk))})",
                    (post_id, *chunk),
                ):
                    found[(post_id, int(row[0]))] = str(row[1])
        return found


def _is_open(request: AnswerRequest, open_posts: dict[int, datetime | None]) -> bool:
    """Not closed, and answered before the window's end (the scheduler may lag the reveal)."""
    if request.post_id not in open_posts:
        return False
    closes_at = open_posts[request.post_id]
    return closes_at is None or request.answered_at < closes_at
