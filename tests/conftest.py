"""Shared fixtures: a real SQLite file per test, a simulated clock, the test packs."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import build_service
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.services.study import StudyService
from bot.storage.database import Database

TEST_PACKS = Path(__file__).parent / "data" / "packs"
START = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(START)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(tmp_path / "studybot.sqlite3")
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
async def service(db: Database, clock: SimulatedClock) -> StudyService:
    svc = build_service(db, clock, default_timezone="UTC", rng=random.Random(7))
    result = load_packs(TEST_PACKS)
    assert not result.problems, result.problems
    await svc.sync_packs(result.packs)
    return svc
