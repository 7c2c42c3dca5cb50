"""Helpers shared by the sandbox tests."""

from __future__ import annotations

import textwrap

from bot.sandbox import Sandbox, SandboxConfig
from bot.sandbox.result import RunResult
from bot.settings import Settings


def sandbox_config(**overrides: object) -> SandboxConfig:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    return SandboxConfig.from_settings(settings, **overrides)


async def run(sb: Sandbox, code: str, timeout: float | None = None) -> RunResult:  # noqa: ASYNC109
    return await sb.run(textwrap.dedent(code), timeout=timeout)
