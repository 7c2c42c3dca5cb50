"""StudyService: the only API adapters call. It owns the rules; storage only remembers.

Every method takes a :class:`ChatContext` (who and where, in platform ids) and returns neutral
messages; it raises :class:`StudyError` for anything a member should be told, in words.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from bot.core import cards
from bot.core.clock import Clock
from bot.core.errors import (
    AlreadyAnswered,
    BadInput,
    Forbidden,
    NotFound,
    PostClosed,
)
from bot.core.gateway import ChatGateway
from bot.core.messages import Message, Section, Tone
from bot.core.models import ChatContext, Post, Window
from bot.core.schedule import ScheduleError, parse_filters
from bot.core.scoring import (
    ScoreDecision,
    StreakState,
    decide,
    period_keys,
)
from bot.core.snippets import RunLimits, SnippetRunner
from bot.log import get_logger
from bot.metrics import Metrics
from bot.questions.loader import LoadedPack
from bot.questions.schema import OpenPrompt
from bot.services.catalogue import Catalogue
from bot.services.packs import PackAdmin
from bot.services.places import Places
from bot.services.posting import PostDraft, Posting, zone
from bot.services.runs import SnippetRuns
from bot.services.schedules import ScheduleBook, ScheduleReply
from bot.services.stats import Stats
from bot.services.wakeup import Wakeup
from bot.storage.answers import AnswerRequest, AnswerStatus, AnswerWriter
from bot.storage.database import Database
from bot.storage.directory import ChannelRow, Directory, WorkspaceRow
from bot.storage.packs import (
    Candidate,
    PackStore,
    PackSummary,
    StoredQuestion,
    SyncReport,
)
from bot.storage.posts import PostStore
from bot.storage.schedules import ScheduleStore
from bot.storage.scores import ScoreStore

__all__ = ["PostEdit", "StudyService"]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class PostEdit:
    """A posted question's new look (at reveal); ``message_id`` is None if never attached."""

    post: Post
    channel: str
    message_id: str | None
    message: Message


def _score_rules(state: StreakState, request: AnswerRequest) -> ScoreDecision:
    return decide(
        state,
        request.local_day,
        difficulty=request.difficulty,
        correct=request.correct,
        self_graded=request.self_graded,
    )


