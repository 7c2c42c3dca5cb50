"""Live rounds through the services and the one timer loop, on SQLite and PostgreSQL.

The scheduler runs with the app's due sources, as the bot runs it, on a simulated clock; the
gateway only records what was posted and edited.
"""

from __future__ import annotations

import io
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import pytest
from PIL import Image

from bot.adapters.commands import settings_request
from bot.app import Built, build_services, due_sources, timer_loop
from bot.core import replies
from bot.core.clock import SimulatedClock
from bot.core.errors import BadInput, NotFound, PostClosed
from bot.core.messages import Message
from bot.core.requests import RoundStart, RoundStop
from bot.questions.loader import load_packs
from bot.scheduler import Scheduler
from bot.services.bundle import Services
from bot.services.rounds import READY
from bot.storage.database import Database
from bot.storage.reviews import ReviewStore
from tests.conftest import TEST_PACKS
from tests.helpers import member, schedule_command

GRACE = timedelta(hours=2)
ROOT = member("root", admin=True)
ANN, BOB, CARL, DAVE = (member(n) for n in ("ann", "bob", "carl", "dave"))


class Chat:
    """A gateway that keeps every message posted and every edit, in order."""

    def __init__(self) -> None:
        self.sent: list[Message] = []
        self.edits: list[Message] = []

    async def send_post(self, channel: str, message: Message) -> str:
        self.sent.append(message)
        return f"m{len(self.sent)}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        self.edits.append(message)

    def questions(self) -> list[Message]:
        return [m for m in self.sent if m.post_id is not None]

    def boards(self) -> list[Message]:
        return [m for m in self.sent if (m.title or "").startswith("🏁 Round board")]


@asynccontextmanager
async def running(built: Built, clock: SimulatedClock, chat: Chat) -> AsyncIterator[Scheduler]:
    scheduler = timer_loop(built.timed, chat, clock, GRACE, concurrency=1)
    for source in due_sources(built.services, chat):
        scheduler.add_source(source)
    async with scheduler.running():
        yield scheduler


async def _right(service: Services, message: Message) -> tuple[str, str]:
    """The right letter of a posted question, and a wrong one."""
    assert message.post_id is not None
    post = await service.quiz._post_in(ANN, message.post_id)
    item = (await service.catalogue.question(post[1].question_version_id)).item
    right = replies.correct_letter(item)
    assert right is not None
    wrong = next(letter for letter in message.choices if letter != right)
    return right, wrong


