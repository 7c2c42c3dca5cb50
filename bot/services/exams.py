"""``/exam``: the exam date a group works toward, its countdown and each member's readiness.

Admins set the date (``/exam set 2027-01-15 --tag autograd --tag hooks [--channel]``) for the
workspace or one channel; everyone sees it with ``/exam``, on ``/stats`` and in the weekly
recap. Readiness is FSRS's prediction of each card's recall on the exam day (at
:data:`EXAM_HOUR` local), per tag: the member's own in chat, the group's by tag for admins on
the web page. The rules (dates, countdown, how daily questions lean toward the exam's tags)
are :mod:`bot.core.exams`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from bot.core import srs
from bot.core.clock import Clock
from bot.core.errors import BadInput, Forbidden, NotFound
from bot.core.exams import Exam, exam_weight, parse_exam_date
from bot.core.messages import Message, Section, escape_markup
from bot.core.models import ChatContext
from bot.core.requests import ExamClear, ExamPrep, ExamRequest, ExamSet
from bot.services.audit import AuditLog, audited
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.storage.directory import Directory, WorkspaceRow
from bot.storage.exams import ExamStore
from bot.storage.group_mastery import GroupMasteryStore, TagRecall
from bot.storage.packs import Candidate
from bot.storage.reviews import ReviewStore

__all__ = ["EXAM_HOUR", "ExamReadiness", "Exams", "GroupReadiness", "PrepCard", "TagReadiness"]

#: Readiness is the predicted recall at this local hour of the exam day (a morning exam).
EXAM_HOUR = time(9, 0)


@dataclass(frozen=True, slots=True)
class TagReadiness:
    """One tag's cards and their mean predicted recall on the exam day."""

    tag: str
    cards: int
    recall: float | None  # None: no card of the tag reviewed yet


@dataclass(frozen=True, slots=True)
class ExamReadiness:
    exam: Exam
    tags: list[TagReadiness]
    below: int  # cards predicted under the desired retention on the day
    desired: float


@dataclass(frozen=True, slots=True)
class GroupReadiness:
    """The admins' view: the workspace's exam, its line, and the group's mean predicted
    recall per tag on its day (weakest first), against the desired retention."""

    exam: Exam
    line: str
    tags: list[TagRecall]
    desired: float


@dataclass(frozen=True, slots=True)
class PrepCard:
    """A card exam prep brings forward: not due yet, but predicted under the desired retention
    on the exam day (``recall``)."""

    question_id: int
    version_id: int
    recall: float


