"""The Discord adapter, end to end: the real discord.py client against the local Discord fake.

Every test runs the adapter as ``studybot run --platform discord`` would: settings pointing at
the fake (``DISCORD_API_BASE`` / ``DISCORD_GATEWAY_URL`` / ``DISCORD_TOKEN``), the real wiring
(:class:`Wiring` builds the runtime: a SQLite file in ``tmp_path``, the packs synced, the real
:class:`Services`), and ``adapter.run()`` in a task. discord.py's endpoints are restored
after each test, so the adapter's own ``point_discord_py`` is what is under test.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord
import pytest

from bot.adapters.discord import DiscordAdapter
from bot.app import Wiring
from bot.core.clock import SimulatedClock
from bot.runtime import Runtime
from bot.settings import Settings
from tests.conftest import START, TEST_PACKS
from tests.fakes.discord_api import (
    FakeDiscord,
    FakeGuild,
    FakeInteraction,
    FakeMember,
    FakeMessage,
    assert_discord_quiet,
    restore_discord_endpoints,
)

ADMIN_ROLE = "Quizmaster"  # a role without Manage Server, whose id is DISCORD_ADMIN_ROLE here
ADMIN_ROLE_ID = 1_180_000_000_000_000_042

# Two small packs besides the shared mini pack, so a test can ask for exactly one item.
CARDS = """\
pack: cards
title: Flashcards
items:
  - id: c-flash-1
    kind: flashcard
    difficulty: easy
    prompt: What does tensor.detach() return?
    answer: A tensor that shares storage but is cut from the graph.
"""
DRILL = """\
pack: drill
title: Drill
items:
  - id: p-prac-1
    kind: practice
    shuffle: false  # the tests name the right letter; test_choice_order.py covers the drawn order
    difficulty: hard
    prompt: What is the gradient of 3x at x = 1?
    code: |
      import torch
      x = torch.tensor(1.0, requires_grad=True)
      (x * 3).backward()
      print(x.grad.item())
    expect_stdout: |
      3.0
    choices:
      - text: "3.0"
        correct: true
      - text: "1.0"
    steps: [Write y = 3x, dy/dx = 3 everywhere]
    hints: [Differentiate 3x., The input value does not matter.]
    common_mistakes: [Confusing the value of x with its gradient]
    final_answer: "3.0"
