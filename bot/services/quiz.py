"""The quiz: a member asks for a question, answers it, sees a card's back or a hint; reveals.

Answers are recorded once per member and post (``UNIQUE(post_id, member_id)``) and scored in
the same commit; the reveal edits the posted question in place with the answer and the counts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial

from bot.core import replies, srs
from bot.core.clock import Clock
from bot.core.errors import (
    AlreadyAnswered,
    BadInput,
    Forbidden,
    NotFound,
    PostClosed,
)
from bot.core.gateway import ChatGateway
from bot.core.messages import Action, Message, Section, Tone
from bot.core.models import ChatContext, Post
from bot.core.schedule_spec import ScheduleError, parse_filters, parse_kinds
from bot.core.scoring import (
    ScoreDecision,
    StreakState,
    decide,
    freeze_news,
    period_keys,
)
from bot.log import get_logger
from bot.metrics import Metrics
from bot.questions.schema import Exercise, Item, OpenPrompt, TypedAnswer
from bot.questions.typed import answer_problem
from bot.services.catalogue import Catalogue
from bot.services.graphs import ItemGraphs
from bot.services.places import Places
from bot.services.post_rules import MemberId, PostRules
from bot.services.posting import PostDraft, Posting, zone
from bot.services.review import ReviewService
from bot.services.typed_answers import TypedAnswers
from bot.storage.answers import AnswerRequest, AnswerStatus, AnswerWriter
from bot.storage.directory import ChannelRow, Directory, WorkspaceRow
from bot.storage.packs import (
    StoredQuestion,
)
from bot.storage.posts import PostStore
from bot.text import clip

__all__ = ["PostEdit", "Quiz", "score_rules"]

log = get_logger(__name__)

FIRST_KINDS = ("multiple_choice",)
"""What a channel's first question asked for is, where the filters allow: one that takes a
letter, so the first instruction anyone reads ("/quiz, then /answer with a letter") works."""


@dataclass(frozen=True, slots=True)
class PostEdit:
    """A posted question's new look (at reveal); ``message_id`` is None if never attached."""

    post: Post
    channel: str
    message_id: str | None
    message: Message


@dataclass(frozen=True, slots=True)
class TryForm:
    """What "Try it" opens in an editable /run: a title and the code."""

    title: str
    code: str


def score_rules(state: StreakState, request: AnswerRequest) -> ScoreDecision:
    if request.round_points is not None:  # a live round: its own points; the day counts
        decided = decide(
            state, request.local_day, difficulty=request.difficulty, correct=True, self_graded=False
        )
        points = request.round_points if request.correct else 0
        return ScoreDecision(points, 0, decided.streak)
    if request.exercise_points is not None:  # an exercise: its best submission's points
        decided = decide(
            state, request.local_day, difficulty=request.difficulty, correct=True, self_graded=False
        )
        bonus = decided.bonus if request.correct else 0
        return ScoreDecision(request.exercise_points, bonus, decided.streak)
    return decide(
        state,
        request.local_day,
        difficulty=request.difficulty,
        correct=request.correct,
        self_graded=request.self_graded,
        base=request.base_points,
    )


