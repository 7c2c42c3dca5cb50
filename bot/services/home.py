"""A member's home: what they would look up first, gathered in one place (Slack's App Home).

Their streak and freezes, rank, cards due, and today's open questions in the workspace; for
admins also the schedules with their next times, the open reports and the suggestions waiting.
Data first (:class:`HomeSummary`, what a web page could show too), then one neutral
:class:`Message` (:func:`home_message`) that a platform renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from bot.core import replies
from bot.core.clock import Clock
from bot.core.errors import StudyError
from bot.core.messages import Action, Button, ButtonStyle, Message, Section, escape_markup
from bot.core.models import ChatContext, MemberStats, ReviewSummary
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.services.reports import QuestionReports
from bot.services.schedule_book import ScheduleBook, ScheduleTimes
from bot.services.standings import Standings
from bot.services.suggestions import Suggestions
from bot.storage.directory import Directory
from bot.storage.posts import PostStore
from bot.storage.reports import OpenReport
from bot.storage.suggestions import Suggestion

__all__ = ["Home", "HomeSummary", "OpenQuestion", "home_message"]

_SHOWN = 5  # rows per list on the page


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    post_id: int
    channel: str  # the channel's name
    kind: str
    prompt: str
    closes_at: datetime | None


@dataclass(frozen=True, slots=True)
class AdminHome:
    schedules: tuple[ScheduleTimes, ...]
    reports: tuple[OpenReport, ...]
    suggestions: tuple[Suggestion, ...]


@dataclass(frozen=True, slots=True)
class HomeSummary:
    stats: MemberStats
    reviews: ReviewSummary | None
    open_today: tuple[OpenQuestion, ...]
    admin: AdminHome | None


class Home:
    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        catalogue: Catalogue,
        posts: PostStore,
        standings: Standings,
        schedules: ScheduleBook,
        reports: QuestionReports,
        suggestions: Suggestions,
        clock: Clock,
    ) -> None:
        self._clock = clock
        self._places = places
        self._directory = directory
        self._catalogue = catalogue
        self._posts = posts
        self._standings = standings
        self._schedules = schedules
        self._reports = reports
        self._suggestions = suggestions

    async def summary(self, ctx: ChatContext) -> HomeSummary:
        report = await self._standings.member_report(ctx)
        workspace = await self._places.workspace(ctx)
        local = self._clock.now().astimezone(report.timezone)
        today = local.replace(hour=0, minute=0, second=0, microsecond=0)
        open_today = []
        for post in await self._posts.open_in_workspace(workspace.id, today):
            channel = await self._directory.channel_by_id(post.channel_id)
            item = (await self._catalogue.posted(post)).item
            prompt = " ".join(item.prompt.split())
            open_today.append(
                OpenQuestion(
                    post.id,
                    channel.name or channel.external_id,
                    item.kind,
                    prompt if len(prompt) <= 80 else prompt[:79] + "…",
                    post.closes_at,
                )
            )
        admin = None
        if ctx.is_admin:
            admin = AdminHome(
                tuple(await self._schedules.workspace_schedules(ctx, 1)),
                tuple(await self._reports.open_reports(ctx)),
                tuple(await self._suggestions.pending(ctx)),
            )
        return HomeSummary(report.stats, report.reviews, tuple(open_today), admin)

    async def message(self, ctx: ChatContext, web_url: str | None = None) -> Message:
        try:
            summary = await self.summary(ctx)
        except StudyError as exc:
            return Message(sections=(Section(body=str(exc)),))
        return home_message(summary, ctx, web_url)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def home_message(summary: HomeSummary, ctx: ChatContext, web_url: str | None = None) -> Message:
    """The home page as one message: sections a platform renders, and a Review button."""
    stats = summary.stats
    streak = f"**{_plural(stats.current_streak, 'day')}** (best {stats.best_streak})"
    lines = [f"Streak: {streak} · freezes held: {stats.freezes}, used: {stats.freezes_used}"]
    rank = f"#{stats.rank_all}" if stats.rank_all is not None else "not on the board yet"
    lines.append(
        f"Points: **{stats.points_all}** all time, {stats.points_week} this week · rank {rank}"
    )
    sections = [Section(heading="You", body="\n".join(lines))]
    buttons: tuple[Button, ...] = ()
    due = summary.reviews.due if summary.reviews is not None else 0
    if summary.reviews is not None:
        body = (
            f"**{_plural(due, 'card')} due** of {summary.reviews.cards}."
            if due
            else f"Nothing due now ({_plural(summary.reviews.cards, 'card')} in all)."
        )
        sections.append(Section(heading="Review", body=body))
        if due:
            value = replies.review_value("more", 0, 0)
            buttons = (Button(Action.REVIEW, 0, value, "Review", ButtonStyle.PRIMARY),)
    if summary.open_today:
        rows = [
            f"**#{q.post_id}** in #{escape_markup(q.channel)} · {q.kind.replace('_', ' ')} · "
            f"{escape_markup(q.prompt)}"
            for q in summary.open_today[:_SHOWN]
        ]
        more = len(summary.open_today) - _SHOWN
        if more > 0:
            rows.append(f"… and {more} more")
        sections.append(Section(heading="Open today", body="\n".join(rows)))
    else:
        sections.append(
            Section(
                heading="Open today",
                body=f"No open questions; ask for one with {ctx.command('quiz')}.",
            )
        )
    if summary.admin is not None:
        sections.extend(_admin_sections(summary.admin, ctx, web_url))
    return Message(
        title="🏠 Your studybot",
        sections=tuple(sections),
        buttons=buttons,
        footer=f"{ctx.command('help')} lists every command.",
    )


def _admin_sections(admin: AdminHome, ctx: ChatContext, web_url: str | None) -> list[Section]:
    rows = []
    for entry in admin.schedules[:_SHOWN]:
        schedule = entry.schedule
        if schedule is None:
            rows.append(f"**#{entry.id}** in #{escape_markup(entry.channel)}: cannot be read")
            continue
        state = (
            "paused" if schedule.paused else (entry.texts[0] if entry.texts else "no more times")
        )
        rows.append(f"**#{entry.id}** in #{escape_markup(entry.channel)} · next: {state}")
    if not rows:
        rows = [f"None yet: {ctx.command('schedule add 09:00 Europe/Berlin weekdays')}."]
    sections = [Section(heading=f"Schedules ({len(admin.schedules)})", body="\n".join(rows))]
    reports = [
        f"`{r.question}` ({escape_markup(r.pack)}) by {escape_markup(r.member_name)}: "
        f"{escape_markup(r.reason[:80])}"
        for r in admin.reports[:_SHOWN]
    ]
    sections.append(
        Section(
            heading=f"Open reports ({len(admin.reports)})",
            body="\n".join(reports) or "None.",
        )
    )
    waiting = [
        f"**#{s.id}** by {escape_markup(s.author_name)}: {escape_markup(s.prompt[:80])}"
        for s in admin.suggestions[:_SHOWN]
    ]
    sections.append(
        Section(
            heading=f"Suggestions waiting ({len(admin.suggestions)})",
            body="\n".join(waiting) or "None.",
        )
    )
    if web_url:
        sections.append(Section(heading="Admin web page", body=web_url))
    return sections