"""


@pytest.fixture
def packs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "packs"
    folder.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", folder / "mini.yaml")
    (folder / "cards.yaml").write_text(CARDS)
    (folder / "drill.yaml").write_text(DRILL)
    return folder


@pytest.fixture
async def fake(caplog: pytest.LogCaptureFixture) -> AsyncIterator[FakeDiscord]:
    caplog.set_level(logging.INFO)
    with restore_discord_endpoints():
        async with FakeDiscord() as fake:
            yield fake
    assert_discord_quiet(fake, caplog.records)


@pytest.fixture
def guild(fake: FakeDiscord) -> FakeGuild:
    guild = fake.add_guild("Study Hall", channels=["general", "questions"])
    fake.add_role(guild, "Study Admin", permissions=discord.Permissions(manage_guild=True))
    fake.add_role(guild, ADMIN_ROLE, permissions=0, role_id=ADMIN_ROLE_ID)
    return guild


@pytest.fixture
def alice(fake: FakeDiscord, guild: FakeGuild) -> FakeMember:
    return fake.add_member(guild, 1001, "alice")


@pytest.fixture
def bob(fake: FakeDiscord, guild: FakeGuild) -> FakeMember:
    return fake.add_member(guild, 1002, "bob")


@pytest.fixture
def admin(fake: FakeDiscord, guild: FakeGuild) -> FakeMember:
    return fake.add_member(guild, 1003, "grace", roles=["Study Admin"])


@pytest.fixture
def quizmaster(fake: FakeDiscord, guild: FakeGuild) -> FakeMember:
    return fake.add_member(guild, 1004, "quinn", roles=[ADMIN_ROLE])


def make_settings(fake: FakeDiscord, tmp_path: Path, packs_dir: Path, **extra: Any) -> Settings:
    """The settings an operator would write, pointing at the fake (no .env, no environment)."""
    values: dict[str, Any] = {
        "DISCORD_TOKEN": fake.token,
        "DISCORD_API_BASE": fake.api_base,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
        "DISCORD_ADMIN_ROLE": str(ADMIN_ROLE_ID),
        "STUDYBOT_DB": str(tmp_path / "studybot.sqlite3"),
        "STUDYBOT_PACKS": str(packs_dir),
        "STUDYBOT_PLATFORM": "discord",
        # Off unless a test needs real snippet runs: a jail pool per test would cost seconds.
        "SANDBOX_ENABLED": "false",
    }
    values.update(extra)
    return Settings(_env_file=None, **values)


@dataclass
class Studybot:
    """A running adapter and what a test needs around it."""

    fake: FakeDiscord
    guild: FakeGuild
    runtime: Runtime
    adapter: DiscordAdapter
    clock: SimulatedClock

    @property
    def bot(self) -> discord.Client:
        return self.adapter.bot

    @property
    def service(self) -> Any:
        return self.runtime.services

    async def quiz(
        self, member: FakeMember, channel: str = "questions", **options: Any
    ) -> FakeMessage:
        """``/quiz`` and the question it posted."""
        ix = await self.fake.slash_command(self.guild, channel, member, "quiz", options)
        return await ix.reply()

    async def command(
        self, member: FakeMember, name: str, options: dict[str, Any] | None = None, **kw: Any
    ) -> FakeInteraction:
        return await self.fake.slash_command(self.guild, "general", member, name, options, **kw)


@contextlib.asynccontextmanager
async def running(
    fake: FakeDiscord, settings: Settings, clock: SimulatedClock, guild: FakeGuild
) -> AsyncIterator[Studybot]:
    """Build the runtime with the real wiring and run the adapter until the block ends."""
    wiring = Wiring()
    async with wiring.runtime(settings, clock=clock) as runtime:
        # What Wiring.adapter() builds, with discord.py's wait after GUILD_CREATE shortened.
        adapter = DiscordAdapter(runtime.services, runtime.settings, guild_ready_timeout=0.05)
        task = asyncio.create_task(adapter.run(), name="discord-adapter")
        try:
            await _until_ready(fake, adapter, task)
            yield Studybot(fake, guild, runtime, adapter, clock)
        finally:
            await adapter.stop()
            await asyncio.wait_for(task, 10)


async def _until_ready(
    fake: FakeDiscord, adapter: DiscordAdapter, task: asyncio.Task[None]
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    bot = adapter.bot
    while not (bot.is_ready() and all(bot.get_guild(g) for g in fake.guilds_of(bot))):
        if task.done():
            task.result()  # raises what stopped it
            raise AssertionError("adapter.run() returned before the bot was ready")
        if loop.time() > deadline:
            raise TimeoutError(f"adapter not ready; REST calls: {[str(c) for c in fake.calls]}")
        await asyncio.sleep(0.01)


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(START)


@pytest.fixture
def settings(fake: FakeDiscord, tmp_path: Path, packs_dir: Path) -> Settings:
    return make_settings(fake, tmp_path, packs_dir)


@pytest.fixture
async def studybot(
    fake: FakeDiscord,
    guild: FakeGuild,
    alice: FakeMember,
    bob: FakeMember,
    admin: FakeMember,
    quizmaster: FakeMember,
    settings: Settings,
    clock: SimulatedClock,
) -> AsyncIterator[Studybot]:
    async with running(fake, settings, clock, guild) as bot:
        yield bot


def embed_text(message: FakeMessage | dict[str, Any]) -> str:
    """Title, description and footer of a message's (first) embed, for asserting on."""
    embeds = message.embeds if isinstance(message, FakeMessage) else message.get("embeds") or []
    if not embeds:
        return ""
    embed = embeds[0]
    parts = [embed.get("title") or "", embed.get("description") or ""]
    parts.append((embed.get("footer") or {}).get("text") or "")
    return "\n".join(parts)


def public_messages(fake: FakeDiscord, channel_id: int) -> list[FakeMessage]:
    return [m for m in fake.messages_in(channel_id) if not m.ephemeral]


@contextlib.contextmanager
def no_error_logs(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    start = len(caplog.records)
    yield
    errors = [r for r in caplog.records[start:] if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
