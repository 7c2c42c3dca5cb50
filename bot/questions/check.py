"""``studybot questions check``: run every code item in the sandbox and judge it.

Each item with ``code`` says what its snippet does (``expect_stdout`` or ``expect_error``). For
an item written by an author that is a promise the pack makes; for an imported item it is the
*claim* of the source material (see :mod:`bot.questions.importers.cheatsheet`). Either way the
snippet is run in :class:`bot.sandbox.Sandbox` and the result judged by
:func:`bot.questions.expectations.compare`, the same rules the shipped-pack test uses, so a
row that says "disagrees" is a place where real torch and the item part ways.

Snippets never run outside the sandbox here: when it is unavailable the check stops with
the sandbox's reason. The runner is a small protocol so that the table and the verdicts can
be tested on their own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.questions.expectations import compare, exception_name, normalize_output
from bot.questions.loader import LoadedPack
from bot.questions.schema import Item
from bot.sandbox import Sandbox, SandboxConfig, SandboxUnavailable, SnippetRejected
from bot.sandbox.result import Outcome, RunResult

__all__ = [
    "CheckRow",
    "CheckTarget",
    "SnippetRunner",
    "check_items",
    "check_targets",
    "exception_line",
    "render_table",
    "run_in_sandbox",
    "sandbox_config_for_check",
]

DEFAULT_TIMEOUT_S = 60.0
_CELL = 30


class SnippetRunner(Protocol):
    """What the checker needs from a sandbox: ``run(code, timeout=...) -> RunResult``."""

    async def run(self, code: str, *, timeout: float | None = None) -> RunResult: ...  # noqa: ASYNC109


@dataclass(frozen=True, slots=True)
class CheckTarget:
    """A code item and where it is written."""

    item: Item
    pack: str
    path: str
    line: int


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One item's result: what it claims, what the run did, and the verdict.

    ``expected`` and ``got`` are short and readable (``RuntimeError`` rather than an empty
    stdout when a run that should print raised instead); ``reason`` is :class:`Verdict`'s
    sentence and ``detail`` the exception line of the traceback, when there is one.
    """

    target: CheckTarget
    ok: bool
    verdict: str  # "ok", "disagrees", "did not finish" or "not run"
    expected: str
    got: str
    reason: str
    detail: str | None
    outcome: str | None
    duration_ms: float | None

    @property
    def item_id(self) -> str:
        return self.target.item.id

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``studybot questions check --json`` (one object per item)."""
        return {
            "id": self.item_id,
            "pack": self.target.pack,
            "path": self.target.path,
            "line": self.target.line,
            "ok": self.ok,
            "verdict": self.verdict,
            "expected": self.expected,
            "got": self.got,
            "reason": self.reason,
            "detail": self.detail,
            "outcome": self.outcome,
            "duration_ms": None if self.duration_ms is None else round(self.duration_ms, 1),
        }


def check_targets(packs: Iterable[LoadedPack]) -> list[CheckTarget]:
    """The items with code, in pack order."""
    return [
        CheckTarget(item, loaded.pack.pack, loaded.path, loaded.item_lines.get(item.id, 1))
        for loaded in packs
        for item in loaded.pack.items
        if item.code is not None
    ]


async def check_items(
    targets: Sequence[CheckTarget],
    runner: SnippetRunner,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,  # noqa: ASYNC109 - passed on to every run
    jobs: int = 1,
) -> list[CheckRow]:
    """Run every target (at most ``jobs`` at once) and judge it; rows in target order.

    :class:`SandboxUnavailable` is not caught: without a sandbox there is no check, and the
    caller says why. :class:`SnippetRejected` becomes a "not run" row.
    """
    limit = asyncio.Semaphore(max(1, jobs))

    async def one(target: CheckTarget) -> CheckRow:
        async with limit:
            return await _check_one(target, runner, timeout)

    return list(await asyncio.gather(*(one(target) for target in targets)))


async def _check_one(target: CheckTarget, runner: SnippetRunner, timeout: float) -> CheckRow:  # noqa: ASYNC109
    item = target.item
    assert item.code is not None
    claim = _expected_cell(item)
    try:
        result = await runner.run(item.code, timeout=timeout)
    except SnippetRejected as exc:  # too large, NUL bytes: a row, not the end of the check
        return CheckRow(target, False, "not run", claim, "(rejected)", exc.reason, None, None, None)
    verdict = compare(item, result.stdout, result.stderr, result.exit_code)
    reason = verdict.reason
    if result.truncated:
        reason += " (output was cut at the sandbox's limit)"
    if result.outcome in {Outcome.TIMEOUT, Outcome.MEMORY_LIMIT, Outcome.KILLED}:
        reason = f"{reason}: {result.outcome.value}" + (
            f" after {timeout:g}s" if result.outcome is Outcome.TIMEOUT else ""
        )
    if verdict.ok:
        word = "ok"
    elif result.exit_code is None or result.outcome in {Outcome.TIMEOUT, Outcome.KILLED}:
        word = "did not finish"
    else:
        word = "disagrees"
    return CheckRow(
        target,
        verdict.ok,
        word,
        claim,
        _got_cell(item, result),
        reason,
        exception_line(result.stderr),
        result.outcome.value,
        result.duration_ms,
    )


def _expected_cell(item: Item) -> str:
    if item.expect_error is not None:
        return item.expect_error
    return _output_cell(item.expect_stdout or "")


def _got_cell(item: Item, result: RunResult) -> str:
    if result.exit_code is None or result.outcome in {Outcome.TIMEOUT, Outcome.KILLED}:
        return f"({result.outcome.value})"
    if result.outcome is Outcome.MEMORY_LIMIT:
        return "(memory limit)"
    if result.exit_code != 0:
        return exception_name(result.stderr) or f"(exit {result.exit_code})"
    if item.expect_error is not None:
        return f"(no error) {_output_cell(result.stdout)}"
    return _output_cell(result.stdout)


def _output_cell(text: str) -> str:
    output = normalize_output(text)
    return output.replace("\n", " \u23ce ") if output else "(no output)"


def exception_line(stderr: str) -> str | None:
    """The ``Name: message`` line that ended a traceback, cut to one readable line."""
    name = exception_name(stderr)
    if name is None:
        return None
    lines = normalize_output(stderr).split("\n")
    for line in reversed(lines):
        if line.startswith(name):
            return line if len(line) <= 200 else line[:199] + "\u2026"
    return name


def _cell(text: str, width: int = _CELL) -> str:
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def render_table(rows: Sequence[CheckRow]) -> str:
    """The table ``questions check`` prints, then one line per disagreement, then a summary."""
    header = ("id", "expected", "got", "verdict")
    body = [(r.item_id, _cell(r.expected), _cell(r.got), r.verdict) for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True))

    out = [line(header).rstrip(), line(["-" * width for width in widths])]
    out += [line(cells).rstrip() for cells in body]
    bad = [row for row in rows if not row.ok]
    if bad:
        out.append("")
        for row in bad:
            where = f"{row.target.path}:{row.target.line}"
            detail = f" [{row.detail}]" if row.detail and row.detail != row.got else ""
            out.append(f"{where}: {row.item_id}: {row.reason}{detail}")
    out.append("")
    out.append(
        f"{len(rows)} code item(s): {len(rows) - len(bad)} ok, {len(bad)} disagree "
        "with their expectation"
        if bad
        else f"{len(rows)} code item(s): all agree with their expectation"
    )
    return "\n".join(out)


def sandbox_config_for_check(config: SandboxConfig, *, timeout: float, jobs: int) -> SandboxConfig:
    """The bot's sandbox limits, with room for slow items (torch.compile) and ``jobs`` jails.

    The sandbox caps every run at its configured timeout, so a per-run ``timeout`` above it
    would be cut short. A jail's CPU limit is set once, before torch is imported, to
    ``import_cpu_seconds``, and can only be lowered afterwards; a run's CPU budget (the import
    plus the timeout) above it makes the jail fail before the snippet starts (exit 1, nothing
    on stderr, with torch 2.13 and a 120 s budget from about ``--timeout 120`` on). So the
    import budget grows with the timeout, and ``jobs`` jails may run at once. Memory, pids and
    output stay as configured.
    """
    return dataclasses.replace(
        config,
        timeout=max(config.timeout, timeout),
        pool_size=max(config.pool_size, jobs),
        max_running=max(config.max_running, jobs),  # ``jobs`` at once, none refused as busy
        import_cpu_seconds=max(config.import_cpu_seconds, math.ceil(timeout) + 120),
    )


async def run_in_sandbox(
    targets: Sequence[CheckTarget],
    config: SandboxConfig,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,  # noqa: ASYNC109 - passed on to every run
    jobs: int = 1,
) -> list[CheckRow]:
    """Start a sandbox, check every target in it, stop it.

    Raises :class:`bot.sandbox.SandboxUnavailable` (with the sandbox's own reason) when this
    host cannot isolate snippets or the sandbox is off: never runs anything unsandboxed.
    """
    async with Sandbox(config) as sandbox:
        if not sandbox.available:
            raise SandboxUnavailable(sandbox.unavailable_reason or "sandbox unavailable")
        return await check_items(targets, sandbox, timeout=timeout, jobs=jobs)
