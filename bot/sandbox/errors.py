"""The two ways :meth:`Sandbox.run` refuses: bad input, or no sandbox. Everything else is a result.

Both carry a one-line ``reason`` written for the member (or the operator) to read as-is.
"""

from __future__ import annotations

__all__ = ["SandboxBusy", "SandboxUnavailable", "SnippetRejected"]


class SnippetRejected(ValueError):
    """The snippet was refused before running: too large, NUL bytes, not UTF-8."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SandboxUnavailable(RuntimeError):
    """The host cannot isolate snippets, the sandbox is off, or it is too busy; nothing was run."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SandboxBusy(SandboxUnavailable):
    """Every jail stayed busy for the run's whole timeout; nothing ran, the sandbox is fine.

    Separate from the other refusals because it is the caller's load, not the host: the member
    is asked to try again, and nobody needs to be paged.
    """
