"""Item analysis for admins: each question's statistics, the flags that find broken ones, and
the CSV exports a teacher imports into a gradebook.

The figures come from set-based sums (:mod:`bot.storage.item_stats`) and the pure maths of
:mod:`bot.core.item_analysis`; this service adds who may see them, the scope asked for, the
items behind each version (cached: a version never changes) and the flags held for admins.
Flags are refreshed whenever admins look (``/reports``, the Questions page): a flag seen is a
flag that can be resolved.

A big group's recount takes about a second (100,000 answers), so the web page never waits for
one: once a workspace's count has proved slow, a page shows the figures last counted, says
when they were counted, and the recount runs in the background (once, however many pages
ask). Chat commands and the exports always wait for figures that are current.
"""

from __future__ import annotations

import asyncio
import csv
import io
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.item_analysis import ChoiceCount, ItemStats, QuestionRow, analyse
from bot.core.models import ChatContext
from bot.log import get_logger
from bot.questions.schema import Item
from bot.services.audit import AuditLog, audited
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.storage.directory import Directory, WorkspaceRow
from bot.storage.gradebook import GradebookRow, GradebookStore
from bot.storage.item_flags import HeldFlag, ItemFlagStore
from bot.storage.item_stats import ItemScope, ItemStatsStore
from bot.text import spreadsheet_cell

__all__ = [
    "GRADEBOOK_HEADER",
    "QUESTIONS_HEADER",
    "ItemAnalysis",
    "Period",
]

#: Computed statistics kept (per process): a workspace's views of a few periods.
_KEPT = 16

#: A count that took this long (seconds) is recounted in the background when a page allows.
SLOW_COUNT = 0.25

log = get_logger(__name__)

#: The longest period a statistics view covers by days (about ten years: "all" is None).
MAX_DAYS = 3660

#: Canvas's gradebook import reads its first five columns as who the row is (Student, ID,
#: SIS User ID, SIS Login ID, Section) and every further column as an assignment; Moodle's
#: CSV import maps any one identifying column and takes the numeric columns as grade items.
#: The member's platform id goes in "SIS User ID" (fill in your roster's ids to match).
GRADEBOOK_HEADER = (
    "Student", "ID", "SIS User ID", "SIS Login ID", "Section",
    "Studybot points", "Studybot accuracy (%)", "Questions answered", "Exercises solved",
    "Streak (days)", "Review retention (%)",
)  # fmt: skip

