"""Group mastery for admins: what the group gets right, by tag and week, and what it recalls.

The issue asks for figures of the group, never of a member: a member sees their own figures
in /stats, and a group figure only when at least :data:`MIN_MEMBERS` members are behind it.
So every breakdown here (a tag in a week, a tag's recall, the weakest tags) is withheld
below that count, and the picture, its alt text and the message all say what was withheld
rather than leaving a silent gap. The picture is built like /stats' (:mod:`bot.services.
standings`): data read set-based by the store, drawn in a worker thread.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import timedelta

from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden
from bot.core.messages import Attachment, Message, Section
from bot.core.models import ChatContext
from bot.core.privacy import MIN_GROUP
from bot.services.groupchart import (
    MAX_TAGS,
    GroupCell,
    GroupChart,
    RecallBar,
    draw_group_chart,
    tag_label,
    week_label,
)
from bot.services.places import Places
from bot.storage.group_mastery import (
    MAX_WEEKS,
    GroupMasteryStore,
    TagTotals,
    week_start,
)
from bot.storage.reviews import ReviewStore

__all__ = ["MIN_MEMBERS", "GroupMastery", "GroupPicture"]

#: A group figure is shown only when at least this many distinct members stand behind it.
MIN_MEMBERS = MIN_GROUP
WEAKEST = 3  # tags named in the message
ALT_CHARS = 1000  # Discord takes 1,024 characters of alt text
FORBIDDEN = "Only admins can see the group's mastery; /stats shows your own."


#: Seconds a picture is reused for the same workspace and span (real seconds: it is a cache).
REUSE = 15.0


@dataclass(frozen=True, slots=True)
class GroupPicture:
    """The picture, its alt text, and the chat message that carries both; ``chart`` is the
    data drawn (small groups' figures already withheld), for a page that shows it as a table."""

    png: bytes
    alt: str
    message: Message
    chart: GroupChart


def _share(right: int, answers: int) -> str:
    return f"{round(100 * right / answers)}%" if answers else "\N{EN DASH}"


def _weakest(totals: list[TagTotals]) -> list[TagTotals]:
    """Lowest share right over the period, among tags enough members answered; ties: the
    tag with more answers first (the surer figure)."""
    counted = [t for t in totals if t.members >= MIN_MEMBERS and t.answers]
    return sorted(counted, key=lambda t: (t.right / t.answers, -t.answers, t.tag))[:WEAKEST]


class GroupMastery:
    """The admins' group mastery picture, per workspace."""

    def __init__(
        self, places: Places, store: GroupMasteryStore, reviews: ReviewStore, clock: Clock
    ) -> None:
        self._places = places
        self._store = store
        self._reviews = reviews  # the workspace's FSRS settings (desired retention, curve)
        self._clock = clock
        # The last picture of each workspace and span, for REUSE: the web page shows its
        # words and then asks for its PNG, a moment apart; drawing it twice would double the
        # page's cost for the same figures.
        self._recent: dict[tuple[int, int], tuple[float, GroupPicture]] = {}

    async def picture(self, ctx: ChatContext, weeks: int = 8) -> GroupPicture:
        """The caller's workspace's picture; admins only (it is about everyone)."""
        if not ctx.is_admin:
            raise Forbidden(FORBIDDEN)
        workspace = await self._places.workspace(ctx)
        return await self.workspace_picture(workspace.id, weeks)

    async def workspace_picture(self, workspace_id: int, weeks: int = 8) -> GroupPicture:
        """The picture of ``workspace_id``'s last ``weeks`` UTC weeks, this one included (the
        caller has checked who may see it: the web page's admin, the benchmark)."""
        if isinstance(weeks, bool) or not isinstance(weeks, int) or not 1 <= weeks <= MAX_WEEKS:
            raise BadInput(f"weeks must be a whole number from 1 to {MAX_WEEKS}.")
        key = (workspace_id, weeks)
        recent = self._recent.get(key)
        if recent is not None and time.monotonic() - recent[0] < REUSE:
            return recent[1]
        chart, weakest, withheld_tags = await self._chart(workspace_id, weeks)
        png = await asyncio.to_thread(draw_group_chart, chart)
        alt = _alt(chart, weeks, weakest, withheld_tags)
        message = Message(
            title="Group mastery",
            sections=(Section(body=_body(chart, weeks, weakest, withheld_tags)),),
            attachments=(Attachment("group-mastery.png", png, alt, is_image=True),),
            ephemeral=True,
        )
        picture = GroupPicture(png, alt, message, chart)
        self._recent = {k: v for k, v in self._recent.items() if time.monotonic() - v[0] < REUSE}
        self._recent[key] = (time.monotonic(), picture)
        return picture

    async def _chart(
        self, workspace_id: int, weeks: int
    ) -> tuple[GroupChart, list[TagTotals], list[str]]:
        """The chart's data with small groups' figures already removed, the weakest tags, and
        the tags whose whole breakdown is withheld."""
        now = self._clock.now()
        workspace = await self._places.workspace_by_id(workspace_id)
        first = week_start(now) - timedelta(weeks=weeks - 1)
        starts = [(first + timedelta(weeks=i)).date() for i in range(weeks)]
        end = first + timedelta(weeks=weeks)  # this week's end: an answer made this instant counts
        settings = await self._reviews.settings(workspace_id)
        # Three independent reads: PostgreSQL's pool runs them side by side (SQLite's one
        # reader takes them in turn, no slower than awaiting each).
        weekly, recall, (due, overdue) = await asyncio.gather(
            self._store.weekly(workspace_id, first, end),
            self._store.cards(workspace_id, now, settings, enough=MIN_MEMBERS),
            self._store.due_counts(workspace_id, now),
        )
        totals = await self._store.totals(
            workspace_id, first, end, weekly=weekly, enough=MIN_MEMBERS
        )

        rows = [t.tag for t in sorted(totals, key=lambda t: (-t.answers, t.tag))][:MAX_TAGS]
        cells = {
            (w.tag, w.week): GroupCell(
                w.answers, w.right / w.answers if w.members >= MIN_MEMBERS else None
            )
            for w in weekly
            if w.tag in rows
        }
        # Bars: the heat map's tags first (so the two panels read together), then the tags
        # with the most cards.
        order = {tag: i for i, tag in enumerate(rows)}
        ranked = sorted(recall, key=lambda r: (order.get(r.tag, len(order)), -r.cards, r.tag))
        bars = [
            RecallBar(r.tag, r.cards, r.mean if r.members >= MIN_MEMBERS else None)
            for r in ranked[:MAX_TAGS]
        ]
        chart = GroupChart(
            name=workspace.name or workspace.external_id,
            weeks=starts,
            tags=rows,
            cells=cells,
            recall=bars,
            desired_retention=settings.desired_retention,
            members_due=due,
            members_overdue=overdue,
            threshold=MIN_MEMBERS,
        )
        withheld_tags = [t.tag for t in totals if t.members < MIN_MEMBERS]
        return chart, _weakest(totals), withheld_tags


def _withheld_cells(chart: GroupChart) -> list[str]:
    """``loops (week of Mar 2)`` for each withheld cell of the picture, row by row."""
    return [
        f"{tag_label(tag)} (week of {week_label(week)})"
        for tag in chart.tags
        for week in chart.weeks
        if (cell := chart.cells.get((tag, week))) is not None and cell.withheld
    ]


def _weakest_text(weakest: list[TagTotals], *, bold: bool) -> str:
    star = "**" if bold else ""
    return ", ".join(
        f"{star}{tag_label(t.tag)}{star} {_share(t.right, t.answers)} "
        f"({t.right} of {t.answers} right)"
        for t in weakest
    )


def _body(chart: GroupChart, weeks: int, weakest: list[TagTotals], withheld: list[str]) -> str:
    lines = [f"Last {weeks} week{'s' if weeks != 1 else ''} (UTC weeks)."]
    if weakest:
        lines.append(f"Weakest tags: {_weakest_text(weakest, bold=True)}.")
    else:
        lines.append(f"No tag has been answered by {MIN_MEMBERS} members yet.")
    lines.append(f"{chart.due_line}.")
    cells = _withheld_cells(chart)
    if cells or withheld:
        what = []
        if cells:
            what.append(f"{len(cells)} tag-week cell{'s' if len(cells) != 1 else ''}")
        if withheld:
            what.append(f"{len(withheld)} tag{'s' if len(withheld) != 1 else ''} in all")
        lines.append(
            f"Withheld: {' and '.join(what)}, answered by fewer than {MIN_MEMBERS} members "
            "(group figures need at least that many)."
        )
    return "\n".join(lines)


def _alt(chart: GroupChart, weeks: int, weakest: list[TagTotals], withheld: list[str]) -> str:
    """What the picture says, for a reader who cannot see it: the weakest tags with their
    share right, the due counts, and which cells are withheld."""
    parts = [
        f"Group mastery of {chart.name}, last {weeks} week{'s' if weeks != 1 else ''}: share "
        "right by tag and week, and mean predicted recall by tag."
    ]
    if weakest:
        parts.append(f"Weakest tags: {_weakest_text(weakest, bold=False)}.")
    else:
        parts.append(f"No tag has been answered by {MIN_MEMBERS} members yet.")
    parts.append(f"{chart.due_line}.")
    cells = _withheld_cells(chart)
    if cells:
        parts.append(f"Withheld, fewer than {MIN_MEMBERS} members: {', '.join(cells)}.")
    elif withheld:
        parts.append(f"Withheld, fewer than {MIN_MEMBERS} members: {len(withheld)} tags.")
    text = " ".join(parts)
    return text if len(text) <= ALT_CHARS else text[: ALT_CHARS - 1] + "…"
