"""Typed questions in live rounds race, as in Red's trivia: the first right answer earns the
speed bonus, later right answers the base points, a near miss is told "almost" privately and
may type again; ``/settings round-typed off`` keeps typed questions out. Through the services
and the one timer loop, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.adapters.commands import settings_request
from bot.app import Built
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, NotFound
from bot.core.requests import RoundStart
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.rounds import READY
from tests.adapters.test_typed_answers import TYPED_PACKS
from tests.conftest import TEST_PACKS
from tests.services.test_rounds import ANN, BOB, CARL, ROOT, Chat, _points, running


async def _with_typed(service: Services) -> None:
    await service.packs.sync([*load_packs(TEST_PACKS).packs, *load_packs(TYPED_PACKS).packs])


async def test_a_typed_round_question_races_and_only_the_first_right_answer_earns_the_bonus(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    await _with_typed(service)
    chat = Chat()
    asked = clock.now() + READY
    async with running(built, clock, chat) as sched:
        hello = await service.rounds.start(
            ROOT, RoundStart(pack="typed-mini", questions=1, seconds=30, tags=("method",))
        )
        assert hello.title == "🏁 A round of 1 question starts now"
        await sched.advance(clock, asked)
        [question] = chat.questions()
        assert question.post_id is not None and "fills in the gradients" in question.plain_text()
        post = question.post_id

        await sched.advance(clock, asked + timedelta(seconds=1))
        with pytest.raises(BadInput, match="Almost"):
            await service.quiz.answer(CARL, post, "bckwrdd")  # told privately, may try again
        await sched.advance(clock, asked + timedelta(seconds=10))
        first = await service.quiz.answer(BOB, post, "bakcward")
        await sched.advance(clock, asked + timedelta(seconds=11))
        second = await service.quiz.answer(ANN, post, "backward")
        wrong = await service.quiz.answer(CARL, post, "forward")
        assert "Not quite" in wrong.plain_text()
        # Bob was first: 20 base points (medium) and a bonus that shrinks to the deadline;
        # Ann, one second later, gets the base points only.
        assert _points(first) > 20 and _points(second) == 20

        await sched.advance(clock, asked + timedelta(seconds=31))
        [reveal] = [m for m in chat.edits if m.post_id == post]
        shown = reveal.plain_text()
        assert "Who got it right (2)" in shown
        assert shown.index("bob +") < shown.index("ann +20")
        assert "right: 2 (67%)" in shown and "`forward` (1)" in shown


async def test_round_typed_off_keeps_typed_questions_out_of_rounds(
    service: Services,
) -> None:
    await _with_typed(service)

    async def setting(*words: str) -> str:
        reply = await service.settings.command(ROOT, settings_request("console", list(words)))
        return reply.plain_text()

    assert "round-typed: on" in await setting()
    assert "round-typed: on → off" in await setting("round-typed", "off")
    with pytest.raises(NotFound, match="No multiple-choice or practice questions match"):
        await service.rounds.start(ROOT, RoundStart(pack="typed-mini"))
    assert "round-typed: off → on" in await setting("round-typed", "on")
    hello = await service.rounds.start(ROOT, RoundStart(pack="typed-mini"))
    assert "A round of 4 questions" in (hello.title or "")  # every typed-mini item
