"""A typed answer to a posted question: graded, and what the member is told when it is not final.

The quiz records an answer once per member and post; this decides what is recorded for a
typed item (:class:`~bot.questions.schema.TypedAnswer`). A near miss ("almost") and a number
that could not be read are not answers: the member is told so, privately, and may type
again, within the free tries of :mod:`bot.core.guesses`. A right answer is stored as the
key's own answer, so the reveal counts the group's right answers as one; a wrong one as
typed, normalised (no markup, no mentions), for "the most common wrong answers".

A ``value`` key is judged in the sandbox (:mod:`bot.questions.typed_values`): the item's
reference value is computed once per question version and kept; the member's expression runs
with /run's limits and rate, and an expression that cannot be evaluated (a syntax error, a
loop past the time limit, gigabytes) is told so and costs nothing but the attempt.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bot.core.errors import BadInput, Unavailable
from bot.core.guesses import GuessLimit
from bot.core.models import ChatContext
from bot.questions.schema import TypedAnswer
from bot.questions.typed import Mark, normalise
from bot.questions.typed_values import (
    VALUE_JOB,
    VALUE_SECONDS,
    expression_problem,
    member_code,
    reference_code,
    value_differs,
    value_of,
)
from bot.sandbox.exercise import Value
from bot.services.future_cache import FutureCache
from bot.services.runs import SnippetRuns

__all__ = ["ALMOST", "UNREADABLE", "Graded", "TypedAnswers"]

ALMOST = "✏️ Almost: check the spelling and answer again. That try did not count."
UNREADABLE = (
    "That is not a number I can read; type one such as 0.5, 1e-3, -2 or 1/3. "
    "That try did not count."
)
_REFERENCES = 256  # reference values kept, by question version


@dataclass(frozen=True, slots=True)
class Graded:
    """What is recorded for a typed answer: the text stored, whether it is right, and the
    form the key accepted it as (shown when the member typed it otherwise)."""

    stored: str
    correct: bool
    accepted_as: str | None = None


class TypedAnswers:
    """Grading typed answers, with each member's free tries per question."""

    def __init__(self, runs: SnippetRuns | None = None) -> None:
        self._limit = GuessLimit()
        self._runs = runs
        # question version -> its reference value (a version's content never changes)
        self._references: FutureCache[int, Value] = FutureCache(_REFERENCES)

    async def grade(
        self,
        ctx: ChatContext,
        post_id: int,
        item: TypedAnswer,
        text: str,
        version: int,
        *,
        unreadable_misses: bool = False,
    ) -> Graded:
        """The answer to record, or :class:`BadInput` (almost, unreadable): a try that costs
        the member nothing, until the free ones are spent. Then a number that cannot be read
        is refused (a post keeps one answer per member), or with ``unreadable_misses`` graded
        wrong (a /review card, whose miss only makes it due again)."""
        if item.value is not None:
            return await self._value(ctx, post_id, item, text, version)
        verdict = item.grade(text)
        if verdict.mark is Mark.UNREADABLE:
            if self._limit.free_try(post_id, ctx.member):
                raise BadInput(UNREADABLE)
            if not unreadable_misses:
                raise BadInput("That is not a number I can read; type a number such as 0.5.")
        if verdict.mark is Mark.CLOSE and self._limit.free_try(post_id, ctx.member):
            raise BadInput(ALMOST)
        if verdict.mark is Mark.RIGHT:
            shown = None if normalise(text) == normalise(verdict.stored) else verdict.stored
            return Graded(verdict.stored, True, shown)
        return Graded(verdict.stored or normalise(text)[:80], False)

    async def _value(
        self, ctx: ChatContext, post_id: int, item: TypedAnswer, text: str, version: int
    ) -> Graded:
        """An expression, evaluated in the jail and compared with the reference's value."""
        if (problem := expression_problem(text)) is not None:
            raise BadInput(f"{problem} That try did not count.")
        if self._runs is None:
            raise Unavailable("This question needs the sandbox, which is off here.")
        want = await self._reference(item, version)
        run = await self._runs.exercise_run(ctx, member_code(text, want), VALUE_JOB, VALUE_SECONDS)
        got = value_of(run)
        if isinstance(got, str):  # it did not evaluate: said, and not an answer
            raise BadInput(f"{got[:1].upper()}{got[1:]}. That try did not count.")
        # As typed, on one line, without backticks (the reveal quotes it in code).
        stored = " ".join(text.split()).replace("`", "'")[:80]
        if value_differs(got, want) is None:
            return Graded(item.shown_answer, True, None if stored == item.shown_answer else stored)
        return Graded(stored, False)

    def _reference(self, item: TypedAnswer, version: int) -> asyncio.Future[Value]:
        return self._references.get(version, lambda: self._run_reference(item))

    async def _run_reference(self, item: TypedAnswer) -> Value:
        assert self._runs is not None
        assert item.value is not None
        assert item.code is not None
        run = await self._runs.exercise_run(
            None, reference_code(item.code, item.value.of), VALUE_JOB, VALUE_SECONDS
        )
        want = value_of(run)
        if isinstance(want, str):
            raise Unavailable(
                f"Sorry: this question's own value could not be computed ({want}); the pack's "
                "maintainers need to run `studybot questions check`."
            )
        return want
