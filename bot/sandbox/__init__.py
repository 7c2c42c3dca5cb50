"""The snippet sandbox: each run is a fresh child of a torch-warm fork server, in its own
namespaces, cgroup and seccomp filter, used once (single-use jails are the fallback).

Public API: :class:`Sandbox` (async context manager; ``run()`` -> :class:`RunResult`),
:class:`SandboxConfig` (``from_settings``), :func:`validate_snippet`, and the two exceptions
:class:`SnippetRejected` and :class:`SandboxUnavailable` (with :class:`SandboxBusy`, when every
jail stayed busy for the run's timeout). See ``docs/SANDBOX.md`` for the threat
model. Nothing here imports torch; the bot process never does.

The names are loaded on first use (PEP 562), so that code which needs only the plain result
types (``bot.sandbox.result``, ``bot.sandbox.graph``: what the core renders) does not load
the client and its process machinery by importing this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.sandbox.client import Sandbox
    from bot.sandbox.config import SandboxConfig
    from bot.sandbox.errors import SandboxBusy, SandboxUnavailable, SnippetRejected
    from bot.sandbox.result import Outcome, RunResult
    from bot.sandbox.validate import validate_snippet

__all__ = [
    "Outcome",
    "RunResult",
    "Sandbox",
    "SandboxBusy",
    "SandboxConfig",
    "SandboxUnavailable",
    "SnippetRejected",
    "validate_snippet",
]

_WHERE = {
    "Outcome": "bot.sandbox.result",
    "RunResult": "bot.sandbox.result",
    "Sandbox": "bot.sandbox.client",
    "SandboxBusy": "bot.sandbox.errors",
    "SandboxConfig": "bot.sandbox.config",
    "SandboxUnavailable": "bot.sandbox.errors",
    "SnippetRejected": "bot.sandbox.errors",
    "validate_snippet": "bot.sandbox.validate",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'bot.sandbox' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
