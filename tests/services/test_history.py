"""/history and /question ID: past questions, privately, never spoiling an open one."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, NotFound
from bot.services.bundle import Services
from tests.helpers import member

ANN, BOB = member("ann"), member("bob")
ADMIN = member("root", admin=True)
ELSEWHERE = member("eve", workspace="ws2")


async def test_history_lists_the_channels_questions_newest_first_with_how_the_group_did(
    service: Services, clock: SimulatedClock
) -> None:
    empty = await service.history.recent(ANN)
    assert empty.ephemeral and empty.plain_text() == "No question has been posted in #general yet."
    first = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")  # answer: B
    await service.quiz.answer(ANN, first.post.id, "B")
    await service.quiz.answer(BOB, first.post.id, "A")
    await service.quiz.reveal(ADMIN, first.post.id)
    clock.advance(timedelta(hours=1))
    second = await service.quiz.post_question(ANN, pack="mini", difficulty="hard")
    other = await service.quiz.post_question(member("ann", channel="random"), pack="mini")

    message = await service.history.recent(ANN)
    lines = message.plain_text().splitlines()
    assert message.ephemeral and lines[0] == "🕘 Recent questions in #general"
    rows = [line for line in lines if line.startswith("#")]
    assert rows == [
        f"#{second.post.id} · Wed 04 Mar 10:00 · What does this print? · open",
        f"#{first.post.id} · Wed 04 Mar 09:00 · When is the autograd graph built? · "
        "2 answered, 50% right",
    ]
    assert f"#{other.post.id}" not in message.plain_text()  # another channel's
    assert "Times in UTC. See one with `question ID`." in message.plain_text()
    assert len([r for r in (await service.history.recent(ANN, 1)).plain_text().splitlines()
                if r.startswith("#")]) == 1  # fmt: skip
    for bad in (0, 21):
        with pytest.raises(BadInput, match="Show 1 to 20 questions"):
            await service.history.recent(ANN, bad)


async def test_question_id_shows_a_closed_one_revealed_and_an_open_one_without_its_answer(
    service: Services,
) -> None:
    closed = await service.quiz.post_question(ANN, pack="mini", difficulty="medium")
    await service.quiz.answer(BOB, closed.post.id, "B")
    await service.quiz.reveal(ADMIN, closed.post.id)
    shown = await service.history.question(ANN, closed.post.id)
    text = shown.plain_text()
    assert shown.ephemeral and shown.buttons == ()
    assert "✅ B. As the forward pass runs — 1 (100%)" in text
    assert "PyTorch builds the graph at run time." in text
    assert f"#{closed.post.id} · d-mc-1 · posted in #general Wed 04 Mar 09:00" in text

    still_open = await service.quiz.post_question(ANN, pack="mini", difficulty="hard")
    peek = await service.history.question(BOB, still_open.post.id)
    text = peek.plain_text()
    assert peek.buttons == () and "What does this print?" in text
    assert "Final answer" not in text and "Solution" not in text and "✅" not in text
    assert "Still open in #general" in text and "answer it there" in text
    await service.quiz.answer(BOB, still_open.post.id, "A")  # peeking did not answer for bob

    with pytest.raises(NotFound, match=f"no question #{closed.post.id} here"):
        await service.history.question(ELSEWHERE, closed.post.id)  # another workspace's
    with pytest.raises(NotFound, match="`history` lists the recent ones"):
        await service.history.question(ANN, 9999)
