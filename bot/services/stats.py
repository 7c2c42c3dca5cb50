"""Scores shown back: the leaderboard of a window and one member's stats.

Read-only: points are written with the answer (``storage.answers``); this only reads them and
turns them into cards in the workspace's time zone.
"""

from __future__ import annotations

from datetime import timedelta

from bot.core import cards, srs
from bot.core.clock import Clock
from bot.core.errors import BadInput, NotFound
from bot.core.messages import Message
from bot.core.models import ChatContext, Leaderboard, MemberStats, ReviewSummary, Window
from bot.core.scoring import StreakState, current_streak, period_key, window_start
from bot.services.places import Places
from bot.services.posting import zone
from bot.storage.directory import Directory
from bot.storage.reviews import ReviewStore
from bot.storage.scores import ScoreStore

__all__ = ["RETENTION_WINDOW", "Stats"]

RETENTION_WINDOW = timedelta(days=30)


class Stats:
    """Leaderboards and member stats, per workspace."""

    def __init__(
        self,
        places: Places,
        directory: Directory,
        scores: ScoreStore,
        clock: Clock,
        reviews: ReviewStore | None = None,
    ) -> None:
        self._places = places
        self._directory = directory
        self._scores = scores
        self._clock = clock
        self._reviews = reviews

    async def leaderboard(self, ctx: ChatContext, window: Window | str = Window.WEEK) -> Message:
        try:
            window = Window(window)
        except ValueError:
            raise BadInput(f"`{window}` is not a window; use week, month or all.") from None
        workspace = await self._places.workspace(ctx)
        tz = zone(workspace.timezone)
        now = self._clock.now()
        caller = self._directory.cached_member(workspace.id, ctx.member)
        if caller is None:
            caller = await self._directory.find_member(workspace.id, ctx.member)
        rows, mine = await self._scores.leaderboard(
            workspace.id,
            period_key(window, now, tz),
            caller_member_id=caller.id if caller else None,
        )
        since = window_start(window, now, tz)
        board = Leaderboard(window, since, tuple(rows), mine)
        return cards.leaderboard_message(board, ctx.member_name)

    async def stats(self, ctx: ChatContext, who: str | None = None) -> Message:
        workspace = await self._places.workspace(ctx)
        tz = zone(workspace.timezone)
        now = self._clock.now()
        if who is None:
            member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        else:
            found = await self._directory.find_member(workspace.id, who.lstrip("@"))
            if found is None:
                raise NotFound(f"No member called `{who}` has answered here yet.")
            member = found
        totals = await self._scores.member_totals(member.id, period_key(Window.WEEK, now, tz))
        if totals is None:  # the row was just read or created; only a deleted database
            raise NotFound("That member's record is gone.")
        state = StreakState(totals.streak_days, totals.best_streak, totals.streak_last_day)
        stats = MemberStats(
            member_id=totals.member_id,
            display_name=totals.display_name,
            points_all=totals.points_all,
            points_week=totals.points_period,
            answered=totals.answered,
            correct=totals.correct,
            current_streak=current_streak(state, now.astimezone(tz).date()),
            best_streak=totals.best_streak,
            last_day=totals.streak_last_day,
            rank_all=totals.rank_all,
        )
        summary = None
        if self._reviews is not None:
            summary = await self.review_summary(workspace.id, member.id)
        return cards.stats_message(stats, own=member.external_id == ctx.member, reviews=summary)

    async def review_summary(self, workspace_id: int, member_id: int) -> ReviewSummary:
        """Due cards, true retention over 30 days, and mastery per tag (mean recall now)."""
        assert self._reviews is not None
        now = self._clock.now()
        settings = await self._reviews.settings(workspace_id)
        by_tag = await self._reviews.cards_by_tag(workspace_id, member_id)
        recalled, reviewed = await self._reviews.retention(member_id, now - RETENTION_WINDOW)
        tags = tuple(
            (
                group.tag,
                len(group.cards),
                sum(srs.retrievability(c, now, settings) for c in group.cards) / len(group.cards),
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