class Quiz:
    """Questions asked for, answers, card backs, hints and reveals, per channel."""

    def __init__(
        self,
        *,
        places: Places,
        catalogue: Catalogue,
        posting: Posting,
        posts: PostStore,
        directory: Directory,
        answers: AnswerWriter,
        clock: Clock,
        quiz_window: timedelta | None = None,
        metrics: Metrics | None = None,
        graphs: ItemGraphs | None = None,
        review: ReviewService | None = None,
        rules: Sequence[PostRules] = (),
        typed: TypedAnswers | None = None,
    ) -> None:
        # What kinds of post change (a round's question, an exercise): asked in order.
        self._rules = tuple(rules)
        self._graphs = graphs
        self._review = review
        self._places = places
        self._catalogue = catalogue
        self._posting = posting
        self._posts = posts
        self._directory = directory
        self._answers = answers
        self._clock = clock
        self._quiz_window = quiz_window
        self._metrics = metrics
        self._typed = typed or TypedAnswers()

    # --- where and who -----------------------------------------------------------------------

    async def _workspace(self, ctx: ChatContext) -> WorkspaceRow:
        return await self._places.workspace(ctx)

    async def _channel(self, ctx: ChatContext) -> tuple[WorkspaceRow, ChannelRow]:
        return await self._places.channel(ctx)

    async def _post_in(self, ctx: ChatContext, post_id: int) -> tuple[WorkspaceRow, Post]:
        """A post, checked to belong to the caller's workspace (ids are global)."""
        post = await self._posts.get(post_id)
        workspace = await self._workspace(ctx)
        if post is None or await self._places.channel_of(workspace, post) is None:
            raise NotFound("That question no longer exists.")
        return workspace, post

    async def _post_or_latest(self, ctx: ChatContext, post_id: int | None) -> Post:
        if post_id is None:
            return await self._latest_open(ctx)
        return (await self._post_in(ctx, post_id))[1]

    async def _latest_open(self, ctx: ChatContext) -> Post:
        workspace, channel = await self._channel(ctx)
        post = await self._posts.latest_open(channel.id)
        if post is None:
            ask = ctx.command("quiz")
            last = await self._posts.latest(channel.id)
            if last is not None and last.closed_at is not None:
                local = last.closed_at.astimezone(zone(workspace.timezone))
                raise NotFound(
                    f"The last question here (#{last.id}) closed at {local:%a %H:%M} "
                    f"({workspace.timezone}); answers are no longer taken. Ask for a new one "
                    f"with {ask}."
                )
            raise NotFound(f"There is no open question in this channel. Ask for one with {ask}.")
        return post

    def _title(self, pack: str) -> str:
        return self._catalogue.title(pack)

    # --- asking ---

    async def post_question(
        self,
        ctx: ChatContext,
        *,
        pack: str | None = None,
        difficulty: str | None = None,
        tags: Sequence[str] = (),
        kinds: Sequence[str] = (),
        closes_at: datetime | None = None,
        requested: bool = True,
        question: str | None = None,
    ) -> PostDraft:
        """Pick a question for the channel and create its post row (not yet sent).

        No question repeats in a channel until every question matching the filters has been
        posted there; then the least-posted come round again, but never the one posted last
        while there is another. A question a member asks for closes after ``quiz_window``
        unless ``closes_at`` says otherwise.

        A channel's first question asked for, with no kind named, is a multiple-choice one
        where the filters allow it: the README and the console's banner say "try /quiz, then
        /answer with a letter", and a first flashcard would refuse a letter.
        """
        try:
            difficulty, tags = parse_filters(difficulty, tags)
            kinds = parse_kinds(kinds)
        except ScheduleError as exc:  # its example is a schedule's: not for a quiz
            raise BadInput(f"{exc.field}: {exc.reason}.") from None
        workspace, channel = await self._channel(ctx)
        requester = None
        if requested:
            requester = (
                await self._directory.member(
                    workspace, ctx.member, ctx.member_name, self._clock.now()
                )
            ).id
            window = workspace.settings.window(self._quiz_window)  # /settings quiz-window
            if closes_at is None and window is not None:
                closes_at = self._clock.now() + window
        post = partial(
            self._posting.post_in,
            workspace,
            channel,
            pack=pack,
            difficulty=difficulty,
            tags=tags,
            closes_at=closes_at,
            requested_by=requester,
            question=question,
        )
        draft = None
        first = question is None and not kinds
        if requested and first and await self._posts.latest(channel.id) is None:
            with contextlib.suppress(NotFound):  # no multiple choice here: any kind will do
                draft = await post(kinds=FIRST_KINDS)
        if draft is None:
            draft = await post(kinds=kinds)
        assert draft is not None  # ad-hoc posts have no occurrence key to collide on
        if self._metrics is not None:
            self._metrics.posts.labels(origin="asked").inc()
        return draft

    # --- answering ---------------------------------------------------------------------------

    async def click(self, ctx: ChatContext, action: Action, post_id: int, value: str) -> Message:
        """A click on one of the bot's buttons (:func:`~bot.core.messages.parse_action`), the
        same on every platform: an answer, a card's back, a hint, or a private /review card's
        button (handed to :meth:`ReviewService.click`)."""
        if action is Action.REVIEW and self._review is not None:
            return (await self._review.click(ctx, post_id, value)).as_message()
        if action is Action.ANSWER:
            return await self.answer(ctx, post_id, value)
        if action is Action.SHOW:
            return await self.show_card(ctx, post_id)
        if action in (Action.TRY, Action.SOLVE, Action.TYPE):
            raise BadInput("That button opens an editor; this chat has none.")
        if action is Action.HINT and value.isdigit():
            return await self.hint(ctx, post_id, int(value))
        raise BadInput("That button is out of date; ask for a new question.")

    async def try_it(self, ctx: ChatContext, post_id: int | None, value: str) -> TryForm:
        """ "Try it": the question's snippet, or a choice's code, for an editable /run. Only
        once the member has answered or the question has closed: never before the answer.
        Without ``post_id``, the channel's newest question (as ``/answer`` and ``/hint``)."""
        if post_id is None:
            _, channel = await self._channel(ctx)
            newest = await self._posts.latest(channel.id)
            if newest is None:
                raise NotFound(
                    f"No question has been posted here yet. Ask for one with {ctx.command('quiz')}."
                )
            post = newest
        else:
            _, post = await self._post_in(ctx, post_id)
        item = (await self._catalogue.posted(post)).item
        code = replies.try_code(item, value)
        if code is None:
            raise BadInput("That question has no code to try.")
        if post.is_open and not await self._posts.answered_by(post.id, ctx.member):
            raise BadInput(
                "Answer first: Try it opens after your answer, or when the question closes, "
                "so it never gives the answer away."
            )
        what = "the snippet" if value == "code" else f"choice {value}"
        return TryForm(f"Try {what} of #{post.id}", code)

    def connect(self, gateway: object) -> None:
        """Each adapter hands itself here once: the post rules that read the chat (a round
        whose teams are roles) read it through this gateway."""
        for rules in self._rules:
            rules.connect(gateway)

    async def flushed(self) -> None:
        """Wait until every answer taken so far is committed (before shutdown)."""
        await self._answers.flushed()

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
        now = self._clock.now()
        if (problem := answer_problem(choice)) is not None:  # 100 kB, NUL: refused, kept out
            raise BadInput(problem)
        stored = await self._catalogue.posted(post)
        item = stored.item
        if isinstance(item, OpenPrompt):
            raise BadInput("This is a discussion prompt: it is not scored. Share your thoughts!")
        if isinstance(item, Exercise):
            raise BadInput(
                f"This is a coding exercise: solve it with {ctx.command('solve')} #{post.id}."
            )
        post = await self._posts.as_of(post, now)  # a window held open elsewhere
        if not post.is_open or (post.closes_at is not None and now >= post.closes_at):
            raise PostClosed(self._closed_text(post))
        picked, grade, accepted_as = await self._graded(ctx, post, item, choice, now)
        correct = grade is not srs.Grade.AGAIN
        tz = workspace.zone_at(now)
        base = workspace.settings.base_points(item.difficulty)
        member = self._member_id(ctx, workspace, now)
        for rules in self._rules:
            await rules.admit(ctx, post, member, now)
        scored = None
        for rules in self._rules:
            race = isinstance(item, TypedAnswer) and correct
            if (scored := await rules.points(post, base, now, member, race=race)) is not None:
                break
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
                self_graded=replies.self_graded(item),
                periods=period_keys(now, tz),
                question_id=stored.question_id,
                grade=grade,
                base_points=base,
                round_points=scored,
            )
        )
        if self._metrics is not None:
            self._metrics.answers.labels(status=outcome.status.value).inc()
        if outcome.status is AnswerStatus.CLOSED:
            raise PostClosed(self._closed_text(post))
        if outcome.status is AnswerStatus.DUPLICATE:
            raise AlreadyAnswered(
                f"You already answered this question ({outcome.choice}); only your first "
                "answer counts."
            )
        for rules in self._rules:
            await rules.after_answer(post, member, now)
        message = _feedback(stored, picked, correct, outcome.points, outcome.bonus, outcome.streak)
        if accepted_as is not None:
            message = replace(
                message, sections=(*message.sections, Section(body=f"Accepted as: {accepted_as}"))
            )
        if (news := freeze_news(outcome.before, outcome.streak)) is not None:
            message = replace(message, sections=(*message.sections, Section(body=news)))
        message = replace(message, buttons=replies.try_buttons(item, post.id))
        if outcome.card is not None:
            when = srs.due_in(outcome.card.due - now)
            message = replace(
                message,
                footer=f"Your next review of this card: in {when} ({ctx.command('review')}).",
            )
        for rules in self._rules:
            message = rules.answered(ctx, post, correct, message)
        return message

    async def _graded(
        self, ctx: ChatContext, post: Post, item: Item, choice: str, now: datetime
    ) -> tuple[str, srs.Grade, str | None]:
        """What is recorded for ``choice``: the text stored, its grade, and the form a typed
        answer was accepted as (None: as typed). A choice that is no answer here is refused."""
        if isinstance(item, TypedAnswer):
            graded = await self._typed.grade(ctx, post.id, item, choice, post.question_version_id)
            return graded.stored, srs.grade_for_choice(graded.correct), graded.accepted_as
        labels = replies.answer_labels(item)
        picked = choice.strip()
        picked = picked.upper() if len(picked) == 1 else picked.lower()
        correct_letter = replies.correct_letter(item)
        if correct_letter is None and (typed := srs.parse_grade(picked)) is not None:
            # A self-graded card: the member's own grade (knew/forgot too).
            return typed.word, typed, None
        if picked in labels and correct_letter is not None:
            return picked, srs.grade_for_choice(picked == correct_letter), None
        shown = clip(choice.strip().replace("`", "'"), 40)
        raise BadInput(f"`{shown}` is not an answer here; choose one of {', '.join(labels)}.")

    def _member_id(self, ctx: ChatContext, workspace: WorkspaceRow, now: datetime) -> MemberId:
        """The answering member's row id, looked up once and only if a rule asks."""
        found: list[int] = []

        async def member_id() -> int:
            if not found:
                member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
                found.append(member.id)
            return found[0]

        return member_id

    def _closed_text(self, post: Post) -> str:
        said = (rules.closed_text(post) for rules in self._rules)
        return next((text for text in said if text is not None), _CLOSED)

    async def show_card(self, ctx: ChatContext, post_id: int | None) -> Message:
        """The private back of a flashcard (or a self-graded practice answer).

        ``post_id=None`` means the channel's latest open question (the console's ``/show``).
        """
        post = await self._post_or_latest(ctx, post_id)
        stored = await self._catalogue.posted(post)
        if not replies.self_graded(stored.item):
            raise BadInput("This question is answered with its choice buttons.")
        return replies.card_back(stored.item, post.id)

    async def hint(self, ctx: ChatContext, post_id: int | None, index: int = 0) -> Message:
        post = (
            await self._latest_open(ctx)
            if post_id is None
            else (await self._post_in(ctx, post_id))[1]
        )
        stored = await self._catalogue.posted(post)
        message = replies.hint_message(stored.item, index, post.id)
        if self._rules:
            member = self._member_id(ctx, await self._workspace(ctx), self._clock.now())
            for rules in self._rules:
                message = await rules.hint_taken(post, member, message)
        return message

    # --- reveal ------------------------------------------------------------------------------

    async def reveal(self, ctx: ChatContext | None, post_id: int | None = None) -> PostEdit:
        """Close a post and show its answer. ``ctx=None`` is the scheduler closing it on time.

        Members may reveal a question they asked for; admins may reveal any.
        """
        if ctx is None:
            if post_id is None:
                raise ValueError("the scheduler must name the post it closes")
            post = await self._posts.get(post_id)
            if post is None:
                raise NotFound("That question no longer exists.")
        else:
            post = (
                await self._latest_open(ctx)
                if post_id is None
                else (await self._post_in(ctx, post_id))[1]
            )
            if not ctx.is_admin:
                member = await self._directory.member(
                    await self._workspace(ctx), ctx.member, ctx.member_name, self._clock.now()
                )
                if post.requested_by != member.id:
                    raise Forbidden(
                        "Only the member who asked for this question, or an admin, can reveal it."
                    )
        for rules in self._rules:
            await rules.closing([post.id])
        closed = await self._posts.close(post.id, self._clock.now())
        if closed is None:
            raise PostClosed("This question is already closed.")
        return await self._edit_for(closed)

    async def reveal_many(self, post_ids: Sequence[int]) -> list[PostEdit]:
        """``reveal(None, id)`` for many posts at once (the scheduler at 09:00): one
        transaction and one breakdown query. Posts already closed are left out."""
        for rules in self._rules:
            await rules.closing(post_ids)
        closed = await self._posts.close_many(post_ids, self._clock.now())
        counts = await self._posts.breakdowns([p.id for p in closed])
        return [await self._edit_for(post, counts[post.id]) for post in closed]

    async def _edit_for(self, post: Post, counts: Mapping[str, int] | None = None) -> PostEdit:
        stored = await self._catalogue.posted(post)
        if counts is None:
            counts = await self._posts.breakdown(post.id)
        channel = await self._directory.channel_by_id(post.channel_id)
        message = replies.reveal_message(post, stored.item, self._title(stored.pack), counts)
        byline = await self._posting.byline(stored.pack, stored.item.id, channel.workspace_id)
        if byline is not None:
            message = replace(message, byline=byline)
        for rules in self._rules:
            message = await rules.revealed(post, message)
        if self._graphs is not None and stored.item.show_graph:
            picture = await self._graphs.picture(stored.item)
            if picture is not None:
                message = replace(message, attachments=(*message.attachments, picture))
        return PostEdit(post, channel.external_id, post.platform_message_id, message)

    async def apply_edit(self, edit: PostEdit, gateway: ChatGateway) -> None:
        """Edit the posted question in place; a post that was never sent is re-posted."""
        if edit.message_id is None:
            await gateway.send_post(edit.channel, edit.message)
        else:
            await gateway.edit_post(edit.channel, edit.message_id, edit.message)


def _feedback(
    stored: StoredQuestion,
    picked: str,
    correct: bool,
    points: int,
    bonus: int,
    streak: StreakState,
) -> Message:
    streak_text = f"Streak: {streak.days} day{'s' if streak.days != 1 else ''}."
    if replies.self_graded(stored.item):
        if correct:
            text = f"Nice, you knew it! +{points} points"
        else:
            text = "Thanks for being honest: it will come round again. +0 points"
    elif correct:
        text = f"✅ Correct! +{points} points"
    elif isinstance(stored.item, TypedAnswer):
        text = "❌ Not quite. The answer is shown when the question closes"
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


_CLOSED = "This question has closed; answers are no longer accepted."