QUESTIONS_HEADER = (
    "pack", "item", "kind", "difficulty", "tags", "answers", "members", "facility (%)",
    "discrimination", "upper 27% right (%)", "lower 27% right (%)", "median seconds",
    "hint use (%)", "close misses (%)", "exercise attempts", "exercise solve rate (%)",
    "most failed checks", "open reports", "flags",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Period:
    """What a view counts: the last ``days`` days (None: all time), one channel or all."""

    days: int | None = None
    channel_id: int | None = None

    def scope(self, workspace_id: int, now: datetime) -> ItemScope:
        since = None if self.days is None else now - timedelta(days=self.days)
        return ItemScope(workspace_id, self.channel_id, since, None)

    @staticmethod
    def parse_days(typed: str | int | None) -> int | None:
        """``30``, ``30d`` or ``all`` (None); anything else is refused in one line."""
        if typed is None or (isinstance(typed, str) and typed.strip().lower() in ("", "all")):
            return None
        text = str(typed).strip().lower().removesuffix("d")
        if not text.isdigit() or not 1 <= int(text) <= MAX_DAYS:
            raise BadInput(
                f"A period is a number of days from 1 to {MAX_DAYS} or `all`, not `{typed}`."
            )
        return int(text)


@dataclass(frozen=True, slots=True)
class Counted:
    """Figures as kept: when they were counted, how long that took, and what they were made
    of (the store's fingerprint at the time)."""

    mark: tuple[object, ...]
    stats: list[ItemStats]
    at: datetime
    took: float


class ItemAnalysis:
    audit: AuditLog | None = None  # set by build_services: ending a flag is recorded there

    def __init__(
        self,
        *,
        places: Places,
        catalogue: Catalogue,
        stats: ItemStatsStore,
        flags: ItemFlagStore,
        gradebook: GradebookStore,
        clock: Clock,
        directory: Directory,
    ) -> None:
        self._directory = directory
        # Figures computed, by what they cover, with the fingerprint they were computed at.
        self._computed: dict[tuple[object, ...], Counted] = {}
        self._recounts: dict[tuple[object, ...], asyncio.Task[None]] = {}
        self._places = places
        self._catalogue = catalogue
        self._stats = stats
        self._flags = flags
        self._gradebook = gradebook
        self._clock = clock

    # --- statistics -------------------------------------------------------------------------

    async def _admin_workspace(self, ctx: ChatContext) -> WorkspaceRow:
        if not ctx.is_admin:
            raise Forbidden("Only admins can see the questions' statistics.")
        return await self._places.workspace(ctx)

    async def statistics(
        self, ctx: ChatContext, period: Period = Period(), *, waiting: bool = True
    ) -> list[ItemStats]:
        """Admins: every live question's statistics and flags, in pack and id order. The
        whole workspace's all-time figures are what flags are raised from: looking at them
        raises any new flag, so the page and ``/reports`` agree. ``waiting=False`` (the web
        page) takes the figures last counted when a recount would be slow; see
        :meth:`counted`."""
        workspace = await self._admin_workspace(ctx)
        return await self.workspace_statistics(workspace.id, period, waiting=waiting)

    def counted(self, workspace_id: int, period: Period = Period()) -> tuple[datetime, bool]:
        """When the figures a page just showed were counted, and whether a recount of newer
        answers is under way (the page says so)."""
        key = self._key(workspace_id, period)
        kept = self._computed.get(key)
        at = self._clock.now() if kept is None else kept.at
        return at, key in self._recounts

    def _key(self, workspace_id: int, period: Period) -> tuple[object, ...]:
        # A period by days moves with the clock: its figures are kept within their minute.
        minute = self._clock.now().replace(second=0, microsecond=0)
        return (workspace_id, period, minute if period.days is not None else None)

    async def workspace_statistics(
        self, workspace_id: int, period: Period = Period(), *, waiting: bool = True
    ) -> list[ItemStats]:
        """The statistics of ``workspace_id`` (the CLI's door: no chat member behind it).

        The figures of a whole workspace are kept while nothing they are made of changed (the
        store's :meth:`~bot.storage.item_stats.ItemStatsStore.fingerprint`: no new answer,
        hint, attempt, report, flag or question version), so sorting the table or coming back
        to it costs one small read; a period's are kept within its minute. When something
        changed and the last count took :data:`SLOW_COUNT` or more, a caller not ``waiting``
        gets the kept figures and one background recount is started."""
        key = self._key(workspace_id, period)
        mark = await self._stats.fingerprint(workspace_id)
        kept = self._computed.get(key)
        if kept is not None and kept.mark == mark:
            return kept.stats
        if kept is not None and not waiting and kept.took >= SLOW_COUNT:
            if key not in self._recounts:
                task = asyncio.create_task(self._recount(key, workspace_id, period, mark))
                self._recounts[key] = task
            return kept.stats
        return (await self._count(key, workspace_id, period, mark)).stats

    async def _count(
        self, key: tuple[object, ...], workspace_id: int, period: Period, mark: tuple[object, ...]
    ) -> Counted:
        began = time.perf_counter()
        found = await self._compute(workspace_id, period)
        kept = Counted(mark, found, self._clock.now(), time.perf_counter() - began)
        self._computed.pop(key, None)
        self._computed[key] = kept
        while len(self._computed) > _KEPT:
            self._computed.pop(next(iter(self._computed)))
        if period == Period():  # new all-time figures: new flags?
            await self._raise(workspace_id, found)
        return kept

    async def _recount(
        self, key: tuple[object, ...], workspace_id: int, period: Period, mark: tuple[object, ...]
    ) -> None:
        try:
            await self._count(key, workspace_id, period, mark)
        except Exception:  # a page already has figures: log, and the next view tries again
            log.exception("item analysis: recounting workspace %d failed", workspace_id)
        finally:
            self._recounts.pop(key, None)

    async def _compute(self, workspace_id: int, period: Period) -> list[ItemStats]:
        scope = period.scope(workspace_id, self._clock.now())
        questions = await self._stats.questions(workspace_id)
        bounds = await self._stats.bounds(scope)
        totals = await self._stats.totals(scope, bounds)
        reports = await self._stats.open_reports(workspace_id)
        exercises = await self._stats.exercises(scope)
        counts: defaultdict[int, list[ChoiceCount]] = defaultdict(list)
        for row in await self._stats.choices(scope, bounds):
            counts[row.question_id].append(row)
        ended = await self._flags.ended(workspace_id)
        found: list[ItemStats] = []
        for question in questions:
            versions = {row.version_id for row in counts.get(question.question_id, ())}
            if question.version_id is not None:
                versions.add(question.version_id)
            items = await self._items(versions)
            stats = analyse(
                question,
                totals.get(question.question_id),
                counts.get(question.question_id, ()),
                items,
                exercises.get(question.question_id),
                reports.get(question.question_id, 0),
            )
            # A flag an admin ended for this version is not shown again (the figures keep it).
            kept = tuple(f for f in stats.flags if (question.version_id, f.rule.value) not in ended)
            found.append(replace(stats, flags=kept) if kept != stats.flags else stats)
        return found

    async def _items(self, versions: set[int]) -> dict[int, Item]:
        # The catalogue caches each version forever: this reads each one once per process.
        return {v: (await self._catalogue.question(v)).item for v in versions}

    async def question(
        self, ctx: ChatContext, item_id: str, period: Period = Period(), *, waiting: bool = True
    ) -> tuple[ItemStats, Item | None]:
        """Admins: one question's statistics, and its current item (for the detail view): read
        from the workspace's kept figures, as the list shows them."""
        workspace = await self._admin_workspace(ctx)
        stats = next(
            (
                s
                for s in await self.workspace_statistics(workspace.id, period, waiting=waiting)
                if s.question.item_id == item_id
            ),
            None,
        )
        if stats is None:
            raise NotFound(f"There is no live question `{item_id}`.")
        version = stats.question.version_id
        item = None if version is None else (await self._catalogue.question(version)).item
        return stats, item

    # --- flags --------------------------------------------------------------------------------

    async def open_flags(self, ctx: ChatContext) -> list[HeldFlag]:
        """Admins: the flags held on questions, refreshed from all-time figures first."""
        workspace = await self._admin_workspace(ctx)
        return await self.refresh_flags(workspace.id)

    async def held_flags(self, ctx: ChatContext) -> list[HeldFlag]:
        """Admins: the flags held now, as last raised (no new figures computed)."""
        workspace = await self._admin_workspace(ctx)
        return await self._flags.open_flags(workspace.id)

    async def refresh_flags(self, workspace_id: int) -> list[HeldFlag]:
        await self.workspace_statistics(workspace_id)  # a fresh count raises its flags
        return await self._flags.open_flags(workspace_id)

    async def _raise(self, workspace_id: int, stats: Sequence[ItemStats]) -> None:
        found = [
            (s.question.question_id, s.question.version_id, flag.rule.value, flag.evidence)
            for s in stats
            if s.question.version_id is not None
            for flag in s.flags
        ]
        await self._flags.raise_flags(
            workspace_id, [(q, v, r, e) for q, v, r, e in found if v is not None], self._clock.now()
        )

    @audited("flags end")
    async def end_flags(self, ctx: ChatContext, item_id: str, outcome: str) -> int:
        """Admins: resolve (fixed) or dismiss (the figures mislead) a question's flags."""
        workspace = await self._admin_workspace(ctx)
        return await self._flags.end(
            workspace.id, item_id, outcome, ctx.member_name, self._clock.now()
        )

    # --- exports ------------------------------------------------------------------------------

    async def export(self, what: str, workspace: str | None, period: Period = Period()) -> str:
        """``studybot stats export``: the gradebook or the questions' CSV of one workspace
        (by platform id, name or row id; the only one when there is just one)."""
        found = await self._stats.find_workspaces(workspace)
        if not found:
            raise NotFound(
                f"There is no workspace `{workspace}`."
                if workspace
                else "There are no workspaces yet."
            )
        if len(found) > 1:
            raise BadInput("This database has several workspaces: name one with --workspace.")
        row = await self._directory.workspace_by_id(found[0])
        if what == "gradebook":
            return gradebook_csv(await self.gradebook(row, period), row.name or row.external_id)
        if what == "questions":
            return questions_csv(await self.workspace_statistics(row.id, period))
        raise BadInput(f"Export `gradebook` or `questions`, not `{what}`.")

    async def gradebook(
        self, workspace: WorkspaceRow, period: Period = Period()
    ) -> list[GradebookRow]:
        if not workspace.settings.analytics:
            raise Forbidden(
                "The per-member export is off in this workspace (`settings analytics on` "
                "turns it back on)."
            )
        return await self._gradebook.rows(
            period.scope(workspace.id, self._clock.now()), self._clock.now()
        )

    async def gradebook_csv(self, ctx: ChatContext, period: Period = Period()) -> str:
        """Admins: the gradebook CSV of the caller's workspace."""
        workspace = await self._admin_workspace(ctx)
        return gradebook_csv(await self.gradebook(workspace, period), workspace.name or "")

    async def questions_csv(self, ctx: ChatContext, period: Period = Period()) -> str:
        """Admins: the per-question statistics CSV of the caller's workspace."""
        return questions_csv(await self.statistics(ctx, period))


def _percent(share: float | None) -> object:
    return "" if share is None else round(100 * share, 1)


def gradebook_csv(rows: Sequence[GradebookRow], section: str) -> str:
    """The rows as a gradebook import: numbers with a dot and no unit, names never formulas."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(GRADEBOOK_HEADER)
    for row in rows:
        cells: tuple[object, ...] = (
            row.name, "", row.member_id, "", section, row.points, _percent(row.accuracy),
            row.answered, row.exercises_solved, row.streak, _percent(row.retention),
        )  # fmt: skip
        writer.writerow(tuple(spreadsheet_cell(c) for c in cells))
    return out.getvalue()


def questions_csv(stats: Sequence[ItemStats]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(QUESTIONS_HEADER)
    for s in stats:
        q: QuestionRow = s.question
        exercise = s.exercise
        cells: tuple[object, ...] = (
            q.pack, q.item_id, q.kind, q.difficulty, " ".join(q.tags), s.answers,
            s.members, _percent(s.facility),
            "" if s.discrimination is None else round(s.discrimination, 3),
            "" if s.withheld else _percent(s.upper_facility),
            "" if s.withheld else _percent(s.lower_facility),
            "" if s.median_seconds is None else round(s.median_seconds, 1),
            _percent(s.hint_share), _percent(s.close_share),
            "" if exercise is None else exercise.attempts,
            "" if exercise is None else _percent(exercise.solve_rate),
            "" if exercise is None else "; ".join(f"{k} ({n})" for k, n in exercise.most_failed()),
            s.reports, " ".join(f.rule.value for f in s.flags),
        )  # fmt: skip
        writer.writerow(tuple(spreadsheet_cell(c) for c in cells))
    return out.getvalue()
