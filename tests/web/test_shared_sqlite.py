"""`studybot web` beside a running bot on one SQLite file: what an admin changes on the page
reaches the bot's scheduler within seconds, with no restart (it used to wait for one).

Two runtimes on the same file are two processes as SQLite sees them: each has its own
connections, and the only way one learns of the other's writes is reading the file.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import Wiring
from bot.core.messages import Message
from bot.core.models import ChatContext
from bot.core.schedule_spec import ScheduleForm
from bot.scheduler import SYNC_EVERY
from bot.settings import Settings
from tests.conftest import TEST_PACKS

pytestmark = pytest.mark.timeout(60)

ADMIN = ChatContext(
    platform="console",
    workspace="console",
    channel="general",
    member="me",
    member_name="me",
    is_admin=True,
    channel_name="general",
    via="web",
)


class Nowhere:
    """The bot's gateway: nothing falls due in this test (the schedule is hours away)."""

    async def send_post(self, channel: str, message: Message) -> str:
        raise AssertionError(f"nothing should post: {message.plain_text()[:80]}")

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        raise AssertionError("nothing should be edited")


async def test_a_schedule_added_on_the_page_reaches_the_running_bot(tmp_path: Path) -> None:
    wiring = Wiring()
    settings = Settings(
        _env_file=None,
        db_path=tmp_path / "bot.sqlite3",
        packs_dir=TEST_PACKS,
        sandbox_enabled=False,
    )
    async with wiring.runtime(settings, sandbox_on=False) as bot:
        await bot.services.places.channel(ADMIN)
        scheduler = wiring.scheduler(bot, Nowhere())
        async with scheduler.running():
            await scheduler.settle()
            assert scheduler.next_post() is None
            async with wiring.runtime(settings, sandbox_on=False) as web:  # `studybot web`
                local = web.clock.now() + timedelta(hours=3)
                form = ScheduleForm(time=local.strftime("%H:%M"), timezone="UTC")
                await web.services.schedules.add(ADMIN, form)
                listed = await web.services.schedules.channel_schedules(ADMIN)
                [when] = listed.schedules[0].times
            # Within a look or two, the bot has the schedule in its timetable.
            deadline = asyncio.get_running_loop().time() + 3 * SYNC_EVERY.total_seconds()
            while scheduler.next_post() != when:
                assert asyncio.get_running_loop().time() < deadline, "the bot never saw it"
                await asyncio.sleep(0.2)
