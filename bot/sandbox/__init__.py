"""The snippet sandbox: each run is a fresh child of a torch-warm fork server, in its own
namespaces, cgroup and seccomp filter, used once (single-use jails are the fallback).

Public API: :class:`Sandbox` (async context manager; ``run()`` -> :class:`RunResult`),
:class:`SandboxConfig` (``from_settings``), :func:`validate_snippet`, and the two exceptions
:class:`SnippetRejected` and :class:`SandboxUnavailable` (with :class:`SandboxBusy`, when every
jail stayed busy for the run's timeout). See ``docs/SANDBOX.md`` for the threat
model. Nothing here imports torch; the bot process never does.
"""

from __future__ import annotations

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
