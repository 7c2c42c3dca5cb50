"""Scores shown back: the leaderboard of a window and one member's stats.

Read-only: points are written with the answer (``storage.answers``); this only reads them, in
the workspace's time zone. Data first: :meth:`Standings.board`, :meth:`Standings.channel_board` and
:meth:`Standings.member_report` return what the chat cards (:meth:`Standings.leaderboard`,
:meth:`Standings.stats`) and an admin page show.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, replace
from datetime import timedelta, tzinfo
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from bot.core import replies, srs
from bot.core.clock import Clock
from bot.core.errors import BadInput, NotFound
from bot.core.messages import Attachment, Message, Section
from bot.core.models import (
    ChatContext,
    Leaderboard,
    MemberStats,
    ReviewSummary,
    StreakBoardRow,
    Window,
)
from bot.core.scoring import current_streak, period_key, streak_as_of, window_start
from bot.services.places import Places
from bot.services.studychart import WEEKS, StudyChart, TagBar, draw_study_chart
from bot.storage.directory import Directory, MemberRow
from bot.storage.exercises import ExerciseStore
from bot.storage.reviews import ReviewStore
from bot.storage.scores import ScoreStore

if TYPE_CHECKING:  # Exams reads nothing of these; only the type is named
    from bot.services.exams import Exams

__all__ = ["RETENTION_WINDOW", "MemberReport", "Standings", "stats_message"]

RETENTION_WINDOW = timedelta(days=30)
MASTERY_HORIZON = timedelta(days=7)
"""Mastery is the recall FSRS predicts this far ahead: right after a review every card is
remembered (a card just answered wrong would show 100%), a week later only the learned ones."""


@dataclass(frozen=True, slots=True)
class MemberReport:
    """One member's /stats: scores and streak (``stats``), and the spaced repetition summary
    (``reviews``: None where reviews are not kept). ``own``: the caller asked about themself.
    ``timezone`` is the workspace's, which the streak's days and the week are counted in."""

    stats: MemberStats
    reviews: ReviewSummary | None
    own: bool
    workspace_id: int
    timezone: ZoneInfo

    @property
    def accuracy(self) -> float | None:
        """Correct of answered, 0..1; None before the first answer."""
        answered = self.stats.answered
        return self.stats.correct / answered if answered else None


def stats_message(report: MemberReport) -> Message:
    """/stats' text card (the picture is added by :meth:`Standings.stats`)."""
    if report.reviews is None:
        return replies.stats_message(report.stats, own=report.own)
    return replies.stats_message(report.stats, own=report.own, reviews=report.reviews)


STREAKS = "streaks"
"""``/leaderboard streaks``: the board of current streaks rather than of a window's points."""


def _window(window: Window | str) -> Window:
    try:
        return Window(window)
    except ValueError:
        raise BadInput(f"`{window}` is not a window; use week, month or all.") from None


