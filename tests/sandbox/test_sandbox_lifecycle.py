"""Sandbox start/close edges and long timeouts, each a bug found when wiring it into the bot."""

from __future__ import annotations

import logging

import pytest

from bot.sandbox import Sandbox
from bot.sandbox.result import Outcome
from tests.sandbox.sandbox_helpers import sandbox_config

pytestmark = pytest.mark.slow


async def test_closing_right_after_start_is_clean(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    async with Sandbox(sandbox_config(pool_size=1, preload=())) as sandbox:
        assert sandbox.available, sandbox.unavailable_reason
    assert not sandbox.available
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_timeout_longer_than_the_import_budget_still_runs() -> None:
    """The CPU hard limit is fixed before the import; it must leave room for the longest run."""
    config = sandbox_config(pool_size=1, preload=(), timeout=150.0, import_cpu_seconds=5)
    async with Sandbox(config) as sandbox:
        result = await sandbox.run("print('still here')", timeout=150.0)
    assert result.outcome is Outcome.OK, result
    assert result.stdout == "still here\n"
