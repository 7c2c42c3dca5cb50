"""/review: a member's own due cards, one at a time, privately (spaced repetition, FSRS).

Every graded answer anywhere (a posted question, a flashcard) already reviewed the member's
card for that question (``storage.answers`` records it in the answer's commit); here the
member works through the cards that are due now. A round serves at most
:data:`ROUND_SIZE` cards, then says "N reviewed, next due in X" and offers more if more are due.

Buttons carry everything a click needs (question id, the round's count, the card's review
count), so they survive restarts; the card's count makes a second click on the same button
a no-op instead of a second review.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from bot.core import replies, srs
from bot.core.choice_order import fewer, review_seed
from bot.core.clock import Clock
from bot.core.errors import BadInput
from bot.core.messages import Attachment, Message, Section
from bot.core.models import ChatContext
from bot.core.srs import CardState
from bot.questions.anki_export import apkg_bytes
from bot.questions.schema import TypedAnswer
from bot.questions.typed import answer_problem, normalise
from bot.services.catalogue import Catalogue
from bot.services.places import Places
from bot.services.reminders import Reminders
from bot.services.typed_answers import TypedAnswers
from bot.storage.accommodations import AccommodationStore
from bot.storage.directory import Directory, MemberRow, WorkspaceRow
from bot.storage.packs import StoredQuestion
from bot.storage.reviews import DueCard, ReviewItem, ReviewStore

if TYPE_CHECKING:  # the wiring sets it; only its type is named here
    from bot.services.exams import Exams, PrepCard

__all__ = ["ROUND_SIZE", "ReviewService", "ReviewTurn"]

ROUND_SIZE = 10
_PREPPED = "📅 Exam prep review: the card's schedule is unchanged."


_KEPT = 10_000  # typed cards served and not yet answered, remembered at most


def typed_grade(right: bool, *, slip: bool, seconds: float | None) -> srs.Grade:
    """A typed review's FSRS grade: a miss is again; a slip (accepted with a typo) or more
    than a minute is hard; an exact answer within 10 s is
    easy; otherwise good. An unknown time (a restart in between) counts as good."""
    if not right:
        return srs.Grade.AGAIN
    if slip or (seconds is not None and seconds > 60):
        return srs.Grade.HARD
    if seconds is not None and seconds <= 10:
        return srs.Grade.EASY
    return srs.Grade.GOOD


@dataclass(frozen=True, slots=True)
class ReviewTurn:
    """What /review shows next: a card (``question_id`` set) or the round's summary."""

    message: Message
    question_id: str | None = None  # the item's id in its pack, for a served card
    key: int | None = None  # questions.id of the served card (what its buttons carry)
    due: int = 0  # cards due now, the served one included
    reviewed: int = 0  # graded so far in this round
    card_reviews: int = 0  # the served card's review count (for its buttons)
    feedback: Message | None = None  # how the card just graded went, shown before this

    def as_message(self) -> Message:
        """One private message: the feedback (if any), then the next card or the summary
        (what a chat platform shows in place of the card just graded)."""
        if self.feedback is None:
            return self.message.private()
        return replace(
            self.message,
            sections=self.feedback.sections + self.message.sections,
            buttons=self.feedback.buttons + self.message.buttons,  # a typed grade's "Make it …"
            ephemeral=True,
        )


