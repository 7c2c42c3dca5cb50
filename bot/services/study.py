"""StudyService: the one object adapters receive; it builds the feature services and hands on.

Every method takes a :class:`ChatContext` (who and where, in platform ids) and returns neutral
messages; it raises :class:`StudyError` for anything a member should be told, in words. The
rules live in the services it holds (quiz, posting, schedules, packs, stats, runs), each built
here with exactly what it touches; this class only forwards, so adapters see one small API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from bot.core import cards
from bot.core.clock import Clock
from bot.core.errors import BadInput
from bot.core.gateway import ChatGateway, DirectMessenger
from bot.core.messages import Action, Message
from bot.core.models import ChatContext, Post, Window
from bot.log import get_logger
from bot.metrics import Metrics
from bot.questions.loader import LoadedPack
from bot.questions.written import WrittenQuestion
from bot.services.catalogue import Catalogue
from bot.services.history import QuestionHistory
from bot.services.packs import PackAdmin
from bot.services.places import Places
from bot.services.posting import PostDraft, Posting
from bot.services.quiz import PostEdit, Quiz
from bot.services.recaps import Recaps
from bot.services.reminders import Reminders
from bot.services.reports import QuestionReports
from bot.services.review import ReviewService, ReviewTurn
from bot.services.runs import SnippetRuns
from bot.services.schedule_book import ScheduleBook
from bot.services.stats import Stats
from bot.services.wakeup import Wakeup
from bot.services.workspace_settings import WorkspaceSettingsService
from bot.storage.answers import AnswerWriter
from bot.storage.database import Database
from bot.storage.directory import ChannelRow, Directory, WorkspaceRow
from bot.storage.packs import (
    Candidate,
    PackStore,
    PackSummary,
    SyncReport,
)
from bot.storage.posts import PostStore
from bot.storage.reviews import ReviewStore
from bot.storage.scores import ScoreStore

__all__ = [
    "Features",
    "PostEdit",
    "ReviewTurn",
    "StudyService",
]  # from bot.services.quiz and .review

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class Features:
    """Every store and feature service, built once by :func:`bot.app.build_service`.

    Each service was given exactly what it touches; this is only the bundle that hands them
    to :class:`StudyService` (and to the scheduler's loop, which posts through them).
    """

    db: Database
    clock: Clock
    directory: Directory
    places: Places
    packs: PackStore
    catalogue: Catalogue
    posts: PostStore
    scores: ScoreStore
    reviews: ReviewStore
    answers: AnswerWriter
    wakeup: Wakeup
    posting: Posting
    schedules: ScheduleBook
    quiz: Quiz
    runs: SnippetRuns
    review: ReviewService
    reminders: Reminders
    standings: Stats
    history: QuestionHistory
    recaps: Recaps
    reports: QuestionReports
    settings: WorkspaceSettingsService
    pack_admin: PackAdmin
    metrics: Metrics | None = None
    quiz_window: timedelta | None = None


class StudyService:
    """The one object adapters receive: the features of :class:`Features`, and methods that
    forward to them (no rules of its own). Built by :func:`bot.app.build_service`."""

    def __init__(self, features: Features) -> None:
        self.features = features
        self.db = features.db
        self.clock = features.clock
        self.quiz_window = features.quiz_window
        self.directory = features.directory
        self.places = features.places
        self.packs = features.packs
        self.catalogue = features.catalogue
        self.posts = features.posts
        self.scores = features.scores
        self.reviews = features.reviews
        self._answers = features.answers
        self.wakeup = features.wakeup
        self.posting = features.posting
        self.schedules = features.schedules
        self.metrics = features.metrics
        self.quiz = features.quiz
        self.runs = features.runs
        self.run_limits = features.runs.run_limits
        self.review = features.review
        self.reminders = features.reminders
        self.standings = features.standings
        self.history = features.history
        self.recaps = features.recaps
        self.reports = features.reports
        self.settings = features.settings
        self.pack_admin = features.pack_admin

    # --- set-up ------------------------------------------------------------------------------

    async def sync_packs(self, loaded: Sequence[LoadedPack]) -> SyncReport:
        report = await self.catalogue.sync(loaded)
        self.pack_admin.remember(loaded)  # what uploads are checked against and installed beside
        return report

    # --- the quiz (see bot.services.quiz) ----------------------------------------------------

    async def post_question(
        self,
        ctx: ChatContext,
        *,
        pack: str | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] = (),
        closes_at: datetime | None = None,
        requested: bool = True,
    ) -> PostDraft:
        """Pick a question for the channel and create its post row (not yet sent)."""
        return await self.quiz.post_question(
            ctx,
            pack=pack,
            difficulty=difficulty,
            tags=tags,
            closes_at=closes_at,
            requested=requested,
        )

    async def answer(self, ctx: ChatContext, post_id: int, choice: str) -> Message:
        return await self.quiz.answer(ctx, post_id, choice)

    async def answer_latest(self, ctx: ChatContext, choice: str) -> Message:
        return await self.quiz.answer_latest(ctx, choice)

    async def show_card(self, ctx: ChatContext, post_id: int | None) -> Message:
        return await self.quiz.show_card(ctx, post_id)

    async def hint(self, ctx: ChatContext, post_id: int | None, index: int = 0) -> Message:
        return await self.quiz.hint(ctx, post_id, index)

    async def click(self, ctx: ChatContext, action: Action, post_id: int, value: str) -> Message:
        """A click on one of the bot's buttons (:func:`~bot.core.messages.parse_action`), the
        same on every platform: an answer, a card's back, a review grade, or a hint."""
        if action is Action.ANSWER:
            return await self.answer(ctx, post_id, value)
        if action is Action.SHOW:
            return await self.show_card(ctx, post_id)
        if action is Action.REVIEW:
            return (await self.review_click(ctx, post_id, value)).as_message()
        if not value.isdigit():
            raise BadInput("That hint button is out of date; ask for a new question.")
        return await self.hint(ctx, post_id, int(value))

    async def reveal(self, ctx: ChatContext | None, post_id: int | None = None) -> PostEdit:
        return await self.quiz.reveal(ctx, post_id)

    async def reveal_many(self, post_ids: Sequence[int]) -> list[PostEdit]:
        return await self.quiz.reveal_many(post_ids)

    async def apply_edit(self, edit: PostEdit, gateway: ChatGateway) -> None:
        """Edit the posted question in place; a post that was never sent is re-posted."""
        await self.quiz.apply_edit(edit, gateway)

    # --- posting -----------------------------------------------------------------------------

    async def post_in(
        self,
        workspace: WorkspaceRow,
        channel: ChannelRow,
        *,
        pack: str | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] = (),
        closes_at: datetime | None = None,
        requested_by: int | None = None,
        schedule_id: int | None = None,
        occurrence: str | None = None,
        mention: str | None = None,
        timezone: str | None = None,
    ) -> PostDraft | None:
        """:meth:`post_question` for a known channel; the scheduler's way in (see
        :meth:`Posting.post_in`)."""
        return await self.posting.post_in(
            workspace,
            channel,
            pack=pack,
            difficulty=difficulty,
            tags=tags,
            closes_at=closes_at,
            requested_by=requested_by,
            schedule_id=schedule_id,
            occurrence=occurrence,
            mention=mention,
            timezone=timezone,
        )

    def pick(self, candidates: Sequence[Candidate]) -> Candidate:
        """The no-repeat rule (see :meth:`Posting.pick`)."""
        return self.posting.pick(candidates)

    async def draft(
        self,
        post: Post,
        channel: str,
        workspace: WorkspaceRow,
        *,
        mention: str | None = None,
        timezone: str | None = None,
    ) -> PostDraft:
        """The message for a post row (see :meth:`Posting.draft`)."""
        return await self.posting.draft(
            post, channel, workspace, mention=mention, timezone=timezone
        )

    async def attach_message(self, post_id: int, message_id: str) -> None:
        """Remember the platform's id for a sent post, so the reveal can edit it in place."""
        await self.posting.attach_message(post_id, message_id)

    async def publish(self, draft: PostDraft, gateway: ChatGateway) -> str:
        """Send a drafted post through a gateway and remember its message id."""
        return await self.posting.publish(draft, gateway)

    def has_pack(self, pack: str) -> bool:
        return self.catalogue.has(pack)

    def pack_titles(self) -> dict[str, str]:
        """Loaded pack names and titles, kept in memory since the last sync (autocomplete)."""
        return self.catalogue.titles()

    def closest_pack(self, pack: str) -> str | None:
        """The loaded pack name nearest to a mistyped one, for "did you mean"."""
        return self.catalogue.closest(pack)

    # --- schedules ---------------------------------------------------------------------------

    # Typed methods on ``self.schedules`` (:class:`ScheduleBook`): ``add(ctx, form)``,
    # ``list(ctx)``, ``remove|pause|resume|skip|now(ctx, id)``, ``preview(ctx, id, count)``;
    # the console and Slack reach them through bot.adapters.text_commands.

    # --- past questions (see bot.services.history) ---------------------------------------------

    async def recent_questions(self, ctx: ChatContext, count: int = 5) -> Message:
        """``/history [N]``: this channel's last questions, privately."""
        return await self.history.recent(ctx, count)

    async def past_question(self, ctx: ChatContext, post_id: int) -> Message:
        """``/question ID``: one question, revealed if it closed, privately."""
        return await self.history.question(ctx, post_id)

    # --- weekly recaps (see bot.services.recaps) -----------------------------------------------

    async def recap_command(self, ctx: ChatContext, args: Sequence[str]) -> Message:
        """``recap [on DAY HH:MM | off | now]``: the channel's weekly recap (admins change it)."""
        return await self.recaps.command(ctx, args)

    async def deliver_recaps(self, gateway: ChatGateway, *, command_prefix: str = "/") -> int:
        """Post the weekly recaps whose time has come (what their due source does)."""
        return await self.recaps.deliver(gateway, command_prefix=command_prefix)

    # --- reports of wrong questions (see bot.services.reports) ---------------------------------

    async def report_question(self, ctx: ChatContext, post_id: int | None, reason: str) -> Message:
        """``/report [ID] REASON``: flag a question as wrong (the channel's latest by default)."""
        return await self.reports.report(ctx, post_id, reason)

    async def open_reports(self, ctx: ChatContext) -> Message:
        """``/reports``: the open reports (admins)."""
        return await self.reports.listing(ctx)

    async def resolve_reports(self, ctx: ChatContext, item_id: str) -> Message:
        """``/reports resolve ITEM_ID``: close a question's reports (admins)."""
        return await self.reports.resolve(ctx, item_id)

    # --- settings (see bot.services.workspace_settings) ----------------------------------------

    async def settings_command(self, ctx: ChatContext, args: Sequence[str]) -> Message:
        """``settings [NAME [VALUE]]`` (changing is for admins), ``settings history``."""
        return await self.settings.command(ctx, args)

    # --- scores (see bot.services.stats) ------------------------------------------------------

    async def timezone(self, ctx: ChatContext) -> str:
        """The IANA timezone of the caller's workspace now: its days, weeks and shown times."""
        workspace = await self.places.workspace(ctx)
        return workspace.settings.zone_name_at(self.clock.now())

    async def leaderboard(
        self, ctx: ChatContext, window: Window | str = Window.WEEK, *, here: bool = False
    ) -> Message:
        """The workspace's board for a window, or (``here``) this channel's own board."""
        return await self.standings.leaderboard(ctx, window, here=here)

    async def stats(
        self, ctx: ChatContext, who: str | None = None, *, picture: bool = True
    ) -> Message:
        """/stats: the text card, plus (``picture``) the study-days and retention PNG."""
        return await self.standings.stats(ctx, who, picture=picture)

    # --- spaced repetition (see bot.services.review) -----------------------------------------

    async def review_next(self, ctx: ChatContext, reviewed: int = 0) -> ReviewTurn:
        """``/review``: the caller's most overdue card, privately, or when the next is due.

        A reminder that turned itself off (DMs closed) is mentioned first, once."""
        turn = await self.review.next(ctx, reviewed)
        notice = await self.reminders.notice(ctx)
        return turn if notice is None else replace(turn, feedback=notice)

    async def deliver_reminders(self, gateway: DirectMessenger) -> int:
        """Send the review reminders whose time has come (what their due source does)."""
        return await self.reminders.deliver(gateway)

    async def review_remind(self, ctx: ChatContext, args: Sequence[str]) -> Message:
        """``review remind HH:MM [TZ]`` / ``review remind off`` (see bot.services.reminders)."""
        return await self.reminders.command(ctx, args)

    async def review_click(self, ctx: ChatContext, question_key: int, value: str) -> ReviewTurn:
        """A /review button (``review:<question>:<value>``): show, grade, or more."""
        return await self.review.click(ctx, question_key, value)

    async def review_grade(
        self, ctx: ChatContext, question_key: int, typed: str, *, reviewed: int
    ) -> ReviewTurn:
        """Grade a served card by what was typed (the console's ``/review B``)."""
        return await self.review.grade(
            ctx, question_key, typed, reviewed=reviewed, card_reviews=None
        )

    # --- snippets (see bot.services.runs) ----------------------------------------------------

    async def drain(self, timeout: float) -> bool:  # noqa: ASYNC109
        """Let work in flight finish before shutdown: answers being committed, snippet runs.

        Answers always finish (they are milliseconds from their commit); runs get ``timeout``
        seconds, after which closing the sandbox ends them and their members are told.
        Returns False if runs were still going.
        """
        await self._answers.flushed()
        return await self.runs.drain(timeout)

    def check_snippets(self) -> None:
        """Raise :class:`Unavailable` now if ``/run`` cannot work (see :class:`SnippetRuns`)."""
        self.runs.check()

    async def run_snippet(self, ctx: ChatContext, code: str) -> Message:
        """Run a member's snippet in the sandbox (see :meth:`SnippetRuns.run`)."""
        return await self.runs.run(ctx, code)

    async def graph_snippet(self, ctx: ChatContext, code: str, of: tuple[str, ...] = ()) -> Message:
        """Run a snippet and draw its autograd graph (see :meth:`SnippetRuns.graph`)."""
        return await self.runs.graph(ctx, code, of)

    def help(self, ctx: ChatContext, lines: Sequence[tuple[str, str, bool]]) -> Message:
        """The command list: ``(usage, what it does, admins only)`` rows that the adapter
        generates from its command table, in the platform's syntax; admin rows for admins."""
        return cards.help_message(lines, admin=ctx.is_admin)

    # --- packs (see bot.services.packs) ------------------------------------------------------

    async def pack_list(self, ctx: ChatContext | None = None) -> Message:
        """The packs and their question counts; with ``ctx``, whether each is on in its channel."""
        if ctx is None:
            return await self.pack_admin.listing(None)
        return await self.pack_admin.listing(ctx, await self.reports.counts_by_pack(ctx))

    async def pack_states(self, ctx: ChatContext) -> list[tuple[PackSummary, bool]]:
        """Every pack and whether it is on in the caller's channel (for autocomplete)."""
        return await self.pack_admin.states(ctx)

    async def pack_enable(self, ctx: ChatContext, name: str) -> Message:
        """Turn a pack back on in the caller's channel (admins)."""
        return await self.pack_admin.set_enabled(ctx, name, True)

    async def pack_disable(self, ctx: ChatContext, name: str) -> Message:
        """Turn a pack off in the caller's channel only: quiz and schedules there skip it."""
        return await self.pack_admin.set_enabled(ctx, name, False)

    @property
    def pack_upload_limit(self) -> int:
        """The largest pack upload, in bytes: what an adapter may download before checking it."""
        return self.pack_admin.max_bytes

    def check_pack_file(self, filename: str, size: int | None) -> str:
        """Raise :class:`BadInput` for an upload that must not even be downloaded (name, size)."""
        return self.pack_admin.check_file(filename, size)

    async def write_question(self, ctx: ChatContext, question: WrittenQuestion) -> Message:
        """``/write``: a question written in chat, checked like a pack upload; admins add it
        to the ``community`` pack, members see the check."""
        return await self.pack_admin.write_question(ctx, question)

    async def check_pack_upload(
        self, ctx: ChatContext, filename: str, raw: bytes, *, force: bool = False
    ) -> Message:
        """Lint an uploaded pack file with the linter's words, run its code in the sandbox, and
        install it for an admin (``force``: even if its code disagrees)."""
        return await self.pack_admin.check_upload(ctx, filename, raw, force=force)
