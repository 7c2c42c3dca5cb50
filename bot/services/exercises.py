"""Coding exercises: the editor's starting code, a submission's verdict, and the scoring.

A submission is two sandbox runs on the same seeded inputs, side by side: the member's code,
and the reference solution in a jail of its own (cached per exercise and seed, and started as
soon as the member opens the editor, so it is usually ready by the time they submit). The
verdict is decided here, in the bot, by comparing the two runs' values
(:func:`bot.core.exercises.judge`).

Scoring: the question's points on the first submission that passes everything; when the post
closes, a member who tried and never solved it gets the share of the points their best
submission earned, and the card goes into their /review queue. After the close a member can
still submit, to practise; it scores nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from bot.core import srs
from bot.core.accommodations import own_close
from bot.core.clock import Clock
from bot.core.errors import BadInput, NotFound
from bot.core.exercises import verdict_message
from bot.core.messages import Message, Section, escape_markup
from bot.core.models import ChatContext, Post
from bot.core.scoring import period_keys
from bot.log import get_logger
from bot.questions.judge import (
    ExerciseBroken,
    exercise_spec,
    judge,
    member_seed,
    share_points,
)
from bot.questions.schema import Exercise
from bot.sandbox.exercise import ExerciseReport
from bot.sandbox.result import Outcome, RunResult
from bot.services.catalogue import Catalogue
from bot.services.future_cache import FutureCache
from bot.services.places import Places
from bot.services.post_rules import PostRules
from bot.services.runs import SnippetRuns
from bot.storage.accommodations import AccommodationStore
from bot.storage.answers import AnswerRequest, AnswerStatus, AnswerWriter
from bot.storage.directory import Directory, WorkspaceRow
from bot.storage.exercises import Attempt, AttemptCounts, ExerciseStore
from bot.storage.packs import StoredQuestion
from bot.storage.posts import PostStore

__all__ = ["Exercises", "SolveForm"]

log = get_logger(__name__)

_CACHED = 512  # reference runs kept (exercise x member seed)
#: Seconds a submission's run may take beyond the exercise's own limit (queue, start-up).
_MARGIN = 5.0


@dataclass(frozen=True, slots=True)
class SolveForm:
    """What an editor opens with: the post, the exercise's title line and the starter code."""

    post_id: int
    title: str
    starter: str
    entry: str


