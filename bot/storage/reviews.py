"""The review log and the card states derived from it (spaced repetition, FSRS).

``reviews`` is append-only: one row per graded answer. ``cards`` holds each (member, question)
card's FSRS state, written in the same transaction as the review that changes it; replaying a
card's reviews with its workspace's settings gives that row again (:meth:`replay_problems`).
When a workspace's settings change (retention, fitted parameters) its cards are replayed in
the same transaction, so the rule holds across changes too.

The FSRS rules are the core's (``bot.core.srs``); storage only applies them to rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from bot.core.srs import CardState, Grade, SrsSettings, replay, review
from bot.storage.database import Database, Row, Tx, chunks
from bot.storage.timefmt import from_db, to_db

__all__ = ["DueCard", "ReviewItem", "ReviewStore", "TagCards"]


@dataclass(frozen=True, slots=True)
class ReviewItem:
    """One review to record: who, which question, how it went, when (and for which answer)."""

    workspace_id: int
    member_id: int
    question_id: int
    grade: Grade
    reviewed_at: datetime
    answer_id: int | None = None


@dataclass(frozen=True, slots=True)
class DueCard:
    question_id: int
    version_id: int
    due: datetime


@dataclass(frozen=True, slots=True)
class TagCards:
    """A member's cards carrying one tag (``""`` for untagged questions)."""

    tag: str
    cards: tuple[CardState, ...]


_CARD_COLUMNS = "state, step, stability, difficulty, due, last_review, reviews"
# Packs switched off in every channel of the workspace do not count for reviews. (A pack is on
# by default; a workspace with no channel yet has every pack on.)
_OFF_PACKS = (
    "SELECT cp.pack_id FROM channel_packs cp JOIN channels ch ON ch.id = cp.channel_id "
    "WHERE ch.workspace_id = :ws AND cp.enabled = 0 GROUP BY cp.pack_id "
    "HAVING count(*) = (SELECT count(*) FROM channels WHERE workspace_id = :ws)"
)
_COUNTED = (
    "JOIN questions q ON q.id = c.question_id JOIN packs k ON k.id = q.pack_id "
    "LEFT JOIN card_holds h ON h.member_id = c.member_id AND h.question_id = c.question_id "
    "WHERE c.member_id = :member AND q.retired_at IS NULL AND k.retired_at IS NULL "
    f"AND q.current_version_id IS NOT NULL AND k.id NOT IN ({_OFF_PACKS})"
)

#: When a card is due to be served: its FSRS due time, or later while a hold lasts.
_DUE = "(CASE WHEN h.held_until > c.due THEN h.held_until ELSE c.due END)"


def _card(row: Sequence[object], offset: int = 0) -> CardState:
    state, step, stability, difficulty, due, last, count = row[offset : offset + 7]
    return CardState(
        state=int(str(state)),
        step=None if step is None else int(str(step)),
        stability=None if stability is None else float(str(stability)),
        difficulty=None if difficulty is None else float(str(difficulty)),
        due=from_db(str(due)),
        last_review=from_db(str(last)),
        reviews=int(str(count)),
    )


def _settings(row: Row | None) -> SrsSettings:
    if row is None:
        return SrsSettings()
    params = None if row[1] is None else tuple(float(p) for p in json.loads(str(row[1])))
    return SrsSettings(float(str(row[0])), params)


class ReviewStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    # --- settings ----------------------------------------------------------------------------

    async def settings(self, workspace_id: int) -> SrsSettings:
        row = await self._db.fetchone(
            "SELECT desired_retention, parameters FROM review_settings WHERE workspace_id = ?",
            (workspace_id,),
        )
        return _settings(row)

    async def _settings_in(self, conn: Tx, workspace_id: int) -> SrsSettings:
        return _settings(
            await conn.fetchone(
                "SELECT desired_retention, parameters FROM review_settings WHERE workspace_id = ?",
                (workspace_id,),
            )
        )

    async def update_settings(
        self,
        workspace_id: int,
        *,
        desired_retention: float | None = None,
        parameters: Sequence[float] | None = None,
        log_loss: float | None = None,
        now: datetime | None = None,
    ) -> int:
        """Change a workspace's retention and/or parameters and replay its cards with them,
        in one transaction. Returns how many cards were rescheduled."""
        async with self._db.write() as conn:
            current = await self._settings_in(conn, workspace_id)
            new = SrsSettings(
                current.desired_retention if desired_retention is None else desired_retention,
                current.parameters if parameters is None else tuple(parameters),
            )
            await conn.execute(
                "INSERT INTO review_settings (workspace_id, desired_retention, parameters, "
                "log_loss, optimized_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (workspace_id) DO "
                "UPDATE SET desired_retention = excluded.desired_retention, "
                "parameters = excluded.parameters, "
                "log_loss = coalesce(excluded.log_loss, review_settings.log_loss), "
                "optimized_at = coalesce(excluded.optimized_at, review_settings.optimized_at)",
                (
                    workspace_id,
                    new.desired_retention,
                    None if new.parameters is None else json.dumps(list(new.parameters)),
                    log_loss,
                    None if now is None or parameters is None else to_db(now),
                ),
            )
            histories = await self._histories_in(conn, workspace_id)
            rows = []
            for (member_id, question_id), history in histories.items():
                card = replay([(g, at) for _, g, at in history], new)
                assert card is not None
                rows.append(_card_row(workspace_id, member_id, question_id, card, history[-1][0]))
            await conn.executemany(_UPSERT_CARD, rows)
        return len(rows)

    # --- recording ---------------------------------------------------------------------------

    async def record(
        self, item: ReviewItem, *, expected_reviews: int | None = None
    ) -> CardState | None:
        """One review in a transaction of its own (a ``/review`` grading).

        With ``expected_reviews``, the review is recorded only if the card still has that
        many reviews (checked inside the transaction): a second click on the same button,
        or a grade racing another, is refused with ``None`` instead of counted twice.
        """
        async with self._db.write() as conn:
            if expected_reviews is not None:
                current = await self._cards_in(conn, [(item.member_id, item.question_id)])
                card = current.get((item.member_id, item.question_id))
                if (card.reviews if card else 0) != expected_reviews:
                    return None
            return (await self.record_in(conn, [item]))[0]

    async def amend_last(
        self, item: ReviewItem, before: CardState | None, *, expected_reviews: int
    ) -> CardState | None:
        """Change the grade of the card's last review (a typed review's one override): the
        card becomes ``before`` reviewed with ``item.grade`` when that review was made (so a
        replay of the log gives the same card), and the log's last row says the new grade.
        ``None`` if the card moved on since (another review, or the override already made):
        nothing is changed then."""
        async with self._db.write() as conn:
            key = (item.member_id, item.question_id)
            card = (await self._cards_in(conn, [key])).get(key)
            if card is None or card.reviews != expected_reviews:
                return None
            row = await conn.fetchone(
                "SELECT id, reviewed_at FROM reviews WHERE member_id = ? AND question_id = ?"
                " ORDER BY id DESC LIMIT 1",
                key,
            )
            if row is None:
                return None
            last, at = int(str(row[0])), from_db(str(row[1]))
            settings = await self._settings_in(conn, item.workspace_id)
            amended, _ = review(before, item.grade, at, settings)
            await conn.execute(
                "UPDATE reviews SET rating = ? WHERE id = ?", (int(item.grade), last)
            )
            await conn.execute(_UPSERT_CARD, _card_row(item.workspace_id, *key, amended, last))
            return amended

    async def record_in(self, conn: Tx, items: Sequence[ReviewItem]) -> list[CardState]:
        """Append ``items`` to the log and update their cards, inside the caller's write
        transaction (the answer writer's group commit). Items apply in order, so one card
        reviewed twice in a batch is reviewed twice."""
        if not items:
            return []
        settings = {ws: await self._settings_in(conn, ws) for ws in {i.workspace_id for i in items}}
        cards = await self._cards_in(conn, [(i.member_id, i.question_id) for i in items])
        ids = iter(await conn.reserve_ids("reviews", len(items)))
        log_rows: list[tuple[object, ...]] = []
        after: list[CardState] = []
        changed: dict[tuple[int, int], tuple[int, CardState, int]] = {}
        for item in items:
            key = (item.member_id, item.question_id)
            card, elapsed = review(
                cards.get(key), item.grade, item.reviewed_at, settings[item.workspace_id]
            )
            cards[key] = card
            next_id = next(ids)  # in order: a card's last review is its largest id
            log_rows.append(
                (
                    next_id,
                    item.workspace_id,
                    item.member_id,
                    item.question_id,
                    item.answer_id,
                    int(item.grade),
                    to_db(item.reviewed_at),
                    elapsed,
                )
            )
            changed[key] = (item.workspace_id, card, next_id)
            after.append(card)
        await conn.executemany(
            "INSERT INTO reviews (id, workspace_id, member_id, question_id, answer_id, rating, "
            "reviewed_at, elapsed_days) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            log_rows,
        )
        await conn.executemany(
            _UPSERT_CARD,
            [
                _card_row(ws, member, question, card, review_id)
                for (member, question), (ws, card, review_id) in changed.items()
            ],
        )
        return after

    async def _cards_in(
        self, conn: Tx, keys: Sequence[tuple[int, int]]
    ) -> dict[tuple[int, int], CardState]:
        found: dict[tuple[int, int], CardState] = {}
        by_member: dict[int, set[int]] = {}
        for member, question in keys:
            by_member.setdefault(member, set()).add(question)
        pairs = [(m, q) for m, qs in by_member.items() for q in sorted(qs)]
        for chunk in chunks(pairs, 200):
            where = " OR ".join("(member_id = ? AND question_id = ?)" for _ in chunk)
            for row in await conn.fetchall(
                f"SELECT member_id, question_id, {_CARD_COLUMNS} FROM cards WHERE {where}"
                + conn.sql.for_update(),
                tuple(v for pair in chunk for v in pair),
            ):
                found[(int(row[0]), int(row[1]))] = _card(tuple(row), 2)
        return found

    # --- reading -----------------------------------------------------------------------------

    async def current_version(self, question_id: int) -> int | None:
        """The question's version to show now (None: retired, or never existed)."""
        value = await self._db.fetchval(
            "SELECT q.current_version_id FROM questions q JOIN packs k ON k.id = q.pack_id "
            "WHERE q.id = ? AND q.retired_at IS NULL AND k.retired_at IS NULL",
            (question_id,),
        )
        return None if value is None else int(value)

    async def card(self, member_id: int, question_id: int) -> CardState | None:
        row = await self._db.fetchone(
            f"SELECT {_CARD_COLUMNS} FROM cards WHERE member_id = ? AND question_id = ?",
            (member_id, question_id),
        )
        return None if row is None else _card(tuple(row))

    async def prep_cards(
        self, workspace_id: int, member_id: int, day: date
    ) -> list[tuple[int, int, tuple[str, ...], CardState]]:
        """Exam prep's candidates: the member's cards (packs on, questions current) not
        reviewed as exam prep on ``day`` yet, as (question id, version id, tags, card)."""
        rows = await self._db.fetchall(
            f"SELECT c.question_id, q.current_version_id, q.tags, "
            f"{', '.join('c.' + c for c in _CARD_COLUMNS.split(', '))} FROM cards c {_COUNTED} "
            "AND NOT EXISTS (SELECT 1 FROM exam_prep_done d WHERE d.member_id = c.member_id "
            "AND d.question_id = c.question_id AND d.on_day = :day)",
            {"member": member_id, "ws": workspace_id, "day": day.isoformat()},
        )
        return [
            (
                int(str(r[0])),
                int(str(r[1])),
                tuple(t for t in str(r[2] or "").split(",") if t),
                _card(tuple(r), 3),
            )
            for r in rows
        ]

    async def prepped_on(self, member_id: int, question_id: int) -> date | None:
        """The last day the card was reviewed as exam prep, if ever."""
        value = await self._db.fetchval(
            "SELECT on_day FROM exam_prep_done WHERE member_id = ? AND question_id = ?",
            (member_id, question_id),
        )
        return None if value is None else date.fromisoformat(str(value))

    async def prep_done(self, member_id: int, question_id: int, day: date) -> None:
        """The card was reviewed as exam prep on ``day`` (its schedule is left alone)."""
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO exam_prep_done (member_id, question_id, on_day) VALUES (?, ?, ?) "
                "ON CONFLICT (member_id, question_id) DO UPDATE SET on_day = excluded.on_day",
                (member_id, question_id, day.isoformat()),
            )

    async def due(
        self, workspace_id: int, member_id: int, now: datetime, limit: int = 1
    ) -> list[DueCard]:
        """The member's cards due at ``now``, most overdue first (packs on in the workspace)."""
        rows = await self._db.fetchall(
            f"SELECT c.question_id, q.current_version_id, {_DUE} FROM cards c {_COUNTED} "
            f"AND {_DUE} <= :now ORDER BY {_DUE} LIMIT :limit",
            {"member": member_id, "ws": workspace_id, "now": to_db(now), "limit": limit},
        )
        return [DueCard(int(r[0]), int(r[1]), from_db(str(r[2]))) for r in rows]

    async def due_count(self, workspace_id: int, member_id: int, now: datetime) -> int:
        value = await self._db.fetchval(
            f"SELECT count(*) FROM cards c {_COUNTED} AND {_DUE} <= :now",
            {"member": member_id, "ws": workspace_id, "now": to_db(now)},
        )
        return int(value or 0)

    async def card_versions(self, workspace_id: int, member_id: int) -> list[int]:
        """The current question version of each of the member's cards (the ones /review
        serves: packs on, questions not retired), soonest due first."""
        rows = await self._db.fetchall(
            f"SELECT q.current_version_id FROM cards c {_COUNTED} ORDER BY {_DUE}, c.question_id",
            {"member": member_id, "ws": workspace_id},
        )
        return [int(r[0]) for r in rows]

    async def card_count(self, workspace_id: int, member_id: int) -> int:
        value = await self._db.fetchval(
            f"SELECT count(*) FROM cards c {_COUNTED}", {"member": member_id, "ws": workspace_id}
        )
        return int(value or 0)

    async def next_due(self, workspace_id: int, member_id: int, now: datetime) -> datetime | None:
        """When the member's next card falls due after ``now`` (None: no cards at all)."""
        value = await self._db.fetchval(
            f"SELECT min({_DUE}) FROM cards c {_COUNTED} AND {_DUE} > :now",
            {"member": member_id, "ws": workspace_id, "now": to_db(now)},
        )
        return None if value is None else from_db(str(value))

    async def hold(self, member_id: int, question_id: int, until: datetime) -> None:
        """Serve this member's card no sooner than ``until`` (a live round's miss comes back
        the next day); the card and its review log are untouched."""
        async with self._db.write() as conn:
            await conn.execute(
                "INSERT INTO card_holds (member_id, question_id, held_until) VALUES (?, ?, ?) "
                "ON CONFLICT (member_id, question_id) DO UPDATE SET held_until = "
                "excluded.held_until",
                (member_id, question_id, to_db(until)),
            )

    async def cards_by_tag(self, workspace_id: int, member_id: int) -> list[TagCards]:
        rows = await self._db.fetchall(
            f"SELECT q.tags, {', '.join('c.' + c for c in _CARD_COLUMNS.split(', '))} "
            f"FROM cards c {_COUNTED}",
            {"member": member_id, "ws": workspace_id},
        )
        by_tag: dict[str, list[CardState]] = {}
        for row in rows:
            card = _card(tuple(row), 1)
            tags = [t for t in str(row[0]).split(",") if t] or [""]
            for tag in tags:
                by_tag.setdefault(tag, []).append(card)
        return [TagCards(tag, tuple(cards)) for tag, cards in sorted(by_tag.items())]

    async def retention(self, member_id: int, since: datetime) -> tuple[int, int]:
        """True retention since ``since``: (recalled, reviewed) over reviews made a day or
        more after the card's previous review (same-day relearning steps do not count)."""
        row = await self._db.fetchone(
            "SELECT count(*), count(*) FILTER (WHERE rating > 1) FROM reviews "
            "WHERE member_id = ? AND reviewed_at >= ? AND elapsed_days >= 1",
            (member_id, to_db(since)),
        )
        return (0, 0) if row is None else (int(row[1]), int(row[0]))

    async def retention_by_tag(
        self, workspace_id: int, member_id: int, since: datetime
    ) -> list[tuple[str, int, int]]:
        """True retention per tag since ``since``: (tag, recalled, reviewed), by tag name.

        The same rule as :meth:`retention` (reviews a day or more after the card's previous
        one), over the packs that count in the workspace; a question with several tags counts
        under each.
        """
        rows = await self._db.fetchall(
            "SELECT q.tags, count(*), count(*) FILTER (WHERE r.rating > 1) FROM reviews r "
            "JOIN cards c ON c.member_id = r.member_id AND c.question_id = r.question_id "
            f"{_COUNTED} AND r.reviewed_at >= :since AND r.elapsed_days >= 1 GROUP BY q.tags",
            {"member": member_id, "ws": workspace_id, "since": to_db(since)},
        )
        by_tag: dict[str, list[int]] = {}
        for tags, reviewed, recalled in rows:
            for tag in [t for t in str(tags).split(",") if t] or [""]:
                totals = by_tag.setdefault(tag, [0, 0])
                totals[0] += int(recalled)
                totals[1] += int(reviewed)
        return [(tag, recalled, reviewed) for tag, (recalled, reviewed) in sorted(by_tag.items())]

    async def study_days(self, member_id: int, since: datetime) -> list[datetime]:
        """The instants of a member's reviews since ``since`` (for the calendar heatmap)."""
        rows = await self._db.fetchall(
            "SELECT reviewed_at FROM reviews WHERE member_id = ? AND reviewed_at >= ? "
            "ORDER BY reviewed_at",
            (member_id, to_db(since)),
        )
        return [from_db(str(r[0])) for r in rows]

    async def find_workspace(self, typed: str) -> int | None:
        """A workspace by row id or platform id (a Discord guild, a Slack team, ``console``)."""
        value = await self._db.fetchval(
            "SELECT id FROM workspaces WHERE external_id = ? OR CAST(id AS TEXT) = ? "
            "ORDER BY external_id = ? DESC LIMIT 1",
            (typed, typed, typed),
        )
        return None if value is None else int(value)

    async def workspaces(self) -> list[int]:
        rows = await self._db.fetchall("SELECT DISTINCT workspace_id FROM reviews ORDER BY 1")
        return [int(r[0]) for r in rows]

    async def histories(
        self, workspace_id: int
    ) -> dict[tuple[int, int], list[tuple[int, Grade, datetime]]]:
        """Every card's reviews in the workspace, in log order: ``(review id, grade, at)``."""
        rows = await self._db.fetchall(
            "SELECT member_id, question_id, id, rating, reviewed_at FROM reviews "
            "WHERE workspace_id = ? ORDER BY member_id, question_id, id",
            (workspace_id,),
        )
        return _group(rows)

    async def _histories_in(
        self, conn: Tx, workspace_id: int
    ) -> dict[tuple[int, int], list[tuple[int, Grade, datetime]]]:
        return _group(
            list(
                await conn.fetchall(
                    "SELECT member_id, question_id, id, rating, reviewed_at FROM reviews "
                    "WHERE workspace_id = ? ORDER BY member_id, question_id, id",
                    (workspace_id,),
                )
            )
        )

    # --- checking ----------------------------------------------------------------------------

    async def replay_problems(self) -> list[str]:
        """``db check``: replay every card's log and compare it with the stored state."""
        problems: list[str] = []
        with_cards = await self._db.fetchall("SELECT DISTINCT workspace_id FROM cards")
        for workspace_id in sorted(set(await self.workspaces()) | {int(r[0]) for r in with_cards}):
            settings = await self.settings(workspace_id)
            histories = await self.histories(workspace_id)
            stored = {
                (int(r[0]), int(r[1])): (_card(tuple(r), 2), int(r[9]))
                for r in await self._db.fetchall(
                    f"SELECT member_id, question_id, {_CARD_COLUMNS}, last_review_id FROM cards "
                    "WHERE workspace_id = ?",
                    (workspace_id,),
                )
            }
            for key, history in histories.items():
                expected = replay([(g, at) for _, g, at in history], settings)
                assert expected is not None
                found = stored.pop(key, None)
                where = f"card member {key[0]} question {key[1]}"
                if found is None:
                    problems.append(f"reviews: {where} has {len(history)} review(s) but no state")
                elif not found[0].same_as(expected):
                    problems.append(
                        f"reviews: {where}: stored state {_brief(found[0])} but the log "
                        f"replays to {_brief(expected)}"
                    )
                elif found[1] != history[-1][0]:
                    problems.append(
                        f"reviews: {where}: last review is #{history[-1][0]}, state says "
                        f"#{found[1]}"
                    )
            for key in stored:
                problems.append(
                    f"reviews: card member {key[0]} question {key[1]} has a state but no reviews"
                )
        return problems


