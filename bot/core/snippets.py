"""``/run``: the rules around a member's snippet, and how its result is shown.

The jail itself is :mod:`bot.sandbox`; this module decides who may run what and when (a size
limit, a per-member rate limit, one run per member at a time) and turns a
:class:`RunResult` into a message that is readable in a chat: a status line that says what
happened, the output in a code block cut to a readable length, the full output attached when
it was cut, and nothing in it able to ping anyone or break out of its code block.
"""

from __future__ import annotations

import asyncio
import collections
import re
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from bot.core.clock import Clock
from bot.core.errors import RateLimited
from bot.core.messages import Attachment, Message, Section, Tone, escape_markup, neutralise
from bot.core.uploads import human_size
from bot.sandbox.exercise import ExerciseJob
from bot.sandbox.result import LEFT_OUT_REASONS, Outcome, RunResult

__all__ = [
    "PYTHON_TAGS",
    "RunGate",
    "RunLimits",
    "SnippetRunner",
    "file_attachments",
    "first_python_block",
    "result_message",
    "skipped_notes",
]

SHOWN_STDOUT_LINES, SHOWN_STDOUT_CHARS = 30, 1500
PYTHON_TAGS = frozenset({"", "py", "python", "python3", "py3"})
_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
_TAG = re.compile(r"[A-Za-z0-9_+#.-]*")
SHOWN_STDERR_LINES, SHOWN_STDERR_CHARS = 12, 900


class SnippetRunner(Protocol):
    """What the core needs from the sandbox (``bot.sandbox.Sandbox`` is one)."""

    @property
    def available(self) -> bool: ...

    @property
    def unavailable_reason(self) -> str | None: ...

    async def run(
        self,
        code: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        graph: tuple[str, ...] | None = None,
        background: bool = False,
        exercise: ExerciseJob | None = None,
    ) -> RunResult: ...


@dataclass(frozen=True, slots=True)
class RunLimits:
    """The limits members are told about (the sandbox enforces them)."""

    timeout_s: float = 10.0
    memory_mb: int = 512
    max_bytes: int = 65536
    per_minute: int = 6


@dataclass(slots=True)
class RunGate:
    """Per-member admission: at most ``per_minute`` runs a minute, and one at a time.

    Kept in memory: a restart forgets it, which errs on the member's side.
    """

    clock: Clock
    per_minute: int
    _recent: dict[tuple[str, str, str], deque[datetime]] = field(default_factory=dict)
    _running: set[tuple[str, str, str]] = field(default_factory=set)
    _idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self._idle.set()

    async def idle(self) -> None:
        """Wait until no run admitted by this gate is still going (for a clean shutdown)."""
        await self._idle.wait()

    @contextmanager
    def admit(self, key: tuple[str, str, str]) -> Iterator[None]:
        if key in self._running:
            raise RateLimited("Your previous snippet is still running; wait for its result.")
        now = self.clock.now()
        if len(self._recent) > 512:  # forget members whose last run is over a minute old
            minute = timedelta(minutes=1)
            self._recent = {k: d for k, d in self._recent.items() if d and now - d[-1] < minute}
        recent = self._recent.setdefault(key, deque())
        while recent and now - recent[0] >= timedelta(minutes=1):
            recent.popleft()
        if len(recent) >= self.per_minute:
            wait = timedelta(minutes=1) - (now - recent[0])
            seconds = max(1, round(wait.total_seconds()))
            raise RateLimited(
                f"You can run {self.per_minute} snippets a minute; try again in {seconds} s."
            )
        recent.append(now)
        self._running.add(key)
        self._idle.clear()
        try:
            yield
        finally:
            self._running.discard(key)
            if not self._running:
                self._idle.set()


def _status(result: RunResult, limits: RunLimits) -> tuple[str, Tone]:
    took = (
        f"{result.duration_ms / 1000:.2f} s"
        if result.duration_ms >= 1000
        else (f"{result.duration_ms:.0f} ms")
    )
    if result.outcome is Outcome.OK:
        return f"✅ Ran in {took}.", Tone.SUCCESS
    if result.outcome is Outcome.ERROR:
        return f"❌ Exited with code {result.exit_code} after {took}.", Tone.WARNING
    if result.outcome is Outcome.TIMEOUT:
        cause = " (its CPU time ran out)" if result.signal == "SIGXCPU" else ""
        return f"⏱️ Timed out: stopped after the {limits.timeout_s:g} s limit{cause}.", Tone.ERROR
    if result.outcome is Outcome.MEMORY_LIMIT:
        return f"💥 Ran out of memory: the limit is {limits.memory_mb} MiB.", Tone.ERROR
    signal = result.signal or f"signal {result.exit_code}"
    return f"💀 Killed by {signal} after {took}.", Tone.ERROR


