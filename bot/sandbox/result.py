"""The sandbox's contract: what a run returns.

The sandbox owns these types (as snekbox's ``result.py`` does) so that it depends on nothing
of the bot and can run as a service of its own; callers import them from here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Outcome", "RunResult"]


class Outcome(enum.StrEnum):
    """How a sandboxed snippet run ended (the ``outcome`` field of :class:`RunResult`)."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    KILLED = "killed"


@dataclass(frozen=True, slots=True)
class RunResult:
    """The result of one snippet run: a value, never an exception, whatever the snippet did.

    ``exit_code`` is the interpreter's exit status (signal deaths normalised to ``128 + N``),
    ``signal`` the signal's name (``"SIGKILL"``) when one ended the run. ``stdout`` and
    ``stderr`` are decoded text already cut to the output cap; ``truncated`` says whether
    anything was cut.
    """

    outcome: Outcome
    exit_code: int | None
    signal: str | None
    stdout: str
    stderr: str
    truncated: bool
    duration_ms: float

    def as_dict(self) -> dict[str, object]:
        """The JSON shape printed by ``studybot snippet run --json``."""
        return {
            "outcome": self.outcome.value,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "truncated": self.truncated,
            "duration_ms": round(self.duration_ms, 3),
        }
