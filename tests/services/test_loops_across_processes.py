"""Review reminders and weekly recaps when several bot processes share the database.

Two services over two handles to the same database stand for two processes (on both
engines). A reminder and a recap each go out once, whichever process looks first; a
sharded process leaves alone the workspaces it does not serve, without taking their claim.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.adapters.commands import recap_request, remind_request
from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.core.messages import Message
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.storage.database import open_database
from tests.conftest import TEST_PACKS
from tests.helpers import member

ANN = member("ann")
ADMIN = member("root", admin=True)


class Recorder:
    """A gateway that records what it publishes; ``mine`` says which workspaces it serves."""

    def __init__(self, mine: bool | None = None) -> None:
        self.dms: list[str] = []
        self.posts: list[str] = []
        self._mine = mine
        if mine is not None:
            self.serves = lambda workspace: mine  # type: ignore[method-assign]

    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        self.dms.append(member)
        return True

    async def send_post(self, channel: str, message: Message) -> str:
        self.posts.append(channel)
        return f"m{len(self.posts)}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        return None


@pytest.fixture
async def other(
    db_target: str | Path, service: Services, clock: SimulatedClock
) -> AsyncIterator[Services]:
    """A second process: its own database handle and service, the same clock."""
    db = await open_database(db_target)
    built = build_services(db, clock, default_timezone="UTC", rng=random.Random(8))
    svc = built.services
    await svc.packs.sync(load_packs(TEST_PACKS).packs)
    try:
        yield svc
    finally:
        await db.close()


async def _due_card_and_reminder(service: Services, clock: SimulatedClock) -> None:
    draft = await service.quiz.post_question(ADMIN, pack="mini", difficulty="medium")
    await service.quiz.answer(ANN, draft.post.id, "A")  # graded: a card, due again soon
    await service.reminders.command(ANN, remind_request("console", ["19:00", "UTC"]))
    clock.advance(timedelta(hours=10))  # 19:00: the reminder and the card are due


async def test_a_reminder_goes_out_once_whichever_process_looks(
    service: Services, other: Services, clock: SimulatedClock
) -> None:
    await _due_card_and_reminder(service, clock)
    first, second = Recorder(), Recorder()
    # At the same minute: both read the reminder as due; only one claim on the day succeeds.
    sent = await asyncio.gather(other.reminders.deliver(first), service.reminders.deliver(second))
    assert sorted(sent) == [0, 1]
    assert first.dms + second.dms == ["id-ann"]


async def test_a_sharded_process_leaves_other_workspaces_reminders_to_their_process(
    service: Services, other: Services, clock: SimulatedClock
) -> None:
    await _due_card_and_reminder(service, clock)
    elsewhere, owner = Recorder(mine=False), Recorder(mine=True)
    assert await other.reminders.deliver(elsewhere) == 0
    assert await service.reminders.deliver(owner) == 1  # the claim was not taken above
    assert elsewhere.dms == [] and owner.dms == ["id-ann"]


async def test_a_weekly_recap_posts_once_and_only_from_its_shard(
    service: Services, other: Services, clock: SimulatedClock
) -> None:
    await service.recaps.command(ADMIN, recap_request("console", ["on", "wed", "18:00"]))
    clock.advance(timedelta(hours=9))  # Wednesday 18:00
    elsewhere, owner, late = Recorder(mine=False), Recorder(mine=True), Recorder()
    assert await other.recaps.deliver(elsewhere) == 0
    assert await service.recaps.deliver(owner) == 1
    assert await other.recaps.deliver(late) == 0
    assert elsewhere.posts == [] and owner.posts == ["general"] and late.posts == []
