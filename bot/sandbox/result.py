"""The sandbox's contract: what a run returns.

The sandbox owns these types (as snekbox's ``result.py`` does) so that it depends on nothing
of the bot and can run as a service of its own; callers import them from here.
"""

from __future__ import annotations

import base64
import enum
import mimetypes
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Outcome", "RunFile", "RunResult", "SkippedFile"]

_PNG = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True, slots=True)
class RunFile:
    """A file the snippet left in its working directory (or a figure it showed)."""

    name: str
    data: bytes

    @property
    def mime(self) -> str:
        if self.data.startswith(_PNG):
            return "image/png"
        return mimetypes.guess_type(self.name)[0] or "application/octet-stream"

    @property
    def is_image(self) -> bool:
        return self.mime.startswith("image/")


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file that did not come back, and why (``too big``, ``too many files``, ``symlink``)."""

    name: str
    size: int
    reason: str


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
    files: tuple[RunFile, ...] = ()
    skipped_files: tuple[SkippedFile, ...] = ()
    graph: dict[str, Any] | None = field(default=None, compare=False)

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
            "files": [{"name": f.name, "size": len(f.data), "mime": f.mime} for f in self.files],
            "skipped_files": [
                {"name": s.name, "size": s.size, "reason": s.reason} for s in self.skipped_files
            ],
        }

    def to_wire(self) -> dict[str, object]:
        """As the manager sends it to the bot: :meth:`as_dict` with the files' bytes."""
        data = self.as_dict()
        data["files"] = [
            {"name": f.name, "data": base64.b64encode(f.data).decode()} for f in self.files
        ]
        data["graph"] = self.graph
        return data

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> RunResult:
        files = tuple(
            RunFile(str(f["name"]), base64.b64decode(f["data"])) for f in data.get("files") or ()
        )
        skipped = tuple(
            SkippedFile(str(s["name"]), int(s["size"]), str(s["reason"]))
            for s in data.get("skipped_files") or ()
        )
        graph = data.get("graph")
        return cls(
            outcome=Outcome(data["outcome"]),
            exit_code=data.get("exit_code"),
            signal=data.get("signal"),
            stdout=str(data.get("stdout", "")),
            stderr=str(data.get("stderr", "")),
            truncated=bool(data.get("truncated")),
            duration_ms=float(data.get("duration_ms", 0.0)),
            files=files,
            skipped_files=skipped,
            graph=graph if isinstance(graph, dict) else None,
        )
