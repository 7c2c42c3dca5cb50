"""The feature services, bundled: what adapters (and a web page) are handed.

There is no facade: an adapter calls the feature it serves directly
(``services.quiz.answer(ctx, post_id, "B")``, ``services.schedules.add(ctx, form)``). The bundle
holds services only, never a store or the database, so nothing above the services can reach
past their rules. Each service was built by :func:`bot.app.build_services` with exactly what it
touches; adding a feature is one field here and one constructor call there.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.services.accommodations import Accommodations
from bot.services.audit import AuditLog
from bot.services.catalogue import Catalogue
from bot.services.exams import Exams
from bot.services.exercises import Exercises
from bot.services.group_mastery import GroupMastery
from bot.services.history import QuestionHistory
from bot.services.home import Home
from bot.services.item_analysis import ItemAnalysis
from bot.services.packs import PackAdmin
from bot.services.places import Places
from bot.services.posting import Posting
from bot.services.quiz import Quiz
from bot.services.recaps import Recaps
from bot.services.reminders import Reminders
from bot.services.reports import QuestionReports
from bot.services.review import ReviewService
from bot.services.rewards import Rewards
from bot.services.rounds import Rounds
from bot.services.runs import SnippetRuns
from bot.services.schedule_book import ScheduleBook
from bot.services.score_import import ScoreImports
from bot.services.standings import Standings
from bot.services.suggestions import Suggestions
from bot.services.web_access import WebAccess
from bot.services.workspace_settings import WorkspaceSettingsService

__all__ = ["Services"]


@dataclass(frozen=True, slots=True)
class Services:
    """Every feature service of one running bot (see the module docstring)."""

    places: Places  # a context's workspace and channel rows; its timezone
    catalogue: Catalogue  # the loaded packs' names and titles (autocomplete, "did you mean")
    quiz: Quiz  # /quiz, answers, card backs, hints, reveals, button clicks
    posting: Posting  # drafting and sending a post
    schedules: ScheduleBook  # /schedule
    history: QuestionHistory  # /history, /question
    recaps: Recaps  # /recap and the weekly recap posts
    reports: QuestionReports  # /report, /reports
    settings: WorkspaceSettingsService  # /settings
    standings: Standings  # /leaderboard, /stats
    review: ReviewService  # /review
    reminders: Reminders  # /review remind and the reminder DMs
    runs: SnippetRuns  # /run, /graph
    packs: PackAdmin  # /pack, uploads, /write
    rounds: Rounds  # /round: live rounds
    exercises: Exercises  # /solve: coding exercises judged in the sandbox
    home: Home  # a member's streak, cards due and today's questions (Slack's App Home)
    audit: AuditLog  # every admin change, from chat or the web page (the page's audit log)
    suggestions: Suggestions  # /write's queue for members, /suggestions for admins
    web: WebAccess  # the admin web page: sign-in links, sessions, who administers what
    rewards: Rewards  # /rewards: roles given at a threshold of points, streak or reviews
    score_imports: ScoreImports  # `studybot scores import` / `undo-import` (the CLI's)
    analysis: ItemAnalysis  # item statistics, flags on broken questions, gradebook exports
    mastery: GroupMastery  # /stats group: the group's mastery by tag and week (admins)
    exams: Exams  # /exam: the exam date, its countdown and each member's readiness
    accommodations: Accommodations  # /accommodation: members' extra time (private)

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109
        """Let work in flight finish before shutdown: answers being committed, snippet runs.

        Answers always finish (they are milliseconds from their commit); runs get ``timeout``
        seconds, after which closing the sandbox ends them and their members are told.
        Returns False if runs were still going.
        """
        await self.quiz.flushed()
        return await self.runs.drain(timeout)