async def test_a_round_scores_speed_reveals_who_was_right_and_ends_with_a_board(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    chat = Chat()
    start = clock.now()
    asked = start + READY  # the first question follows the announcement
    async with running(built, clock, chat) as sched:
        hello = await service.rounds.start(ROOT, RoundStart(questions=2, seconds=20))
        assert hello.title == "🏁 A round of 2 questions starts now"
        await sched.advance(clock, asked)
        [first] = chat.questions()
        assert (first.title or "").startswith("🏁 Question 1 of 2")
        assert first.post_id is not None
        right, wrong = await _right(service, first)

        await sched.advance(clock, asked + timedelta(seconds=2))
        fast = await service.quiz.answer(ANN, first.post_id, right)
        await sched.advance(clock, asked + timedelta(seconds=5))
        missed = await service.quiz.answer(CARL, first.post_id, wrong)
        # What the board says, too: a round holds a missed card until tomorrow.
        assert missed.footer == "This card joins your `review` queue from tomorrow."
        await sched.advance(clock, asked + timedelta(seconds=12))
        slow = await service.quiz.answer(BOB, first.post_id, right)
        assert _points(fast) > _points(slow) > 0

        await sched.advance(clock, asked + timedelta(seconds=21))
        with pytest.raises(PostClosed, match="Too late"):
            await service.quiz.answer(DAVE, first.post_id, right)
        reveal = chat.edits[0]
        assert reveal.post_id == first.post_id
        text = reveal.plain_text()
        assert "Who got it right" in text
        assert text.index("ann +") < text.index("bob +") and "carl" not in text.split("right")[-1]

        await sched.advance(clock, asked + timedelta(minutes=2))
    assert len(chat.questions()) == 2
    [board] = chat.boards()
    lines = board.plain_text()
    assert lines.index("ann") < lines.index("bob") < lines.index("carl")
    assert "carl — 0 pts · 0/2 right" in lines  # out of the questions asked: one let pass
    assert "fastest 2.0 s" in lines
    assert "2 of 2 questions · started by root" in lines
    [picture] = board.attachments  # the board drawn, for Discord and Slack to show inline
    assert picture.is_image and picture.filename == "round-board.png"
    with Image.open(io.BytesIO(picture.content)) as drawn:
        assert drawn.format == "PNG" and drawn.width == 960 and drawn.height > 200
    week = (await service.standings.leaderboard(ROOT)).plain_text()
    assert f"ann — {_points(fast)} pts" in week
    # The second question nobody answered: each player finds it in /review, and the wrong
    # answer too; the review log still replays to the cards.
    assert "wrong or let pass is in your `/review` queue from tomorrow" in lines
    carl = await _ids(db, "id-carl")
    assert await ReviewStore(db).due_count(*carl, clock.now()) == 0  # not before tomorrow
    assert (await service.review.next(CARL)).question_id is None
    clock.set(asked + timedelta(days=1))
    due = await ReviewStore(db).due_count(*(await _ids(db, "id-carl")), clock.now())
    assert due == 2  # the wrong one and the one let pass
    assert await ReviewStore(db).replay_problems() == []


async def _ids(db: Database, member_external: str) -> tuple[int, int]:
    row = await db.fetchone(
        "SELECT workspace_id, id FROM members WHERE external_id = ?", (member_external,)
    )
    assert row is not None
    return int(row[0]), int(row[1])


def _points(reply: Message) -> int:
    words = reply.plain_text().split()
    return int(next(w for w in words if w.startswith("+")).lstrip("+"))


async def test_a_round_nobody_plays_ends_itself_after_three_questions(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    chat = Chat()
    start = clock.now()
    asked = start + READY  # the first question follows the announcement
    async with running(built, clock, chat) as sched:
        await service.rounds.start(ROOT, RoundStart(questions=4, seconds=10))
        await sched.advance(clock, asked + timedelta(minutes=5))
    assert len(chat.questions()) == 3
    [board] = chat.boards()
    assert "Nobody answered 3 questions in a row, so the round ended itself." in board.plain_text()
    assert "Nobody answered this round." in board.plain_text()


async def test_bad_rounds_are_refused_with_what_to_do(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    with pytest.raises(BadInput, match="1 to 50 questions, not 0"):
        await service.rounds.start(ROOT, RoundStart(questions=0))
    with pytest.raises(BadInput, match="5 to 300 seconds, not 1"):
        await service.rounds.start(ROOT, RoundStart(seconds=1))
    with pytest.raises(NotFound, match="Did you mean `mini`"):
        await service.rounds.start(ROOT, RoundStart(pack="mnii"))
    few = await service.rounds.start(ANN, RoundStart(questions=40))
    assert "Only 4 questions match, so the round has 4." in few.plain_text()
    with pytest.raises(BadInput, match="already running here; `round stop` ends it"):
        await service.rounds.start(BOB, RoundStart())
    with pytest.raises(Exception, match="Only whoever started the round, or an admin"):
        await service.rounds.stop(
            BOB,
        )
    board = await service.rounds.command(ANN, RoundStop())
    assert "Stopped by ann after 0 of 4 questions." in board.plain_text()
    again = await service.rounds.start(BOB, RoundStart(questions=2))  # one ended: room again
    assert "2 questions" in (again.title or "")


async def test_a_restart_mid_round_reveals_the_overdue_question_and_goes_on(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    chat = Chat()
    start = clock.now()
    asked = start + READY  # the first question follows the announcement
    async with running(built, clock, chat) as sched:
        await service.rounds.start(ROOT, RoundStart(questions=3, seconds=20))
        await sched.advance(clock, asked + timedelta(seconds=3))
        [first] = chat.questions()
        assert first.post_id is not None
        right, _ = await _right(service, first)
        await service.quiz.answer(ANN, first.post_id, right)
    # Down for 40 s: the first question's deadline and pause passed meanwhile.
    clock.set(asked + timedelta(seconds=43))
    again = build_services(db, clock, default_timezone="UTC", rng=random.Random(11))
    await again.services.packs.sync(load_packs(TEST_PACKS).packs)
    after = Chat()
    async with running(again, clock, after) as sched:
        await sched.settle()
        assert [e.post_id for e in after.edits] == [first.post_id]  # revealed on start
        assert "ann +" in after.edits[0].plain_text()
        [second] = after.questions()
        assert (second.title or "").startswith("🏁 Question 2 of 3")
    # Down for an hour: longer than the whole round would have lasted, so it ends.
    clock.set(asked + timedelta(hours=1))
    late = Chat()
    async with running(again, clock, late) as sched:
        await sched.settle()
    [board] = late.boards()
    assert "The bot was offline longer than the round would have lasted." in board.plain_text()
    assert "ann" in board.plain_text() and not late.questions()


async def test_two_processes_on_one_database_never_ask_a_question_twice(
    db: Database, built: Built, service: Services, clock: SimulatedClock
) -> None:
    other = build_services(db, clock, default_timezone="UTC", rng=random.Random(5))
    await other.services.packs.sync(load_packs(TEST_PACKS).packs)
    here, there = Chat(), Chat()
    start = clock.now()
    asked = start + READY  # the first question follows the announcement
    async with running(built, clock, here) as a, running(other, clock, there) as b:
        await service.rounds.start(ROOT, RoundStart(questions=3, seconds=10))
        for second in range(0, 60):
            clock.set(asked + timedelta(seconds=second))
            await a.settle()
            await b.settle()
    asked = [m.post_id for m in here.questions() + there.questions()]
    assert len(asked) == 3 and len(set(asked)) == 3
    assert len(here.boards() + there.boards()) == 1


async def test_round_settings_are_the_workspaces_and_logged(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    async def setting(ctx: object, *words: str) -> str:
        reply = await service.settings.command(ctx, settings_request("console", list(words)))  # type: ignore[arg-type]
        return reply.plain_text()

    listing = await setting(ANN)
    for line in (
        "round-questions: 10",
        "round-seconds: 20s",
        "round-pause: 5s",
        "round-speed-bonus: on",
        "round-starters: everyone",
    ):
        assert line in listing
    with pytest.raises(BadInput, match="`round-seconds` takes 5 to 300 seconds, not `2`"):
        await setting(ROOT, "round-seconds", "2")
    with pytest.raises(BadInput, match="`round-speed-bonus` is on or off, not `maybe`"):
        await setting(ROOT, "round-speed-bonus", "maybe")
    assert "round-starters: everyone → admins" in await setting(ROOT, "round-starters", "admins")
    assert "round-questions: 10 → 3" in await setting(ROOT, "round-questions", "3")
    assert "round-speed-bonus: on → off" in await setting(ROOT, "round-speed-bonus", "off")
    with pytest.raises(Exception, match="Only admins start rounds here"):
        await service.rounds.start(ANN, RoundStart())
    hello = await service.rounds.start(ROOT, RoundStart())
    assert hello.title == "🏁 A round of 3 questions starts now"
    assert "Faster correct answers" not in hello.plain_text()
    history = await setting(ANN, "history")
    assert "round-starters" in history and "round-questions" in history

    chat = Chat()
    async with running(built, clock, chat) as sched:
        await sched.advance(clock, clock.now() + READY)
        [first] = chat.questions()
        assert first.post_id is not None
        right, _ = await _right(service, first)
        reply = await service.quiz.answer(ANN, first.post_id, right)
    base = {"easy": 10, "medium": 20, "hard": 30}
    assert _points(reply) in base.values()  # no speed bonus: the base points only


async def test_a_scheduled_round_runs_in_several_channels_at_once(
    built: Built, service: Services, clock: SimulatedClock
) -> None:
    """``schedule add 10:00 --round 2x15s`` in two channels: at 10:00 each gets its
    announcement, its questions and its board; the schedule lists it as a round."""
    rooms = [member("root", admin=True, channel=name) for name in ("one", "two")]
    for ctx in rooms:
        reply = await schedule_command(service, ctx, "add", ["10:00", "--round", "2x15s"])
        assert "a live round of 2 questions, 15 s each" in reply.message.plain_text()
    with pytest.raises(Exception, match="QUESTIONSxSECONDS"):
        await schedule_command(service, rooms[0], "add", ["11:00", "--round", "lots"])
    chat = Chat()
    ten = clock.now().replace(hour=10, minute=0, second=0, microsecond=0)
    async with running(built, clock, chat) as sched:
        await sched.advance(clock, ten + timedelta(minutes=3))
    hellos = [m for m in chat.sent if (m.title or "").startswith("🏁 A round of 2 questions")]
    assert len(hellos) == 2 and all("Scheduled (#" in (m.footer or "") for m in hellos)
    assert len(chat.questions()) == 4
    assert len(chat.boards()) == 2
    assert all("started by schedule #" in b.plain_text() for b in chat.boards())
