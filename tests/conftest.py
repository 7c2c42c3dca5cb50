"""Shared fixtures: a real database per test, a simulated clock, the test packs.

The storage and service tests (``tests/core``, ``tests/services``, ``tests/storage``, the
scheduler's) run twice: on a SQLite file and on PostgreSQL, in a fresh schema of the server
``STUDYBOT_TEST_POSTGRES`` names (``.ci/run`` starts one). Without that variable the PostgreSQL runs are skipped, except
under CI, where they fail: CI must never pass without having tested both engines.
"""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import Built, build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.services.bundle import Services
from bot.services.scheduled_sources import SchedulerParts
from bot.storage.database import Database, open_database

TEST_PACKS = Path(__file__).parent / "data" / "packs"
ROUND_PACKS = Path(__file__).parent / "data" / "round_packs"  # two questions, A always right
START = datetime(2026, 3, 4, 9, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(START)


POSTGRES_URL = os.environ.get("STUDYBOT_TEST_POSTGRES", "")
#: Test files whose ``db`` runs on both engines (the storage and service layers).
BOTH_ENGINES = ("tests/core/", "tests/services/", "tests/storage/", "tests/test_scheduler")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine" not in metafunc.fixturenames:
        return
    where = Path(metafunc.definition.fspath).as_posix()
    if any(
        f"/{part}" in where for part in BOTH_ENGINES
    ) and not metafunc.definition.get_closest_marker("sqlite_only"):
        metafunc.parametrize("engine", ["sqlite", "postgresql"], indirect=True)


def require_postgres() -> None:
    """Skip a PostgreSQL test when no server is named; under CI, fail it instead."""
    if not POSTGRES_URL:
        message = "STUDYBOT_TEST_POSTGRES is not set (.ci/postgres start DIR prints a URL)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    name: str = getattr(request, "param", "sqlite")
    if name == "postgresql":
        require_postgres()
    return name


@asynccontextmanager
async def fresh_schema() -> AsyncIterator[str]:
    """A PostgreSQL URL whose connections use a new, empty schema, dropped afterwards."""
    import asyncpg

    require_postgres()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(POSTGRES_URL)
    try:
        await admin.execute(f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in POSTGRES_URL else "?"
        yield f"{POSTGRES_URL}{separator}search_path={schema}"
    finally:
        await admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await admin.close()


@pytest.fixture
async def db_target(engine: str, tmp_path: Path) -> AsyncIterator[str | Path]:
    """Where ``db`` lives: a SQLite file, or a PostgreSQL URL with a schema of its own."""
    if engine == "postgresql":
        async with fresh_schema() as url:
            yield url
    else:
        yield tmp_path / "studybot.sqlite3"


@pytest.fixture
async def db(db_target: str | Path) -> AsyncIterator[Database]:
    database = await open_database(db_target)
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
async def built(db: Database, clock: SimulatedClock) -> Built:
    """Every service and the scheduler's parts, as :func:`bot.app.build_services` wires them,
    with the test packs synced."""
    wired = build_services(db, clock, default_timezone="UTC", rng=random.Random(7))
    result = load_packs(TEST_PACKS)
    assert not result.problems, result.problems
    await wired.services.packs.sync(result.packs)
    return wired


@pytest.fixture
def service(built: Built) -> Services:
    """The services bundle adapters are handed."""
    return built.services


@pytest.fixture
def timed(built: Built) -> SchedulerParts:
    """What the scheduler loop is handed (it includes the stores a due batch writes)."""
    return built.timed
