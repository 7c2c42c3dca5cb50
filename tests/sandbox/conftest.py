"""Fixtures for the sandbox tests: one real manager with a warm pool for the whole session.

These tests run the real jail (bwrap, cgroups, seccomp). A host that cannot isolate makes them
fail loudly with the probe's reason; they are never skipped, because a silently skipped
isolation test is worse than none (CI installs bubblewrap).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from bot.sandbox import Sandbox, SandboxConfig
from tests.sandbox.sandbox_helpers import sandbox_config

#: A fake bot secret, present in this test process's environment and in a host file.
SECRET = f"fake-discord-token-{uuid.uuid4().hex}"


@pytest.fixture(scope="session")
def secret() -> str:
    return SECRET


@pytest.fixture(scope="session")
def secret_file() -> str:
    """A host file holding the secret, where a careless jail would see it (host /tmp)."""
    path = f"/tmp/studybot-test-secret-{uuid.uuid4().hex}"
    with open(path, "w") as fh:
        fh.write(SECRET)
    yield path
    os.unlink(path)


async def _started(config: SandboxConfig) -> AsyncIterator[Sandbox]:
    """The bot's secrets are in this process's environment while the sandbox runs (a jail must
    not see them), and only then: later tests read the environment as settings."""
    before = {name: os.environ.get(name) for name in ("DISCORD_TOKEN", "SLACK_BOT_TOKEN")}
    os.environ["DISCORD_TOKEN"] = SECRET
    os.environ["SLACK_BOT_TOKEN"] = SECRET
    try:
        async with Sandbox(config) as sb:
            if not sb.available:
                pytest.fail(f"this host cannot isolate snippets: {sb.unavailable_reason}")
            yield sb
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def sandbox(secret_file: str) -> AsyncIterator[Sandbox]:
    """The production shape: default limits, warm workers with numpy and torch imported."""
    async for sb in _started(sandbox_config(pool_size=2)):
        yield sb


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def bare(secret_file: str) -> AsyncIterator[Sandbox]:
    """The same jail and limits without the preloads: isolation does not depend on torch, and
    a jail that starts in ~0.2 s instead of seconds keeps the suite inside CI's time."""
    async for sb in _started(sandbox_config(pool_size=2, preload=())):
        yield sb
