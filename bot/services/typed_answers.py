"""A typed answer to a posted question: graded, and what the member is told when it is not final.

The quiz records an answer once per member and post; this decides what is recorded for a
typed item (:class:`~bot.questions.schema.TypedAnswer`). A near miss ("almost") and a number
that could not be read are not answers: the member is told so, privately, and may type
again, within the free tries and the pace of :mod:`bot.core.guesses`. A right answer is
stored as the key's own answer, so the reveal counts the group's right answers as one; a
wrong one as typed, normalised (no markup, no mentions), for "the most common wrong answers".
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.core.errors import BadInput
from bot.core.guesses import GuessLimit
from bot.core.models import ChatContext
from bot.questions.schema import TypedAnswer
from bot.questions.typed import Mark, normalise

__all__ = ["Graded", "TypedAnswers"]

ALMOST = "✏️ Almost: check the spelling and answer again. That try did not count."
UNREADABLE = (
    "That is not a number I can read; type one such as 0.5, 1e-3, -2 or 1/3. "
    "That try did not count."
)


@dataclass(frozen=True, slots=True)
class Graded:
    """What is recorded for a typed answer: the text stored, whether it is right, and the
    form the key accepted it as (shown when the member typed it otherwise)."""

    stored: str
    correct: bool
    accepted_as: str | None = None


class TypedAnswers:
    """Grading typed answers, with each member's free tries per question."""

    def __init__(self) -> None:
        self._limit = GuessLimit()

    def grade(self, ctx: ChatContext, post_id: int, item: TypedAnswer, text: str) -> Graded:
        """The answer to record, or :class:`BadInput` (almost, unreadable): a try
        that costs the member nothing, until the free ones are spent."""
        verdict = item.grade(text)
        if verdict.mark is Mark.UNREADABLE:
            if self._limit.free_try(post_id, ctx.member):
                raise BadInput(UNREADABLE)
            raise BadInput("That is not a number I can read; type a number such as 0.5.")
        if verdict.mark is Mark.CLOSE and self._limit.free_try(post_id, ctx.member):
            raise BadInput(ALMOST)
        if verdict.mark is Mark.RIGHT:
            shown = None if normalise(text) == normalise(verdict.stored) else verdict.stored
            return Graded(verdict.stored, True, shown)
        return Graded(verdict.stored or normalise(text)[:80], False)
