"""The sandbox's contract: what a run returns.

The sandbox owns these types (as snekbox's ``result.py`` does) so that it depends on nothing
of the bot and can run as a service of its own; callers import them from here.
"""

from __future__ import annotations

import base64
import enum
from dataclasses import dataclass, field
from typing import Any

from bot.sandbox.exercise import (
    ExerciseReport,
    ExerciseReportInvalid,
    parse_exercise_report,
    report_to_wire,
)
from bot.sandbox.graph import GRAPH_UNREADABLE, AutogradGraph, GraphReportInvalid, parse_graph

__all__ = ["IMAGE_TYPES", "LEFT_OUT_REASONS", "Outcome", "RunFile", "RunResult", "SkippedFile"]

#: The pictures a run can return, as decoded by the manager (``images.image_type``).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
_FILE_TYPES = IMAGE_TYPES | {"text/plain", "application/octet-stream"}

#: Why a file did not come back: the closed set a report may name (anything else is refused
#: at the boundary), in the words a member is told.
LEFT_OUT_REASONS: dict[str, str] = {
    "too many files": "over the limit on files",
    "too big": "over the size limit",
    "symlink": "a link, never followed",
    "fifo": "a named pipe, not a file",
    "socket": "a socket, not a file",
    "device": "not a regular file",
    "too deep": "a folder nested too deep",
    "unreadable": "could not be read",
    "not looked at": "not looked at: too many entries",
}


@dataclass(frozen=True, slots=True)
class RunFile:
    """A file the snippet left in its working directory (or a figure it showed).

    ``name`` is a path of cleaned parts (``plots/fig.png``); ``mime`` is decided by the
    manager from the bytes (a picture only if it decodes as one), never from the name.
    """

    name: str
    data: bytes
    mime: str = "application/octet-stream"

    @property
    def is_image(self) -> bool:
        return self.mime in IMAGE_TYPES

    @property
    def filename(self) -> str:
        """A flat name to upload or save under (``plots/fig.png`` -> ``plots_fig.png``)."""
        return self.name.replace("/", "_")


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file that did not come back, and why (one of :data:`LEFT_OUT_REASONS`)."""

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
    #: Every left-out entry counted by reason (``skipped_files`` names only the first few).
    skipped_counts: tuple[tuple[str, int], ...] = ()
    graph: AutogradGraph | None = field(default=None, compare=False)
    #: Why no graph came back, as the jail said it: untrusted text, shown only as code.
    graph_error: str | None = None
    #: An exercise run's values (``Sandbox.run(exercise=...)``), checked at the boundary; None
    #: when the run ended before it reported, or its report was refused.
    exercise: ExerciseReport | None = field(default=None, compare=False)

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
            "skipped_counts": dict(self.skipped_counts),
        }

    def to_wire(self) -> dict[str, object]:
        """As the manager sends it to the bot: :meth:`as_dict` with the files' bytes."""
        data = self.as_dict()
        data["files"] = [
            {"name": f.name, "mime": f.mime, "data": base64.b64encode(f.data).decode()}
            for f in self.files
        ]
        data["graph"] = None if self.graph is None else self.graph.as_dict()
        data["graph_error"] = self.graph_error
        data["exercise"] = report_to_wire(self.exercise)
        return data

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> RunResult:
        """Read back what :meth:`to_wire` wrote (from this host's manager or a sandbox host)."""
        files = tuple(
            RunFile(
                str(f["name"]),
                base64.b64decode(f["data"]),
                mime if (mime := f.get("mime")) in _FILE_TYPES else "application/octet-stream",
            )
            for f in data.get("files") or ()
        )
        skipped = tuple(
            SkippedFile(str(s["name"]), int(s["size"]), str(s["reason"]))
            for s in data.get("skipped_files") or ()
        )
        counts = data.get("skipped_counts") or {}
        graph: AutogradGraph | None = None
        graph_error = data.get("graph_error")
        if data.get("graph") is not None:
            try:
                graph = parse_graph(data["graph"])
            except GraphReportInvalid:
                graph_error = GRAPH_UNREADABLE
        exercise: ExerciseReport | None = None
        if data.get("exercise") is not None:
            try:
                exercise = parse_exercise_report(data["exercise"])
            except ExerciseReportInvalid:
                exercise = None
        return cls(
            exercise=exercise,
            outcome=Outcome(data["outcome"]),
            exit_code=data.get("exit_code"),
            signal=data.get("signal"),
            stdout=str(data.get("stdout", "")),
            stderr=str(data.get("stderr", "")),
            truncated=bool(data.get("truncated")),
            duration_ms=float(data.get("duration_ms", 0.0)),
            files=files,
            skipped_files=skipped,
            skipped_counts=tuple((str(k), int(v)) for k, v in counts.items()),
            graph=graph,
            graph_error=None if graph_error is None else str(graph_error),
        )
