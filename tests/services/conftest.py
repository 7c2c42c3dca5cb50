"""Services wired as the bot wires them, on a real database, with a real sandbox where asked.

``sandboxed_service``: the whole :class:`Services` with the real jail as its runner and a
packs folder holding the ``mini`` test pack; a test module sets ``sandbox_options`` (the
:func:`sandbox_config` overrides) for the sandbox it needs.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.app import build_services
from bot.core.clock import SimulatedClock
from bot.questions.loader import load_packs
from bot.sandbox import Sandbox
from bot.services.bundle import Services
from bot.storage.database import Database
from tests.conftest import TEST_PACKS
from tests.sandbox.sandbox_helpers import sandbox_config


@pytest.fixture
def sandbox_options() -> dict[str, object]:
    return {"pool_size": 1}


@pytest.fixture
async def sandbox(sandbox_options: dict[str, object]) -> AsyncIterator[Sandbox]:
    async with Sandbox(sandbox_config(**sandbox_options)) as sb:
        yield sb


@pytest.fixture
async def sandboxed_service(
    db: Database, clock: SimulatedClock, tmp_path: Path, sandbox: Sandbox
) -> Services:
    packs = tmp_path / "packs"
    packs.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", packs / "mini.yaml")
    built = build_services(db, clock, rng=random.Random(3), packs_dir=packs, runner=sandbox)
    svc = built.services
    await svc.packs.sync(load_packs(packs).packs)
    return svc