def _cut(text: str, max_lines: int, max_chars: int, *, tail: bool) -> tuple[str, bool]:
    """Keep the head of stdout (or the tail of stderr, where a traceback ends)."""
    lines = text.rstrip("\n").split("\n")
    cut = len(lines) > max_lines
    lines = lines[-max_lines:] if tail else lines[:max_lines]
    shown = "\n".join(lines)
    if len(shown) > max_chars:
        shown = shown[-max_chars:] if tail else shown[:max_chars]
        cut = True
    return shown, cut


def result_message(result: RunResult, limits: RunLimits, author: str) -> Message:
    """The public reply to ``/run``: status, output, and the full output attached if cut."""
    status, tone = _status(result, limits)
    sections = [Section(body=status)]
    any_cut = result.truncated
    if result.stdout.strip():
        shown, cut = _cut(result.stdout, SHOWN_STDOUT_LINES, SHOWN_STDOUT_CHARS, tail=False)
        any_cut |= cut
        sections.append(Section(heading="Output", code=neutralise(shown), language="text"))
    if result.stderr.strip():
        shown, cut = _cut(result.stderr, SHOWN_STDERR_LINES, SHOWN_STDERR_CHARS, tail=True)
        any_cut |= cut
        sections.append(Section(heading="Errors", code=neutralise(shown), language="text"))
    if not result.stdout.strip() and not result.stderr.strip():
        sections.append(Section(body="(no output)"))
    attachments: tuple[Attachment, ...] = ()
    notes = []
    if result.truncated:
        notes.append("The output went over the sandbox's limit; the rest was dropped.")
    if any_cut:
        full = result.stdout
        if result.stderr:
            full += ("\n" if full and not full.endswith("\n") else "") + "--- stderr ---\n"
            full += result.stderr
        attachments = (Attachment("output.txt", full.encode("utf-8"), "the full output"),)
        notes.append("Output cut for chat; the full output is attached.")
    attachments += file_attachments(result)
    notes += skipped_notes(result)
    if notes:
        sections.append(Section(body=" ".join(notes)))
    return Message(
        title=f"Snippet from {escape_markup(neutralise(author))}",
        sections=tuple(sections),
        tone=tone,
        attachments=attachments,
    )


def file_attachments(result: RunResult) -> tuple[Attachment, ...]:
    """What the snippet saved or plotted, pictures first (shown inline where a chat can).

    Only a file the manager decoded as a picture is one; the rest are plain files, whatever
    their names say."""
    ordered = sorted(result.files, key=lambda f: (not f.is_image, f.name))
    return tuple(
        Attachment(
            f.filename,
            f.data,
            "a figure" if f.is_image else "a file the snippet wrote",
            is_image=f.is_image,
        )
        for f in ordered
    )


def _entries(n: int) -> str:
    return f"{n:,} file{'s' if n != 1 else ''}"


def skipped_notes(result: RunResult) -> list[str]:
    """One sentence that counts, by reason, every file that did not come back, naming a few.

    The counts are the sandbox's exact tallies (``skipped_counts``), not the length of the
    named list; the names are cleaned paths (``[A-Za-z0-9._-/]``), safe in a code span.
    """
    counts = dict(result.skipped_counts) or dict(
        collections.Counter(s.reason for s in result.skipped_files)
    )
    if not counts:
        return []
    parts = []
    for reason, count in counts.items():
        why = LEFT_OUT_REASONS.get(reason, "left out")
        if reason == "not looked at":
            parts.append(f"more entries that were {why}")
            continue
        named = [s for s in result.skipped_files if s.reason == reason][:5]
        if not named:
            parts.append(f"{_entries(count)} ({why})")
            continue
        names = ", ".join(
            f"`{s.name}`" + (f" of {human_size(s.size)}" if s.size else "") for s in named
        )
        rest = count - len(named)
        parts.append(f"{names}{f' and {_entries(rest)} more' if rest > 0 else ''} ({why})")
    total = sum(n for r, n in counts.items() if r != "not looked at")
    head = f"{_entries(total)} not attached" if total else "Not attached"
    return [f"{head}: {'; '.join(parts)}."]


def first_python_block(text: str) -> str | None:
    """The code of the first Python (or untagged) fenced block in a chat message, if any.

    Chat apps show a block's language tag on its first line (```` ```py ````); a block
    without one, or written on one line (```` ```x = 1``` ````), is plain code. Blocks tagged
    with another language (```` ```js ````) are skipped: running them as Python would only
    confuse. Used by "run the code in this message" on every platform.
    """
    for match in _FENCE.finditer(text):
        inner = match[1]
        first, newline, rest = inner.partition("\n")
        if newline and _TAG.fullmatch(first.strip()):
            tag, code = first.strip().lower(), rest
        else:
            tag, code = "", inner
        if tag in PYTHON_TAGS and code.strip():
            return code.strip("\n")
    return None