class Standings:
    """Leaderboards and member stats, per workspace."""

    # Set by build_services: the exam date's countdown line (None: no line, as in tests that
    # build the service alone).
    exams: Exams | None = None

    def __init__(
        self,
        places: Places,
        directory: Directory,
        scores: ScoreStore,
        clock: Clock,
        reviews: ReviewStore | None = None,
        exercises: ExerciseStore | None = None,
    ) -> None:
        self._exercises = exercises  # /stats counts coding exercises tried and solved
        self._places = places
        self._directory = directory
        self._scores = scores
        self._clock = clock
        self._reviews = reviews

    async def board(self, ctx: ChatContext, window: Window | str = Window.WEEK) -> Leaderboard:
        """The workspace's board for ``window`` (everyone): the top rows, and the caller's own
        row (None if the caller has no points in it)."""
        window = _window(window)
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        tz = workspace.zone_at(now)
        caller = await self._caller(workspace.id, ctx)
        rows, mine = await self._scores.leaderboard(
            workspace.id,
            period_key(window, now, tz),
            caller_member_id=caller.id if caller else None,
        )
        since = window_start(window, now, tz)
        return Leaderboard(window, since, tuple(rows), mine)

    async def channel_board(
        self, ctx: ChatContext, window: Window | str = Window.WEEK
    ) -> Leaderboard:
        """The caller's channel's own board: only the points of questions posted there."""
        window = _window(window)
        workspace, channel = await self._places.channel(ctx)
        now = self._clock.now()
        tz = workspace.zone_at(now)
        caller = await self._caller(workspace.id, ctx)
        since = window_start(window, now, tz)
        rows, mine = await self._scores.channel_leaderboard(
            workspace.id, channel.id, since, caller_member_id=caller.id if caller else None
        )
        name = channel.name or ctx.channel_name or ctx.channel
        return Leaderboard(window, since, tuple(rows), mine, channel=name)

    async def _caller(self, workspace_id: int, ctx: ChatContext) -> MemberRow | None:
        caller = self._directory.cached_member(workspace_id, ctx.member)
        if caller is None:
            caller = await self._directory.find_member(workspace_id, ctx.member)
        return caller

    async def streak_board(self, ctx: ChatContext) -> tuple[StreakBoardRow, ...]:
        """The workspace's longest streaks going today (data of ``/leaderboard streaks``)."""
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        today = now.astimezone(workspace.zone_at(now)).date()
        return tuple(await self._scores.streaks(workspace.id, today))

    async def leaderboard(
        self, ctx: ChatContext, window: Window | str = Window.WEEK, *, here: bool = False
    ) -> Message:
        """The workspace's board, or (``here``) the caller's channel's own board; ``streaks``:
        the workspace's longest current streaks instead of points."""
        if window == STREAKS:
            if here:
                raise BadInput(
                    "Streaks count answers anywhere in the workspace, so there is no streak "
                    f"board for one channel: use {ctx.command('leaderboard streaks')} without "
                    "`here`."
                )
            return replies.streak_board_message(await self.streak_board(ctx))
        window = _window(window)
        board = await (self.channel_board(ctx, window) if here else self.board(ctx, window))
        return replies.leaderboard_message(board, ctx.member_name)

    async def member_report(
        self, ctx: ChatContext, who: str | None = None, *, member_id: int | None = None
    ) -> MemberReport:
        """What /stats shows about the caller, or (``who``) about another member (everyone):
        points, accuracy, streak and rank, and the spaced repetition summary (cards due,
        retention, mastery by tag)."""
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        tz = workspace.zone_at(now)
        if member_id is not None:  # the admin page's member list (ids are its own links)
            by_id = await self._directory.member_by_id(workspace.id, member_id)
            if by_id is None:
                raise NotFound("No such member in this workspace.")
            member = by_id
        elif who is None:
            member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        else:
            found = await self._directory.find_member(workspace.id, who.lstrip("@"))
            if found is None:
                raise NotFound(f"No member called `{who}` has answered here yet.")
            member = found
        totals = await self._scores.member_totals(member.id, period_key(Window.WEEK, now, tz))
        if totals is None:  # the row was just read or created; only a deleted database
            raise NotFound("That member's record is gone.")
        today = now.astimezone(tz).date()
        shown = streak_as_of(totals.streak, today)
        stats = MemberStats(
            member_id=totals.member_id,
            display_name=totals.display_name,
            points_all=totals.points_all,
            points_week=totals.points_period,
            answered=totals.answered,
            correct=totals.correct,
            current_streak=current_streak(totals.streak, today),
            best_streak=totals.best_streak,
            last_day=totals.streak_last_day,
            rank_all=totals.rank_all,
            freezes=shown.freezes,
            freezes_used=shown.freezes_used,
        )
        reviews = (
            None if self._reviews is None else await self.review_summary(workspace.id, member.id)
        )
        return MemberReport(
            stats=stats,
            reviews=reviews,
            own=member.external_id == ctx.member,
            workspace_id=workspace.id,
            timezone=tz,
        )

    async def stats(
        self,
        ctx: ChatContext,
        who: str | None = None,
        *,
        picture: bool = True,
        member_id: int | None = None,
    ) -> Message:
        """/stats: the text card and (``picture``) the PNG, of the caller, of ``who`` (a name or
        platform id), or of ``member_id`` (a row id of the caller's workspace)."""
        report = await self.member_report(ctx, who, member_id=member_id)
        message = stats_message(report)
        if self._exercises is not None:
            tried = await self._exercises.counts(report.stats.member_id)
            if tried.attempts:
                line = (
                    f"Exercises: {tried.solved} solved of {tried.tried} tried "
                    f"({tried.attempts} submission{'s' if tried.attempts != 1 else ''})"
                )
                message = replace(message, sections=(*message.sections, Section(body=line)))
        if self.exams is not None:
            workspace = await self._places.workspace(ctx)
            channel = (await self._places.channel(ctx))[1].id if ctx.channel else None
            exam = await self.exams.countdown_line(workspace, channel)
            if exam is not None:
                shown = Section(body=f"{exam}: {ctx.command('exam')} shows your readiness.")
                message = replace(message, sections=(*message.sections, shown))
        if report.reviews is None or not picture:
            return message
        chart = await self.study_chart(
            report.workspace_id,
            report.stats.member_id,
            report.timezone,
            report.stats.display_name,
            report.reviews,
        )
        chart = replace(
            chart,
            streak=report.stats.current_streak,
            freezes=report.stats.freezes,
            freezes_used=report.stats.freezes_used,
        )
        png = await asyncio.to_thread(draw_study_chart, chart)
        return replace(
            message,
            attachments=(
                Attachment(
                    "study-stats.png",
                    png,
                    "Study days over the last 26 weeks, and retention and mastery by tag",
                    is_image=True,
                ),
            ),
        )

    async def study_chart(
        self,
        workspace_id: int,
        member_id: int,
        tz: tzinfo,
        name: str,
        summary: ReviewSummary,
    ) -> StudyChart:
        """The /stats picture's data: reviews per local day, and per tag retention/mastery."""
        assert self._reviews is not None
        today = self._clock.now().astimezone(tz).date()
        start = today - timedelta(days=today.weekday(), weeks=WEEKS - 1)
        since = self._clock.now() - timedelta(days=(today - start).days + 2)
        instants = await self._reviews.study_days(member_id, since)
        days = Counter(instant.astimezone(tz).date() for instant in instants)
        kept = {
            tag: (recalled, reviewed)
            for tag, recalled, reviewed in await self._reviews.retention_by_tag(
                workspace_id, member_id, self._clock.now() - RETENTION_WINDOW
            )
        }
        tags = tuple(
            TagBar(tag, count, *kept.get(tag, (0, 0)), mastery)
            for tag, count, mastery in summary.tags
        )
        settings = await self._reviews.settings(workspace_id)
        return StudyChart(name, today, days, tags, settings.desired_retention)

    async def review_summary(self, workspace_id: int, member_id: int) -> ReviewSummary:
        """Due cards, true retention over 30 days, and mastery per tag (mean predicted recall
        a week from now, :data:`MASTERY_HORIZON`)."""
        assert self._reviews is not None
        now = self._clock.now()
        settings = await self._reviews.settings(workspace_id)
        by_tag = await self._reviews.cards_by_tag(workspace_id, member_id)
        recalled, reviewed = await self._reviews.retention(member_id, now - RETENTION_WINDOW)
        tags = tuple(
            (
                group.tag,
                len(group.cards),
                sum(srs.retrievability(c, now + MASTERY_HORIZON, settings) for c in group.cards)
                / len(group.cards),
            )
            for group in by_tag
        )
        return ReviewSummary(
            cards=await self._reviews.card_count(workspace_id, member_id),
            due=await self._reviews.due_count(workspace_id, member_id, now),
            recalled=recalled,
            reviewed=reviewed,
            tags=tags,
        )
