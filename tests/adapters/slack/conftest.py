"""Fixtures for the Slack adapter: FakeSlack, the real adapter (and its AsyncApp), a real service.

The service is the real :class:`Services` on a SQLite file in ``tmp_path`` with the shared
test packs plus two one-item packs in ``packs/`` (``slack-mc``, ``slack-practice``), so that
``/study quiz slack-mc`` always posts the same question.

After every test the fake is checked: no unknown Web API method was called, every method called
is one the adapter declares a scope for, and slack-bolt / slack_sdk logged no error.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.adapters.slack import SlackAdapter
from bot.adapters.slack.manifest import METHOD_SCOPES
from bot.app import Built, build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from bot.settings import Settings
from bot.storage.database import open_database
from tests.conftest import TEST_PACKS
from tests.fakes.slack_api import FakeSlack

SLACK_PACKS = Path(__file__).parent / "packs"


def slack_settings(fake: FakeSlack, **overrides: Any) -> Settings:
    """Settings pointing at the fake; ``None`` in overrides unsets a token."""
    values: dict[str, Any] = {
        "slack_bot_token": fake.bot_token,
        "slack_app_token": fake.app_token,
        "slack_signing_secret": fake.signing_secret,
        "slack_api_url": fake.api_url,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest_asyncio.fixture
async def slack_fake(caplog: pytest.LogCaptureFixture) -> AsyncIterator[FakeSlack]:
    caplog.set_level(logging.INFO)
    async with FakeSlack() as fake:
        yield fake
    unknown = [c.method for c in fake.calls if c.response.get("error") == "unknown_method"]
    assert not unknown, f"the adapter called methods the fake lacks: {unknown}"
    undeclared = {c.method for c in fake.calls} - set(METHOD_SCOPES)
    assert not undeclared, f"methods without a declared scope in manifest.py: {undeclared}"
    library_errors = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith(("slack_bolt", "slack_sdk")) and r.levelno >= logging.ERROR
    ]
    assert not library_errors, library_errors


@pytest_asyncio.fixture
async def slack_built(tmp_path: Path, clock: SimulatedClock) -> AsyncIterator[Built]:
    db = await open_database(tmp_path / "slack.sqlite3")
    try:
        built = build_services(db, clock, default_timezone="UTC", rng=random.Random(7))
        packs = load_packs(TEST_PACKS).packs + load_packs(SLACK_PACKS).packs
        await built.services.packs.sync(packs)
        yield built
    finally:
        await db.close()


@pytest.fixture
def slack_service(slack_built: Built) -> Services:
    return slack_built.services


@pytest.fixture
def slack_timed(slack_built: Built) -> SchedulerParts:
    """The scheduler's parts, with the stores the Slack tests look into."""
    return slack_built.timed


@pytest_asyncio.fixture
async def adapter(slack_fake: FakeSlack, slack_service: Services) -> AsyncIterator[SlackAdapter]:
    """The real adapter, not started: tests deliver to ``adapter.app`` in any mode.

    On teardown it waits for listeners still working after their ack, before the database and
    the fake go away.
    """
    adapter = SlackAdapter(slack_service, slack_settings(slack_fake))
    yield adapter
    assert await adapter.idle(5), "a Slack listener was still running at the end of the test"