class StudyService:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        *,
        default_timezone: str = "UTC",
        quiz_window: timedelta | None = None,
        rng: random.Random | None = None,
        runner: SnippetRunner | None = None,
        runner_starting: asyncio.Future[None] | None = None,
        run_limits: RunLimits | None = None,
        metrics: Metrics | None = None,
        packs_dir: Path | None = None,
    ) -> None:
        self.db = db
        self.clock = clock
        self.quiz_window = quiz_window
        self.directory = Directory(db, default_timezone)
        self.places = Places(self.directory, clock)
        self.packs = PackStore(db)
        self.catalogue = Catalogue(self.packs, clock)
        self.posts = PostStore(db)
        self.scores = ScoreStore(db)
        self._answers = AnswerWriter(db, self.directory, _score_rules)
        self.wakeup = Wakeup()
        self.posting = Posting(self.catalogue, self.posts, clock, self.wakeup, rng)
        self.schedules = ScheduleBook(
            ScheduleStore(db),
            places=self.places,
            catalogue=self.catalogue,
            posting=self.posting,
            posts=self.posts,
            directory=self.directory,
            clock=clock,
            wakeup=self.wakeup,
        )
        self.metrics = metrics
        self.runs = SnippetRuns(
            runner, clock, runner_starting=runner_starting, run_limits=run_limits, metrics=metrics
        )
        self.run_limits = self.runs.run_limits
        self.standings = Stats(self.places, self.directory, self.scores, clock)
        # Packs uploaded in chat are installed here (None: checked only, never installed).
        self.pack_admin = PackAdmin(
            self.catalogue, packs_dir, places=self.places, schedules=self.schedules.store
        )

    # --- set-up ------------------------------------------------------------------------------

    async def sync_packs(self, loaded: Sequence[LoadedPack]) -> SyncReport:
        report = await self.catalogue.sync(loaded)
        self.pack_admin.remember(loaded)  # what uploads are checked against and installed beside
        return report

    # --- where and who -----------------------------------------------------------------------

    async def _workspace(self, ctx: ChatContext) -> WorkspaceRow:
        return await self.places.workspace(ctx)

    async def _channel(self, ctx: ChatContext) -> tuple[WorkspaceRow, ChannelRow]:
        return await self.places.channel(ctx)

    async def _post_in(self, ctx: ChatContext, post_id: int) -> tuple[WorkspaceRow, Post]:
        """A post, checked to belong to the caller's workspace (ids are global)."""
        post = await self.posts.get(post_id)
        workspace = await self._workspace(ctx)
        if post is not None:
            channel = await self.directory.channel_by_id(post.channel_id)
            if channel.workspace_id == workspace.id:
                return workspace, post
        raise NotFound("That question no longer exists.")

    async def _post_or_latest(self, ctx: ChatContext, post_id: int | None) -> Post:
        if post_id is None:
            return await self._latest_open(ctx)
        return (await self._post_in(ctx, post_id))[1]

    async def _latest_open(self, ctx: ChatContext) -> Post:
        _, channel = await self._channel(ctx)
        post = await self.posts.latest_open(channel.id)
        if post is None:
            ask = ctx.command("quiz")
            raise NotFound(f"There is no open question in this channel. Ask for one with {ask}.")
        return post

    def _title(self, pack: str) -> str:
        return self.catalogue.title(pack)

    # --- posting -----------------------------------------------------------------------------

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
        """Pick a question for the channel and create its post row (not yet sent).

        No question repeats in a channel until every question matching the filters has been
        posted there; then the least-posted come round again, but never the one posted last
        while there is another. A question a member asks for closes after ``quiz_window``
        unless ``closes_at`` says otherwise.
        """
        try:
            difficulty, tags = parse_filters(difficulty, tags)
        except ScheduleError as exc:  # its example is a schedule's: not for a quiz
            raise BadInput(f"{exc.field}: {exc.reason}.") from None
        workspace, channel = await self._channel(ctx)
        requester = None
        if requested:
            requester = (
                await self.directory.member(
                    workspace, ctx.member, ctx.member_name, self.clock.now()
                )
            ).id
            if closes_at is None and self.quiz_window is not None:
                closes_at = self.clock.now() + self.quiz_window
        draft = await self.post_in(
            workspace,
            channel,
            pack=pack,
            difficulty=difficulty,
            tags=tags,
            closes_at=closes_at,
            requested_by=requester,
        )
        assert draft is not None  # ad-hoc posts have no occurrence key to collide on
        if self.metrics is not None:
            self.metrics.posts.labels(origin="asked").inc()
        return draft

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

    async def apply_edit(self, edit: PostEdit, gateway: ChatGateway) -> None:
        """Edit the posted question in place; a post that was never sent is re-posted."""
        if edit.message_id is None:
            await gateway.send_post(edit.channel, edit.message)
        else:
            await gateway.edit_post(edit.channel, edit.message_id, edit.message)

    def has_pack(self, pack: str) -> bool:
        return self.catalogue.has(pack)

    def pack_titles(self) -> dict[str, str]:
        """Loaded pack names and titles, kept in memory since the last sync (autocomplete)."""
        return self.catalogue.titles()

    def closest_pack(self, pack: str) -> str | None:
        """The loaded pack name nearest to a mistyped one, for "did you mean"."""
        return self.catalogue.closest(pack)

    # --- schedules ---------------------------------------------------------------------------

    async def schedule_command(
        self, ctx: ChatContext, verb: str, args: Sequence[str]
    ) -> ScheduleReply:
        """``schedule add|list|remove|pause|resume|skip|now|preview`` (bot.services.schedules)."""
        return await self.schedules.command(ctx, verb, args)

    # --- answering ---------------------------------------------------------------------------

    async def answer(self, ctx: ChatContext, post_id: int, choice: str) -> Message:
        """Record a member's answer; the reply is private and says what happened."""
        workspace, post = await self._post_in(ctx, post_id)
        return await self._answer(ctx, workspace, post, choice)

    async def answer_latest(self, ctx: ChatContext, choice: str) -> Message:
        post = await self._latest_open(ctx)
        workspace = await self._workspace(ctx)
        return await self._answer(ctx, workspace, post, choice)

    async def _answer(
        self, ctx: ChatContext, workspace: WorkspaceRow, post: Post, choice: str
    ) -> Message:
        now = self.clock.now()
        stored = await self.packs.question(post.question_version_id)
        item = stored.item
        if isinstance(item, OpenPrompt):
            raise BadInput("This is a discussion prompt: it is not scored. Share your thoughts!")
        if not post.is_open or (post.closes_at is not None and now >= post.closes_at):
            raise PostClosed("This question has closed; answers are no longer accepted.")
        labels = cards.answer_labels(item)
        picked = choice.strip()
        picked = picked.upper() if len(picked) == 1 else picked.lower()
        if picked not in labels:
            raise BadInput(f"`{choice}` is not an answer here; choose one of {', '.join(labels)}.")
        correct_letter = cards.correct_letter(item)
        correct = picked == cards.KNEW if correct_letter is None else picked == correct_letter
        tz = zone(workspace.timezone)
        outcome = await self._answers.submit(
            AnswerRequest(
                post_id=post.id,
                workspace_id=workspace.id,
                member_external=ctx.member,
                member_name=ctx.member_name,
                choice=picked,
                correct=correct,
                answered_at=now,
                local_day=now.astimezone(tz).date(),
                difficulty=item.difficulty.value,
                self_graded=cards.self_graded(item),
                periods=period_keys(now, tz),
            )
        )
        if self.metrics is not None:
            self.metrics.answers.labels(status=outcome.status.value).inc()
        if outcome.status is AnswerStatus.CLOSED:
            raise PostClosed("This question has closed; answers are no longer accepted.")
        if outcome.status is AnswerStatus.DUPLICATE:
            raise AlreadyAnswered(
                f"You already answered this question ({outcome.choice}); only your first "
                "answer counts."
            )
        return _feedback(stored, picked, correct, outcome.points, outcome.bonus, outcome.streak)

    async def show_card(self, ctx: ChatContext, post_id: int | None) -> Message:
        """The private back of a flashcard (or a self-graded practice answer).

        ``post_id=None`` means the channel's latest open question (the console's ``/show``).
        """
        post = await self._post_or_latest(ctx, post_id)
        stored = await self.packs.question(post.question_version_id)
        if not cards.self_graded(stored.item):
            raise BadInput("This question is answered with its choice buttons.")
        return cards.card_back(stored.item, post.id)

    async def hint(self, ctx: ChatContext, post_id: int | None, index: int = 0) -> Message:
        post = (
            await self._latest_open(ctx)
            if post_id is None
            else (await self._post_in(ctx, post_id))[1]
        )
        stored = await self.packs.question(post.question_version_id)
        return cards.hint_message(stored.item, index, post.id)

    # --- reveal ------------------------------------------------------------------------------

    async def reveal(self, ctx: ChatContext | None, post_id: int | None = None) -> PostEdit:
        """Close a post and show its answer. ``ctx=None`` is the scheduler closing it on time.

        Members may reveal a question they asked for; admins may reveal any.
        """
        if ctx is None:
            if post_id is None:
                raise ValueError("the scheduler must name the post it closes")
            post = await self.posts.get(post_id)
            if post is None:
                raise NotFound("That question no longer exists.")
        else:
            post = (
                await self._latest_open(ctx)
                if post_id is None
                else (await self._post_in(ctx, post_id))[1]
            )
            if not ctx.is_admin:
                member = await self.directory.member(
                    await self._workspace(ctx), ctx.member, ctx.member_name, self.clock.now()
                )
                if post.requested_by != member.id:
                    raise Forbidden(
                        "Only the member who asked for this question, or an admin, can reveal it."
                    )
        closed = await self.posts.close(post.id, self.clock.now())
        if closed is None:
            raise PostClosed("This question is already closed.")
        return await self._edit_for(closed)

    async def reveal_many(self, post_ids: Sequence[int]) -> list[PostEdit]:
        """``reveal(None, id)`` for many posts at once (the scheduler at 09:00): one
        transaction and one breakdown query. Posts already closed are left out."""
        closed = await self.posts.close_many(post_ids, self.clock.now())
        counts = await self.posts.breakdowns([p.id for p in closed])
        return [await self._edit_for(post, counts[post.id]) for post in closed]

    async def _edit_for(self, post: Post, counts: Mapping[str, int] | None = None) -> PostEdit:
        stored = await self.packs.question(post.question_version_id)
        if counts is None:
            counts = await self.posts.breakdown(post.id)
        channel = await self.directory.channel_by_id(post.channel_id)
        message = cards.reveal_message(post, stored.item, self._title(stored.pack), counts)
        return PostEdit(post, channel.external_id, post.platform_message_id, message)

    # --- scores (see bot.services.stats) ------------------------------------------------------

    async def leaderboard(self, ctx: ChatContext, window: Window | str = Window.WEEK) -> Message:
        return await self.standings.leaderboard(ctx, window)

    async def stats(self, ctx: ChatContext, who: str | None = None) -> Message:
        return await self.standings.stats(ctx, who)

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

    def help(self, ctx: ChatContext, prefix: str = "/") -> Message:
        """The command list in the platform's syntax (``/`` on Discord, ``/study `` on Slack)."""
        return cards.help_message(prefix, admin=ctx.is_admin)

    # --- packs (see bot.services.packs) ------------------------------------------------------

    async def pack_list(self, ctx: ChatContext | None = None) -> Message:
        """The packs and their question counts; with ``ctx``, whether each is on in its channel."""
        return await self.pack_admin.listing(ctx)

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

    async def check_pack_upload(self, ctx: ChatContext, filename: str, raw: bytes) -> Message:
        """Lint an uploaded pack file with the linter's words; install it for an admin."""
        return await self.pack_admin.check_upload(ctx, filename, raw)


def _feedback(
    stored: StoredQuestion,
    picked: str,
    correct: bool,
    points: int,
    bonus: int,
    streak: StreakState,
) -> Message:
    streak_text = f"Streak: {streak.days} day{'s' if streak.days != 1 else ''}."
    if cards.self_graded(stored.item):
        if correct:
            text = f"Nice, you knew it! +{points} points"
        else:
            text = "Thanks for being honest: it will come round again. +0 points"
    elif correct:
        text = f"✅ Correct! +{points} points"
    else:
        text = f"❌ Not quite: you picked {picked}. The answer is shown when the question closes"
    if bonus:
        text += f" (+{bonus} streak bonus)"
    return Message(
        sections=(Section(body=f"{text}. {streak_text}"),),
        ephemeral=True,
        tone=Tone.SUCCESS if correct else Tone.WARNING,
        post_id=None,
    )