class Exams:
    audit: AuditLog | None = None  # set by build_services: setting a date is recorded

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        catalogue: Catalogue,
        store: ExamStore,
        reviews: ReviewStore,
        mastery: GroupMasteryStore,
        clock: Clock,
    ) -> None:
        self._places = places
        self._directory = directory
        self._catalogue = catalogue
        self._store = store
        self._reviews = reviews
        self._mastery = mastery
        self._clock = clock

    def _today(self, workspace: WorkspaceRow) -> date:
        now = self._clock.now()
        return now.astimezone(workspace.zone_at(now)).date()

    def _moment(self, workspace: WorkspaceRow, exam: Exam) -> datetime:
        tz = workspace.zone_at(self._clock.now())
        return datetime.combine(exam.on, EXAM_HOUR, tzinfo=tz)

    async def command(self, ctx: ChatContext, request: ExamRequest) -> Message:
        if isinstance(request, ExamSet):
            return await self.set(ctx, request)
        if isinstance(request, ExamClear):
            return await self.clear(ctx, request)
        if isinstance(request, ExamPrep):
            return await self.prep(ctx, request)
        return await self.show(ctx)

    async def ahead(self, workspace: WorkspaceRow, channel_id: int | None) -> Exam | None:
        """The exam ``channel_id`` works toward (its own, else the workspace's), if any."""
        return await self._store.ahead(workspace.id, channel_id, self._today(workspace))

    async def countdown_line(self, workspace: WorkspaceRow, channel_id: int | None) -> str | None:
        """``📅 Exam on Fri 15 Jan 2027, in 39 days (autograd)`` for /stats and the recap."""
        exam = await self.ahead(workspace, channel_id)
        return None if exam is None else f"📅 {exam.describe(self._today(workspace))}"

    @audited("exam set")
    async def set(self, ctx: ChatContext, request: ExamSet) -> Message:
        """Admins: the exam date for the workspace, or this channel (``--channel``)."""
        if not ctx.is_admin:
            raise Forbidden("Only admins set the exam date; `exam` shows it.")
        workspace, channel = await self._places.channel(ctx)
        day = parse_exam_date(request.date, self._today(workspace))
        tags = tuple(dict.fromkeys(t.strip().lower() for t in request.tags if t.strip()))
        unknown = [t for t in tags if t not in self._catalogue.tags()]
        if unknown:
            raise BadInput(
                f"No question has the tag {', '.join(f'`{t}`' for t in unknown)}. Tags: "
                f"{', '.join(self._catalogue.tags()) or 'none yet'}."
            )
        exam = Exam(day, tags, channel.id if request.channel else None, ctx.member_name)
        replaced = await self._store.set(workspace.id, exam, self._clock.now())
        where = f"#{channel.name or channel.external_id}" if request.channel else "everyone here"
        was = "" if replaced is None else f" (it was {replaced.on})"
        return Message(
            title=f"📅 {exam.describe(self._today(workspace))}",
            sections=(
                Section(
                    body=f"Set for {where}{was}. Daily questions lean toward "
                    f"{'its tags' if tags else 'the exam'} from four weeks out; "
                    f"{ctx.command('exam')} shows the countdown and your readiness."
                ),
            ),
        )

    @audited("exam clear")
    async def clear(self, ctx: ChatContext, request: ExamClear) -> Message:
        if not ctx.is_admin:
            raise Forbidden("Only admins clear the exam date.")
        workspace, channel = await self._places.channel(ctx)
        if not await self._store.clear(workspace.id, channel.id if request.channel else None):
            raise NotFound("There is no exam date to clear here.")
        return Message.note("📅 The exam date is cleared: everything is back to normal.")

    async def show(self, ctx: ChatContext) -> Message:
        """Everyone: the countdown, and the caller's readiness per tag."""
        workspace, channel = await self._places.channel(ctx)
        exam = await self.ahead(workspace, channel.id)
        if exam is None:
            example = self._today(workspace) + timedelta(days=30)
            return Message.note(
                "No exam date is set here. An admin sets one with "
                f"{ctx.command(f'exam set {example} --tag autograd')}."
            )
        member = await self._directory.member(
            workspace, ctx.member, ctx.member_name, self._clock.now()
        )
        ready = await self.readiness(workspace, member.id, exam)
        lines = []
        for tag in ready.tags:
            name = escape_markup(tag.tag or "(untagged)")
            if tag.recall is None:
                lines.append(f"• {name}: not studied yet")
            else:
                lines.append(
                    f"• {name}: {round(100 * tag.recall)}% predicted on the day "
                    f"({tag.cards} card{'s' if tag.cards != 1 else ''})"
                )
        target = round(100 * ready.desired)
        if not any(tag.cards for tag in ready.tags):
            advice = (
                f"You have no reviewed cards on the exam yet: {ctx.command('review')} starts "
                "them, and answering its questions here adds them."
            )
        elif ready.below:
            advice = (
                f"{ready.below} card{'s are' if ready.below != 1 else ' is'} predicted under "
                f"{target}% on the day: {ctx.command('review')} keeps them up."
            )
        else:
            advice = f"Every card you have on it is predicted at {target}% or more on the day."
        if exam.channel_id is not None:  # prep follows the workspace's exam, not this one
            advice += " Exam prep reviews follow the workspace's exam date, not this channel's."
        elif await self._store.prepping(member.id):
            advice += (
                f" Exam prep is on: once your due cards are done, {ctx.command('review')} "
                "brings those forward."
            )
        else:
            advice += f" {ctx.command('exam prep on')} brings them forward in your reviews."
        return Message(
            title=f"📅 {exam.describe(self._today(workspace))}",
            sections=(
                Section(heading="Your readiness", body="\n".join(lines) or "No cards yet."),
                Section(body=advice),
            ),
            footer="FSRS's prediction of your recall on the exam day, from your reviews so far.",
            ephemeral=True,
        )

    async def prep(self, ctx: ChatContext, request: ExamPrep) -> Message:
        """A member opts into (or out of) reviews aimed at the exam day (private)."""
        workspace = await self._places.workspace(ctx)
        now = self._clock.now()
        member = await self._directory.member(workspace, ctx.member, ctx.member_name, now)
        changed = await self._store.set_prep(member.id, request.on, now)
        review = ctx.command("review")
        if not request.on:
            already = "" if changed else " (it was off already)"
            return Message.note(f"📅 Exam prep is off{already}: {review} serves your due cards.")
        target = round(100 * (await self._reviews.settings(workspace.id)).desired_retention)
        exam = await self.ahead(workspace, None)
        when = (
            f"on the day of the exam ({exam.on})"
            if exam is not None
            else "on the exam day, once an admin sets one"
        )
        already = " (it was on already)" if not changed else ""
        return Message.note(
            f"📅 Exam prep is on{already}. Once your due cards are done, {review} brings "
            f"forward the exam's cards that FSRS predicts under {target}% {when}, weakest "
            "first: each at most once a day, and a prep review never changes a card's "
            f"schedule. {ctx.command('exam prep off')} stops it; after the exam it stops "
            "by itself."
        )

    async def prep_queue(
        self, workspace: WorkspaceRow, member_id: int, now: datetime
    ) -> list[PrepCard]:
        """The cards exam prep brings forward for an opted-in member now, weakest first: of
        the workspace's exam's tags, not due yet (the due ones are served anyway), predicted
        under the desired retention on the exam day, not prepped today. Empty without an
        exam ahead, so everything returns to normal after the day."""
        if not await self._store.prepping(member_id):
            return []
        return await self._prep_cards(workspace, member_id, now)

    async def _prep_cards(
        self, workspace: WorkspaceRow, member_id: int, now: datetime
    ) -> list[PrepCard]:
        """:meth:`prep_queue` for a member known to have opted in."""
        exam = await self.ahead(workspace, None)
        if exam is None:
            return []
        settings = await self._reviews.settings(workspace.id)
        moment = self._moment(workspace, exam)
        found = []
        for question_id, version_id, tags, card in await self._reviews.prep_cards(
            workspace.id, member_id, self._today(workspace)
        ):
            if card.due <= now or not exam.covers(tags):
                continue
            recall = srs.retrievability(card, moment, settings)
            if recall < settings.desired_retention:
                found.append(PrepCard(question_id, version_id, recall))
        return sorted(found, key=lambda p: (p.recall, p.question_id))

    async def prep_review(
        self, workspace: WorkspaceRow, member_id: int, question_id: int, now: datetime
    ) -> bool:
        """Whether a review of ``question_id`` now is exam prep, which must leave the card's
        FSRS state alone: a card prep brings forward (marked prepped today, so it is not
        served again before tomorrow), or one prepped today already (a second click on its
        buttons is the same prep review, not a real review of a card not due)."""
        if not await self._store.prepping(member_id):  # most members: one read, and done
            return False
        today = self._today(workspace)
        for card in await self._prep_cards(workspace, member_id, now):
            if card.question_id == question_id:
                await self._reviews.prep_done(member_id, question_id, today)
                return True
        state = await self._reviews.card(member_id, question_id)
        if state is None or state.due <= now:  # due now: a real review
            return False
        return await self._reviews.prepped_on(member_id, question_id) == today

    async def readiness(self, workspace: WorkspaceRow, member_id: int, exam: Exam) -> ExamReadiness:
        """A member's predicted recall on the exam day per tag of the exam (every tag of
        theirs, when the exam names none), from their cards' FSRS states."""
        settings = await self._reviews.settings(workspace.id)
        moment = self._moment(workspace, exam)
        by_tag = await self._reviews.cards_by_tag(workspace.id, member_id)
        found = {t.tag: t.cards for t in by_tag}
        wanted = list(exam.tags) or sorted(found)
        tags, below = [], 0
        seen: set[int] = set()  # a card of two exam tags is one card (the same object in both)
        for tag in wanted:
            cards = [c for c in found.get(tag, ()) if c.last_review is not None]
            if not cards:
                tags.append(TagReadiness(tag, 0, None))
                continue
            recalls = [srs.retrievability(c, moment, settings) for c in cards]
            tags.append(TagReadiness(tag, len(cards), sum(recalls) / len(recalls)))
            for card, recall in zip(cards, recalls, strict=True):
                if id(card) not in seen and recall < settings.desired_retention:
                    below += 1
                seen.add(id(card))
        return ExamReadiness(exam, tags, below, settings.desired_retention)

    async def lean(
        self,
        workspace: WorkspaceRow,
        channel_id: int,
        draw: str,
        candidates: Sequence[Candidate],
    ) -> list[Candidate] | None:
        """The candidates of one scheduled question narrowed to the exam's questions, when
        this occurrence leans toward the exam; None when it does not (no exam ahead, too far
        off, the draw says the rest of the course, or no candidate is on the exam).

        ``draw`` names the occurrence (schedule and time): the lean is a seeded draw from it,
        so every process, and a retry, decides the same. The share rises to
        :data:`~bot.core.exams.MOST_WEIGHT` on the day (:func:`~bot.core.exams.exam_weight`).
        """
        exam = await self.ahead(workspace, channel_id)
        if exam is None:
            return None
        weight = exam_weight(exam.days_left(self._today(workspace)))
        if weight <= 0 or random.Random(draw).random() >= weight:
            return None
        chosen = [
            c
            for c in candidates
            if exam.covers((await self._catalogue.question(c.version_id)).item.tags)
        ]
        return chosen or None

    async def group_readiness(self, ctx: ChatContext) -> GroupReadiness | None:
        """Admins: the workspace's exam and the group's mean predicted recall per tag on its
        day (set-based over every member's cards), with the desired retention."""
        if not ctx.is_admin:
            raise Forbidden("Only admins see the group's readiness; `exam` shows yours.")
        workspace = await self._places.workspace(ctx)
        return await self.workspace_readiness(workspace)

    async def workspace_readiness(self, workspace: WorkspaceRow) -> GroupReadiness | None:
        exam = await self.ahead(workspace, None)
        if exam is None:
            return None
        settings = await self._reviews.settings(workspace.id)
        recall = await self._mastery.cards(workspace.id, self._moment(workspace, exam), settings)
        if exam.tags:
            recall = [r for r in recall if r.tag in exam.tags]
        return GroupReadiness(
            exam,
            exam.describe(self._today(workspace)),
            sorted(recall, key=lambda r: r.mean),
            settings.desired_retention,
        )
