"""What the group knows, by tag and week, read set-based on either engine (admins' mastery).

Every figure is a ``GROUP BY`` over the workspace's answers or cards, so 100,000 answers
come back as (tags by weeks) rows and Python only lays them out. Three choices keep that true
on both engines without an ``if engine``:

* Tags live in one text column (``',tag1,tag2,'``). Members per tag must be *distinct*
  members, which a per-tags-string count added up in Python would overcount (one member
  answering a ``,a,`` and an ``,a,b,`` question is one member of ``a``). So the few distinct
  tags strings are split in Python and handed back as a small ``VALUES`` table of
  (tags string, tag) pairs, joined on equality: SQL then groups by the tag itself.
* Weeks are bins of UTC text: a ``CASE`` over the week starts (text compares in time order,
  see ``timefmt``), so no date function that only one engine has is needed.
* Predicted recall is FSRS's power forgetting curve, ``(1 + F·t/S)^D`` with ``t`` whole days
  since the card's last review, summed in SQL (``power``/``floor``: PostgreSQL has them and
  SQLite's math functions, on since 3.35's default build). Computing it per card in Python
  would read every card of a thousand members; the sums are one row per tag.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from fsrs.scheduler import DEFAULT_PARAMETERS

from bot.core.srs import SrsSettings
from bot.storage.database import Database
from bot.storage.reviews import _DUE, _OFF_PACKS
from bot.storage.timefmt import to_db

__all__ = ["MAX_WEEKS", "GroupMasteryStore", "TagRecall", "TagTotals", "TagWeek", "week_start"]

#: The most weeks :meth:`GroupMasteryStore.weekly` bins when no end is given (half a year).
MAX_WEEKS = 26
_WEEK = timedelta(weeks=1)


def week_start(moment: datetime) -> datetime:
    """Monday 00:00 UTC of ``moment``'s week: the group's weeks are UTC weeks, the same for
    every member whatever their zone."""
    day = moment.astimezone(UTC).date()
    monday = day - timedelta(days=day.weekday())
    return datetime(monday.year, monday.month, monday.day, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class TagWeek:
    """One tag in one week: scored answers, right ones, and the distinct members who gave
    them (``tag`` ``""`` for untagged questions)."""

    tag: str
    week: date  # the week's Monday (UTC)
    answers: int
    right: int
    members: int


@dataclass(frozen=True, slots=True)
class TagTotals:
    """One tag over a whole period (members counted once however many weeks they answered)."""

    tag: str
    answers: int
    right: int
    members: int


@dataclass(frozen=True, slots=True)
class TagRecall:
    """The group's cards carrying one tag: how many, whose, and their summed predicted recall."""

    tag: str
    cards: int
    members: int
    recall_sum: float

    @property
    def mean(self) -> float:
        return self.recall_sum / self.cards if self.cards else 0.0


# A workspace's scored answers in [?, ?), each once per tag of its question (``pt``). The
# unary ``+`` keeps SQLite from driving the join from the posts through the answers' post
# index (a lookup per answer into the big table); it scans the answers by time instead.
_SCORED = (
    "FROM pt JOIN answers a ON a.post_id = pt.post_id "
    "WHERE a.correct IS NOT NULL AND a.answered_at >= ? AND a.answered_at < ? "
)


class GroupMasteryStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def _tag_table(self) -> tuple[str, list[object]] | None:
        """``(VALUES (tags, tag), ...) tm``: each distinct tags string with each of its tags
        (``""`` for none), as a table SQL can join on ``q.tags`` and group by ``tm.column2``.
        None when there is no question at all. A few hundred strings at most: one per
        distinct combination of tags in the packs."""
        strings = [
            str(r[0]) for r in await self._db.fetchall("SELECT DISTINCT tags FROM questions")
        ]
        pairs = [
            (tags, tag) for tags in strings for tag in ([t for t in tags.split(",") if t] or [""])
        ]
        if not pairs:
            return None
        rows = ", ".join("(?, ?)" for _ in pairs)
        return f"(VALUES {rows}) tm", [v for pair in pairs for v in pair]

    async def _tagged_posts(
        self, workspace_id: int, only: Sequence[str] | None = None
    ) -> tuple[str, list[object]] | None:
        """``WITH pt AS MATERIALIZED (post_id, tag)``: the workspace's posts, once per tag of
        their question. Materialized, it is a small table (posts by tags, not answers) that
        each answer is looked up in once: joining the answers to posts, channels, versions
        and questions row by row costs SQLite four lookups per answer instead."""
        table = await self._tag_table()
        if table is None:
            return None
        tags, params = table
        return (
            "WITH pt AS MATERIALIZED (SELECT p.id AS post_id, tm.column2 AS tag FROM posts p "
            "JOIN channels c ON c.id = p.channel_id "
            "JOIN question_versions v ON v.id = p.question_version_id "
            f"JOIN questions q ON q.id = v.question_id JOIN {tags} ON tm.column1 = q.tags "
            "WHERE c.workspace_id = ?"
            + ("" if only is None else f" AND tm.column2 {self._db.sql.in_list()}")
            + ") ",
            [*params, workspace_id]
            + ([] if only is None else [self._db.sql.list_value(list(only))]),
        )

    async def weekly(
        self, workspace_id: int, since: datetime, until: datetime | None = None
    ) -> list[TagWeek]:
        """Scored answers per tag and UTC week, from the week holding ``since`` to ``until``
        (exclusive; None: :data:`MAX_WEEKS` weeks). A question with several tags counts under
        each; members are distinct per (tag, week)."""
        first = week_start(since)
        end = until if until is not None else first + MAX_WEEKS * _WEEK
        starts: list[datetime] = []
        while first + len(starts) * _WEEK < end:
            starts.append(first + len(starts) * _WEEK)
        posts = await self._tagged_posts(workspace_id)
        if not starts or posts is None:
            return []
        with_pt, params = posts
        # Latest week first: most answers are recent, and CASE stops at the first match.
        bins = " ".join(f"WHEN a.answered_at >= ? THEN {i}" for i in reversed(range(len(starts))))
        rows = await self._db.fetchall(
            f"{with_pt}SELECT pt.tag, CASE {bins} END AS wk, COUNT(*), SUM(a.correct), "
            f"COUNT(DISTINCT a.member_id) {_SCORED} GROUP BY 1, 2",
            [*params, *(to_db(s) for s in reversed(starts)), to_db(starts[0]), to_db(end)],
        )
        return sorted(
            (
                TagWeek(
                    str(r[0]),
                    starts[int(r[1])].date(),
                    int(r[2]),
                    int(r[3] or 0),
                    int(r[4]),
                )
                for r in rows
            ),
            key=lambda w: (w.tag, w.week),
        )

    async def totals(
        self,
        workspace_id: int,
        since: datetime,
        until: datetime,
        *,
        weekly: Sequence[TagWeek] | None = None,
        enough: int = 0,
    ) -> list[TagTotals]:
        """Scored answers per tag over ``[since, until)``, members counted once per tag (what
        "the tags the group is weakest in" ranks; a week's member counts cannot be added up).

        Given the period's ``weekly`` rows, answers and right ones are their sums, and a tag
        with ``enough`` members in one week has at least that many in the period: ``members``
        is then that lower bound. Only a tag no week gives ``enough`` but whose weeks add up
        to it is counted again, exactly: one more scan for small groups only.
        """
        if weekly is None:
            return await self._totals(workspace_id, since, until, None)
        sums: dict[str, list[int]] = {}
        for w in weekly:
            row = sums.setdefault(w.tag, [0, 0, 0, 0])  # answers, right, max members, sum
            row[0] += w.answers
            row[1] += w.right
            row[2] = max(row[2], w.members)
            row[3] += w.members
        unsure = [t for t, r in sums.items() if r[2] < enough <= r[3]]
        exact = {t.tag: t for t in await self._totals(workspace_id, since, until, unsure)}
        return [
            exact.get(tag) or TagTotals(tag, r[0], r[1], r[2] if r[2] >= enough else r[3])
            for tag, r in sorted(sums.items())
        ]

    async def _totals(
        self, workspace_id: int, since: datetime, until: datetime, tags: Sequence[str] | None
    ) -> list[TagTotals]:
        if tags is not None and not tags:
            return []
        posts = await self._tagged_posts(workspace_id, tags)
        if posts is None:
            return []
        with_pt, params = posts
        rows = await self._db.fetchall(
            f"{with_pt}SELECT pt.tag, COUNT(*), SUM(a.correct), COUNT(DISTINCT a.member_id) "
            f"{_SCORED} GROUP BY 1",
            [*params, to_db(since), to_db(until)],
        )
        return sorted(
            (TagTotals(str(r[0]), int(r[1]), int(r[2] or 0), int(r[3])) for r in rows),
            key=lambda t: t.tag,
        )

    async def cards(
        self, workspace_id: int, now: datetime, settings: SrsSettings, *, enough: int = 0
    ) -> list[TagRecall]:
        """The group's cards per tag with their summed predicted recall at ``now``.

        The same cards a member's ``/review`` counts (question and pack live, the pack on in
        some channel), and the same curve as :func:`bot.core.srs.retrievability`: whole days
        since the last review, never negative; a card without stability recalls 0.

        Summed per question in SQL (a card is one member's, so a question's cards count its
        members), added up per tag here. ``members`` is exact below ``enough``; from
        ``enough`` on it may be a lower bound (the tag's busiest question): counting distinct
        members per tag would expand every card by its tags, the slow part.
        """
        live = await self._db.fetchall(
            "SELECT q.id, q.tags FROM questions q JOIN packs k ON k.id = q.pack_id "
            "WHERE q.retired_at IS NULL AND k.retired_at IS NULL "
            f"AND q.current_version_id IS NOT NULL AND k.id NOT IN ({_OFF_PACKS})",
            {"ws": workspace_id},
        )
        tags_of = {int(r[0]): [t for t in str(r[1]).split(",") if t] or [""] for r in live}
        decay, factor = _curve(settings)
        days = (
            f"floor(({self._db.sql.seconds_between('CAST(? AS TEXT)', 'last_review')}) / 86400.0)"
        )
        # ``CAST(? AS DOUBLE PRECISION)``: PostgreSQL needs the parameters' type; SQLite reads
        # it as REAL.
        recall = (
            "CASE WHEN stability IS NULL OR stability <= 0 THEN 0.0 "
            f"ELSE power(1.0 + CAST(? AS DOUBLE PRECISION) * (CASE WHEN {days} > 0 THEN {days} "
            "ELSE 0 END) / stability, CAST(? AS DOUBLE PRECISION)) END"
        )
        stamp = to_db(now)
        rows = await self._db.fetchall(
            f"SELECT question_id, COUNT(*), SUM({recall}) FROM cards WHERE workspace_id = ? "
            "GROUP BY question_id",
            [factor, stamp, stamp, decay, workspace_id],
        )
        sums: dict[str, list[float]] = {}  # cards, recall, busiest question, cards again
        questions: dict[str, list[int]] = {}
        for question_id, count, total in rows:
            for tag in tags_of.get(int(question_id), ()):
                row = sums.setdefault(tag, [0, 0.0, 0])
                row[0] += int(count)
                row[1] += float(total or 0.0)
                row[2] = max(row[2], int(count))
                questions.setdefault(tag, []).append(int(question_id))
        result = []
        for tag, (count, total, busiest) in sorted(sums.items()):
            members = int(busiest)
            if members < enough:  # few cards: count their members exactly
                members = await self._card_members(workspace_id, questions[tag])
            result.append(TagRecall(tag, int(count), members, total))
        return result

    async def _card_members(self, workspace_id: int, question_ids: Sequence[int]) -> int:
        value = await self._db.fetchval(
            "SELECT COUNT(DISTINCT member_id) FROM cards WHERE workspace_id = ? "
            f"AND question_id {self._db.sql.in_list()}",
            (workspace_id, self._db.sql.list_value(question_ids)),
        )
        return int(value or 0)

    async def due_counts(self, workspace_id: int, now: datetime) -> tuple[int, int]:
        """How many members have a card due at ``now``, and how many one overdue by more than
        a day (the cards ``/review`` would serve them: holds and switched-off packs count).

        Each member's soonest due card says both, so the cards are folded per member first
        (in the cards' key order: no sort) and the members counted after."""
        row = await self._db.fetchone(
            "SELECT COUNT(CASE WHEN soonest <= :now THEN 1 END), "
            "COUNT(CASE WHEN soonest < :late THEN 1 END) "
            f"FROM (SELECT c.member_id, MIN({_DUE}) AS soonest FROM cards c "
            "LEFT JOIN card_holds h ON h.member_id = c.member_id AND h.question_id = c.question_id "
            "WHERE c.workspace_id = :ws AND c.question_id IN (SELECT q.id FROM questions q "
            "JOIN packs k ON k.id = q.pack_id WHERE q.retired_at IS NULL AND k.retired_at IS NULL "
            f"AND q.current_version_id IS NOT NULL AND k.id NOT IN ({_OFF_PACKS})) "
            "GROUP BY c.member_id) m",
            {"ws": workspace_id, "now": to_db(now), "late": to_db(now - timedelta(days=1))},
        )
        return (0, 0) if row is None else (int(row[0] or 0), int(row[1] or 0))


def _curve(settings: SrsSettings) -> tuple[float, float]:
    """FSRS-6's forgetting curve constants for ``settings``: ``R = (1 + F·t/S)^D``, with
    ``D = -w20`` and ``F = 0.9^(1/D) - 1`` (so that R is 90 % when t equals S)."""
    parameters: Sequence[float] = settings.parameters or DEFAULT_PARAMETERS
    decay = -float(parameters[20])
    return decay, 0.9 ** (1 / decay) - 1