class ReviewService:
    """Serves and grades a member's due cards in the caller's workspace."""

    # Set by build_services: a member given fewer choices sees one wrong choice removed.
    accommodations: AccommodationStore | None = None
    # Set by build_services: exam prep brings cards forward once the due ones are done.
    exams: Exams | None = None

    def __init__(
        self,
        *,
        places: Places,
        directory: Directory,
        catalogue: Catalogue,
        reviews: ReviewStore,
        clock: Clock,
        reminders: Reminders | None = None,
        scored: Callable[[Sequence[tuple[int, int]]], None] | None = None,
        typed: TypedAnswers | None = None,
    ) -> None:
        self._typed = typed or TypedAnswers()  # grades typed cards, with their free tries
        self._scored = scored  # told of each review done (role rewards count reviews)
        self._reminders = reminders  # a reminder that turned itself off is mentioned once
        self._places = places
        self._directory = directory
        self._catalogue = catalogue
        self._reviews = reviews
        self._clock = clock
        # Typed cards: when each was served (the time taken grades it), and the state before
        # a typed grade, kept for its one override. (The free "almost"s are TypedAnswers'.)
        self._served: dict[tuple[int, int], datetime] = {}
        self._before: dict[tuple[int, int], tuple[CardState | None, int]] = {}

    async def _who(self, ctx: ChatContext) -> tuple[WorkspaceRow, MemberRow]:
        workspace = await self._places.workspace(ctx)
        member = await self._directory.member(
            workspace, ctx.member, ctx.member_name, self._clock.now()
        )
        return workspace, member

    async def next(self, ctx: ChatContext, reviewed: int = 0) -> ReviewTurn:
        """The member's most overdue card, or the summary when the round is over.

        A review reminder that turned itself off (DMs closed) is mentioned first, once."""
        workspace, member = await self._who(ctx)
        turn = await self._turn(ctx, workspace, member, reviewed)
        notice = None if self._reminders is None else await self._reminders.notice(ctx)
        return turn if notice is None else replace(turn, feedback=notice)

    async def _turn(
        self,
        ctx: ChatContext,
        workspace: WorkspaceRow,
        member: MemberRow,
        reviewed: int,
        *,
        feedback: Message | None = None,
        stale: bool = False,
    ) -> ReviewTurn:
        now = self._clock.now()
        due = await self._reviews.due_count(workspace.id, member.id, now)
        prep: list[PrepCard] = []
        if due == 0 and reviewed < ROUND_SIZE and self.exams is not None:
            prep = await self.exams.prep_queue(workspace, member.id, now)
        if (due == 0 and not prep) or reviewed >= ROUND_SIZE:
            upcoming = await self._reviews.next_due(workspace.id, member.id, now)
            next_in = None if upcoming is None else srs.due_in(upcoming - now)
            summary = replies.review_summary(
                reviewed, next_in, more=due, command=ctx.command("review"), stale=stale
            )
            return ReviewTurn(summary, due=due, reviewed=reviewed, feedback=feedback)
        first: DueCard | PrepCard = (
            prep[0] if prep else (await self._reviews.due(workspace.id, member.id, now, limit=1))[0]
        )
        card = await self._reviews.card(member.id, first.question_id)
        count = card.reviews if card else 0
        seed = review_seed(member.id, first.question_id, count)
        stored = await self._reduced(
            member.id, seed, await self._catalogue.as_shown(first.version_id, seed)
        )
        if isinstance(stored.item, TypedAnswer):
            if len(self._served) > _KEPT:
                self._served.clear()
            self._served[(member.id, first.question_id)] = self._clock.now()
        message = replies.review_card(
            stored.item,
            first.question_id,
            self._catalogue.title(stored.pack),
            due=due,
            reviewed=reviewed,
            card_reviews=count,
            prep=len(prep),
        )
        if prep:
            note = (
                f"📅 Exam prep: brought forward, {round(100 * prep[0].recall)}% predicted on the "
                "exam day. This review leaves its schedule as it is."
            )
            message = replace(
                message, footer=f"{message.footer} · {note}" if message.footer else note
            )
        return ReviewTurn(
            message,
            question_id=stored.item.id,
            key=first.question_id,
            due=due or len(prep),
            reviewed=reviewed,
            card_reviews=count,
            feedback=feedback,
        )

    async def export(self, ctx: ChatContext) -> Message:
        """``/review export``: the member's own review cards as an Anki deck (``.apkg``), in a
        private message with the file attached; the adapters only deliver it.

        The deck's ids come from the workspace and the member, so importing a later export
        into Anki updates the deck there instead of adding a second copy of each card."""
        workspace, member = await self._who(ctx)
        versions = await self._reviews.card_versions(workspace.id, member.id)
        if not versions:
            return Message.note(
                "You have no review cards yet: every question you answer becomes one. "
                f"Answer a few (try {ctx.command('quiz')}), then export again."
            )
        items = [(await self._catalogue.question(version)).item for version in versions]
        key = f"review:{ctx.platform}:{ctx.workspace}:{member.external_id}"
        name = f"studybot review: {member.display_name}"
        data = await asyncio.to_thread(apkg_bytes, key, name, items)
        slug = re.sub(r"[^a-z0-9]+", "-", member.display_name.lower()).strip("-") or "member"
        return Message(
            title="Your review cards",
            sections=(
                Section(
                    body=f"{len(items)} card(s) as an Anki deck. In Anki: File > Import, and "
                    "pick this file; importing a newer export updates the same deck."
                ),
            ),
            attachments=(
                Attachment(
                    f"studybot-review-{slug}.apkg",
                    data,
                    f"{len(items)} review card(s) for Anki",
                ),
            ),
            ephemeral=True,
        )

    async def _question(self, key: int, seed: int | None = None) -> StoredQuestion:
        """The card's question; with ``seed``, its choices in the order the card showed."""
        version = await self._reviews.current_version(key)
        if version is None:
            raise BadInput("That card's question is no longer in any pack.")
        return await self._catalogue.as_shown(version, seed)

    async def _as_shown(
        self, member_id: int, key: int, card_reviews: int | None, card: CardState | None = None
    ) -> StoredQuestion:
        """The card's question with its choices in the order the member was shown them: the
        order for the card's review count when served (``card_reviews``, from its buttons),
        or, without it (the console), for the card as it stands (``card``, read here if not
        given)."""
        if card_reviews is None:  # the console: the card as it stands, as /review showed it
            if card is None:
                card = await self._reviews.card(member_id, key)
            shown_at = card.reviews if card else 0
        else:
            shown_at = card_reviews
        seed = review_seed(member_id, key, shown_at)
        return await self._reduced(member_id, seed, await self._question(key, seed))

    async def _reduced(self, member_id: int, seed: int, stored: StoredQuestion) -> StoredQuestion:
        """The card as an accommodated member sees it: one wrong choice removed when an
        admin gave them fewer choices (the same one when it is shown and when it is graded:
        drawn from the card's seed)."""
        if self.accommodations is None:
            return stored
        own = await self.accommodations.of_member(member_id)
        if own is None or not own.fewer_choices:
            return stored
        return replace(stored, item=fewer(stored.item, seed))

    async def click(self, ctx: ChatContext, key: int, value: str) -> ReviewTurn:
        """A /review button: ``show`` the back, ``more`` for another round, or a grade."""
        parsed = replies.parse_review_value(value)
        if parsed is None:
            raise BadInput("That button is not one of mine.")
        what, reviewed, card_reviews = parsed
        if what == "more":
            return await self.next(ctx, 0)
        if what == replies.TYPE_IT:
            raise BadInput("That button opens a text box; this chat has none: type the answer.")
        if what.startswith(replies.OVERRIDE) and what[1:].isdigit() and 1 <= int(what[1:]) <= 4:
            message = await self.override(ctx, key, srs.Grade(int(what[1:])))
            return ReviewTurn(message)
        if what == "show":
            stored = await self._question(key)
            if not replies.shows_back(stored.item):
                raise BadInput("This card is answered with its choice buttons.")
            back = replies.review_back(
                stored.item, key, reviewed=reviewed, card_reviews=card_reviews
            )
            return ReviewTurn(
                back,
                question_id=stored.item.id,
                key=key,
                reviewed=reviewed,
                card_reviews=card_reviews,
            )
        return await self.grade(ctx, key, what, reviewed=reviewed, card_reviews=card_reviews)

    async def answer_typed(
        self,
        ctx: ChatContext,
        key: int,
        text: str,
        *,
        reviewed: int,
        card_reviews: int | None = None,
    ) -> ReviewTurn:
        """A typed card answered: graded from the answer and the time taken (a slip or a slow
        answer is hard, a quick exact one easy, a miss again), then the next card. "Almost"
        and an unreadable number cost nothing, as on a post. The grade may be changed once
        (:meth:`override`)."""
        if (problem := answer_problem(text)) is not None:
            raise BadInput(problem)
        workspace, member = await self._who(ctx)
        before = await self._reviews.card(member.id, key)
        item = (await self._as_shown(member.id, key, card_reviews, before)).item
        if not isinstance(item, TypedAnswer):
            raise BadInput("This card is answered with its buttons, not typed.")
        # A value key is evaluated in the jail (its refusals cost nothing); "almost" and an
        # unreadable number are free tries, counted under -key (a post's id is positive).
        version = await self._reviews.current_version(key) if item.value is not None else 0
        graded = await self._typed.grade(
            ctx, -key, item, text, version or 0, unreadable_misses=True
        )
        now = self._clock.now()
        served = self._served.pop((member.id, key), None)
        taken = (now - served).total_seconds() if served is not None else None
        said = normalise(text).replace(" ", "")  # a typo, not a synonym or another spacing
        slip = item.number is None and all(
            said != normalise(a).replace(" ", "") for a in item.accept
        )
        grade = typed_grade(graded.correct, slip=slip, seconds=taken)
        card, prepped = await self._record(
            workspace, ReviewItem(workspace.id, member.id, key, grade, now), card_reviews
        )
        if card is None:
            return await self._turn(ctx, workspace, member, reviewed, stale=True)
        if not prepped:  # a prep review changed nothing, so there is no grade to change
            self._before[(member.id, key)] = (before, card.reviews)
            if self._scored is not None:
                self._scored([(workspace.id, member.id)])
        feedback = replies.typed_review_feedback(
            item,
            text,
            grade,
            srs.due_in(card.due - now),
            key,
            right=graded.correct,
            reviewed=reviewed + 1,
            card_reviews=card.reviews,
        )
        if prepped:
            feedback = replace(feedback, footer=_PREPPED)
        return await self._turn(ctx, workspace, member, reviewed + 1, feedback=feedback)

    async def _record(
        self, workspace: WorkspaceRow, item: ReviewItem, expected_reviews: int | None
    ) -> tuple[CardState | None, bool]:
        """Record a review: FSRS's next state, or, for a card exam prep brought forward, only
        that it was prepped today (its FSRS state and history stay as they were, as in Anki's
        filtered decks with rescheduling off). ``(card, prepped)``; card None: stale."""
        if self.exams is not None and await self.exams.prep_review(
            workspace, item.member_id, item.question_id, item.reviewed_at
        ):
            return await self._reviews.card(item.member_id, item.question_id), True
        card = await self._reviews.record(item, expected_reviews=expected_reviews)
        return card, False

    async def override(self, ctx: ChatContext, key: int, grade: srs.Grade) -> Message:
        """Change the grade a typed review was given, once, as Anki lets you."""
        workspace, member = await self._who(ctx)
        kept = self._before.pop((member.id, key), None)
        if kept is None:
            raise BadInput("A typed review's grade can be changed once, right after it.")
        before, reviews = kept
        now = self._clock.now()
        item = ReviewItem(workspace.id, member.id, key, grade, now)
        card = await self._reviews.amend_last(item, before, expected_reviews=reviews)
        if card is None:
            raise BadInput("That card has been reviewed again since; its grade stays.")
        return Message.note(
            f"Changed to **{grade.word}**: next review of this card in "
            f"{srs.due_in(card.due - now)}."
        )

    async def grade(
        self,
        ctx: ChatContext,
        key: int,
        typed: str,
        *,
        reviewed: int,
        card_reviews: int | None = None,
    ) -> ReviewTurn:
        """Grade one card (a choice letter, or again/hard/good/easy/knew/forgot) and serve
        the next. ``card_reviews`` None: whatever card state there is (the console)."""
        workspace, member = await self._who(ctx)
        item = (await self._as_shown(member.id, key, card_reviews)).item
        letter = replies.correct_letter(item)
        picked = typed.strip()
        if letter is None:
            grade = srs.parse_grade(picked)
            if grade is None:
                raise BadInput(f"`{typed}` is not a grade; use again, hard, good or easy.")
            picked = grade.word
        else:
            picked = picked.upper()
            labels = replies.answer_labels(item)
            if picked not in labels:
                raise BadInput(
                    f"`{typed}` is not an answer here; choose one of {', '.join(labels)}."
                )
            grade = srs.grade_for_choice(picked == letter)
        now = self._clock.now()
        card, prepped = await self._record(
            workspace, ReviewItem(workspace.id, member.id, key, grade, now), card_reviews
        )
        if card is None:
            return await self._turn(ctx, workspace, member, reviewed, stale=True)
        if self._scored is not None and not prepped:
            self._scored([(workspace.id, member.id)])
        feedback = replies.review_feedback(item, picked, grade.word, srs.due_in(card.due - now))
        if prepped:
            feedback = replace(feedback, footer=_PREPPED)
        return await self._turn(ctx, workspace, member, reviewed + 1, feedback=feedback)