_UPSERT_CARD = (
    "INSERT INTO cards (member_id, question_id, workspace_id, state, step, stability, "
    "difficulty, due, last_review, reviews, last_review_id) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (member_id, question_id) DO UPDATE SET "
    "workspace_id = excluded.workspace_id, state = excluded.state, step = excluded.step, "
    "stability = excluded.stability, difficulty = excluded.difficulty, due = excluded.due, "
    "last_review = excluded.last_review, reviews = excluded.reviews, "
    "last_review_id = excluded.last_review_id"
)


def _card_row(
    workspace_id: int, member_id: int, question_id: int, card: CardState, review_id: int
) -> tuple[object, ...]:
    return (
        member_id,
        question_id,
        workspace_id,
        card.state,
        card.step,
        card.stability,
        card.difficulty,
        to_db(card.due),
        to_db(card.last_review),
        card.reviews,
        review_id,
    )


def _group(
    rows: Sequence[Row],
) -> dict[tuple[int, int], list[tuple[int, Grade, datetime]]]:
    grouped: dict[tuple[int, int], list[tuple[int, Grade, datetime]]] = {}
    for row in rows:
        key = (int(str(row[0])), int(str(row[1])))
        grouped.setdefault(key, []).append(
            (int(str(row[2])), Grade(int(str(row[3]))), from_db(str(row[4])))
        )
    return grouped


def _brief(card: CardState) -> str:
    return (
        f"(state {card.state}, step {card.step}, stability {card.stability}, "
        f"difficulty {card.difficulty}, due {to_db(card.due)}, reviews {card.reviews})"
    )