class Exercises(PostRules):
    # Set by the wiring: a member's extra time lengthens their time limit (None: nobody's).
    accommodations: AccommodationStore | None = None

    def __init__(
        self,
        *,
        places: Places,
        catalogue: Catalogue,
        posts: PostStore,
        directory: Directory,
        answers: AnswerWriter,
        store: ExerciseStore,
        runs: SnippetRuns,
        clock: Clock,
    ) -> None:
        self._places = places
        self._catalogue = catalogue
        self._posts = posts
        self._directory = directory
        self._answers = answers
        self._store = store
        self._runs = runs
        self._clock = clock
        # (question version, seed) -> the reference's run: a version's content never changes
        # (an edit makes a new version), so its id names exactly the code that ran.
        self._references: FutureCache[tuple[int, int], ExerciseReport] = FutureCache(_CACHED)

    # --- the post -----------------------------------------------------------------------

    async def _exercise(
        self, ctx: ChatContext, post_id: int | None
    ) -> tuple[Post, StoredQuestion, Exercise]:
        workspace, channel = await self._places.channel(ctx)
        if post_id is None:
            post = await self._posts.latest_open(channel.id)
            if post is None:
                raise NotFound(
                    "There is no open exercise in this channel; ask for one with "
                    f"{ctx.command('quiz')}, kind exercise."
                )
        else:
            post = await self._posts.get(post_id)
            if post is None or await self._places.channel_of(workspace, post) is None:
                raise NotFound("That question no longer exists.")
        post = await self._posts.as_of(post, self._clock.now())  # a window held open elsewhere
        stored = await self._catalogue.posted(post)
        if not isinstance(stored.item, Exercise):
            raise BadInput(f"Question #{post.id} is not an exercise: answer it with its buttons.")
        return post, stored, stored.item

    async def open_editor(self, ctx: ChatContext, post_id: int | None) -> SolveForm:
        """The editor's starting point; the reference run starts now, in the background."""
        self._runs.check()
        post, _, item = await self._exercise(ctx, post_id)
        workspace = await self._places.workspace(ctx)
        member = await self._directory.member(
            workspace, ctx.member, ctx.member_name, self._clock.now()
        )
        self._reference(
            post.question_version_id, item, member_seed(workspace.id, member.id, item.id)
        )
        return SolveForm(post.id, f"Solve #{post.id}: {item.entry}", item.starter, item.entry)

    # --- the reference --------------------------------------------------------------------

    def _reference(
        self, version_id: int, item: Exercise, seed: int
    ) -> asyncio.Future[ExerciseReport]:
        return self._references.get((version_id, seed), lambda: self._run_reference(item, seed))

    async def _run_reference(self, item: Exercise, seed: int) -> ExerciseReport:
        result = await self._runs.exercise_run(
            None, item.solution, exercise_spec(item, seed), item.time_limit + _MARGIN
        )
        if result.exercise is None:
            raise ExerciseBroken(f"the reference run ended {result.outcome.value}")
        return result.exercise

    # --- submitting -----------------------------------------------------------------------

    async def submit(self, ctx: ChatContext, post_id: int | None, code: str) -> Message:
        """Judge a member's solution; the reply is private. Scores as the module says."""
        post, stored, item = await self._exercise(ctx, post_id)
        if not code.strip():
            raise BadInput("There is no code to judge: paste your solution.")
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        seed = member_seed(workspace.id, member.id, item.id)
        reference = self._reference(post.question_version_id, item, seed)
        given = (
            None if self.accommodations is None else await self.accommodations.of_member(member.id)
        )
        factor = 1.0 if given is None else given.time_factor  # extra time: a longer limit
        limit = item.time_limit * factor
        if (longest := self._runs.longest) is not None:  # the sandbox's cap wins: say so
            limit = min(limit, max(longest - _MARGIN, 0.1))
        mine = await self._runs.exercise_run(ctx, code, exercise_spec(item, seed), limit + _MARGIN)
        try:
            verdict = judge(item, mine.exercise, await reference, _run_problem(mine, limit))
        except ExerciseBroken as exc:
            log.error("exercise %s is broken: %s", item.id, exc)
            return Message.note(
                "Sorry: this exercise's reference solution failed, so your code could not be "
                "judged. The pack's maintainers need to run `studybot questions check`."
            )
        is_open = post.is_open and (post.closes_at is None or now < post.closes_at)
        held = own_close(post, factor)  # held open for extra time: their own end of it
        is_open = is_open and (held is None or now < held)
        earlier = await self._store.best_of(post.id, member.id)
        await self._store.add(
            Attempt(
                post.id,
                member.id,
                now,
                verdict.passed,
                verdict.total,
                verdict.solved,
                verdict.forbidden,
                is_open,
                code,
                tuple(check.label for check in verdict.checks if not check.passed),
            )
        )
        summary = f"{verdict.passed} of {verdict.total} checks passed"
        if not is_open:
            mark = "✅ Solved: " if verdict.solved else ""
            headline = f"{mark}{summary}. The post has closed: practice, no points."
        elif earlier is not None and earlier.solved:
            headline = f"{summary}. You solved this one already; this try changes nothing."
        elif verdict.solved:
            headline = await self._solved(ctx, workspace, post, stored, summary, now)
        else:
            best = await self._store.best_of(post.id, member.id)
            points = workspace.settings.base_points(item.difficulty)
            worth = share_points(points, best.share) if best is not None else 0
            shown = f"{best.passed} of {best.total}" if best is not None else "none"
            headline = (
                f"{summary}. Your best so far: {shown}, worth {worth} of {points} points when "
                "the post closes, unless you solve it."
            )
        return verdict_message(
            item,
            verdict,
            headline=headline,
            stdout=mine.stdout,
            stderr=mine.stderr,
            warnings=mine.exercise.warnings if mine.exercise else (),
        )

    async def _solved(
        self,
        ctx: ChatContext,
        workspace: WorkspaceRow,
        post: Post,
        stored: StoredQuestion,
        summary: str,
        now: datetime,
    ) -> str:
        points = workspace.settings.base_points(stored.item.difficulty)
        outcome = await self._answers.submit(
            _request(workspace, post, stored, now, points, ctx.member, ctx.member_name, True)
        )
        if outcome.status is not AnswerStatus.RECORDED:
            return f"✅ Solved: {summary}. Already scored for this exercise."
        bonus = f" (+{outcome.bonus} streak bonus)" if outcome.bonus else ""
        return f"✅ Solved: {summary}. +{outcome.points} points{bonus}."

    async def closing(self, post_ids: Sequence[int]) -> None:
        """As a kind of post (:class:`PostRules`): settle before the quiz closes them."""
        await self.settle(post_ids)

    async def settle(self, post_ids: Sequence[int]) -> None:
        """Before posts close: each member who tried an exercise among them and never solved it
        gets their best submission's share of the points, and the card is due for review."""
        now = self._clock.now()
        for post_id in post_ids:
            post = await self._posts.get(post_id)
            if post is None or not post.is_open:
                continue
            stored = await self._catalogue.posted(post)
            if not isinstance(stored.item, Exercise):
                continue
            channel = await self._directory.channel_by_id(post.channel_id)
            workspace = await self._directory.workspace_by_id(channel.workspace_id)
            points = workspace.settings.base_points(stored.item.difficulty)
            for best in await self._store.best(post_id):
                if best.solved:
                    continue
                worth = share_points(points, best.share)
                request = _request(
                    workspace, post, stored, now, worth, best.external_id, best.name, False
                )
                await self._answers.submit(request)

    async def solutions(self, ctx: ChatContext, post_id: int | None) -> Message:
        """``/solutions [#ID]``: the reference solution and the shortest passing solutions of
        members who share theirs; once the caller solved it, or the post has closed."""
        post, _, item = await self._exercise(ctx, post_id)
        workspace = await self._places.workspace(ctx)
        member = await self._directory.member(
            workspace, ctx.member, ctx.member_name, self._clock.now()
        )
        best = await self._store.best_of(post.id, member.id)
        solved = best is not None and best.solved
        if post.is_open and not solved:
            raise BadInput(
                f"Solutions open once you solve #{post.id} or when it closes: no spoilers."
            )
        sections = [Section(heading="The reference solution", code=item.solution)]
        for name, code in await self._store.shared_solutions(post.id):
            size = len(code.strip())
            heading = f"{escape_markup(name)} ({size:,} characters)"
            sections.append(Section(heading=heading, code=code.rstrip()))
        footer = (
            "Members' solutions are shown when they agree: "
            f"{ctx.command('settings share-solutions on')}."
        )
        return Message(
            title=f"💡 Solutions to #{post.id}: {item.entry}",
            sections=tuple(sections),
            footer=footer,
            ephemeral=True,
        )

    async def counts(self, member_id: int) -> AttemptCounts:
        return await self._store.counts(member_id)


def _request(
    workspace: WorkspaceRow,
    post: Post,
    stored: StoredQuestion,
    now: datetime,
    points: int,
    member: str,
    name: str,
    solved: bool,
) -> AnswerRequest:
    """The one answer row an exercise leaves per member: solved (its points, the card good)
    or tried (a share of them, the card due again)."""
    tz = workspace.zone_at(now)
    return AnswerRequest(
        post_id=post.id,
        workspace_id=workspace.id,
        member_external=member,
        member_name=name,
        choice="solved" if solved else "tried",
        correct=solved,
        answered_at=now,
        local_day=now.astimezone(tz).date(),
        difficulty=stored.item.difficulty.value,
        self_graded=False,
        periods=period_keys(now, tz),
        question_id=stored.question_id,
        grade=srs.Grade.GOOD if solved else srs.Grade.AGAIN,
        exercise_points=points,
    )


def _run_problem(result: RunResult, limit: float) -> str | None:
    if result.outcome is Outcome.TIMEOUT:
        return f"your code ran past this exercise's {limit:g} s limit"
    if result.outcome is Outcome.MEMORY_LIMIT:
        return "your code ran out of memory"
    if result.exercise is None:
        return "your code ended the run before every check had run (no verdict)"
    return None
