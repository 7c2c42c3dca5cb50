"""``studybot questions check``: run every code item and every check in the sandbox and judge it.

Each item with ``code`` says what its snippet does (``expect_stdout`` or ``expect_error``). For
an item written by an author that is a promise the pack makes; for an imported item it is the
*claim* of the source material (see :mod:`bot.questions.importers.cheatsheet`). An item's
``checks`` back statements of its prose (an explanation, a choice's ``why``, a step) the same
way: a snippet and what it does. Either way the snippet is run in
:class:`bot.sandbox.Sandbox` and the result judged by
:func:`bot.questions.expectations.compare`, the same rules the shipped-pack test uses, so a
row that says "disagrees" is a place where real torch and the pack part ways.

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

from bot.questions.expectations import (
    SupportsExpectation,
    compare,
    exception_name,
    normalize_output,
)
from bot.questions.loader import LoadedPack
from bot.questions.schema import Check, Item, prose_checks
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
    """A snippet to run and where it is written: an item's own ``code`` (``check`` is None),
    or one of its ``checks``, at the check's line."""

    item: Item
    pack: str
    path: str
    line: int
    check: Check | None = None

    @property
    def code(self) -> str:
        code = self.check.code if self.check is not None else self.item.code
        assert code is not None, "a target always has code"
        return code

    @property
    def expectation(self) -> SupportsExpectation:
        return self.check if self.check is not None else self.item

    @property
    def claim(self) -> str | None:
        """The texts a check backs (``"choice 2, step 3"``); None for the item's own code."""
        return self.check.claim if self.check is not None else None

    @property
    def label(self) -> str:
        """The item id, and for a check the texts it backs: ``dg-mc-12 [explanation]``."""
        return self.item.id if self.claim is None else f"{self.item.id} [{self.claim}]"


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One item's result: what it claims, what the run did, and the verdict.

    ``expected`` and ``got`` are short and readable (``RuntimeError`` rather than an empty
    stdout when a run that should print raised instead); ``reason`` is :class:`OutputMatch`'s
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
        """The JSON shape of ``studybot questions check --json``: one object per snippet, with
        ``claim`` naming the texts a check backs (``None`` for the item's own code)."""
        return {
            "id": self.item_id,
            "claim": self.target.claim,
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
    """Every snippet, in pack order: each item's own code, then its checks."""
    targets: list[CheckTarget] = []
    for loaded in packs:
        slug, path = loaded.pack.pack, loaded.path
        for item in loaded.pack.items:
            line = loaded.item_lines.get(item.id, 1)
            if item.code is not None:
                targets.append(CheckTarget(item, slug, path, line))
            for number, check in enumerate(prose_checks(item)):
                at = loaded.check_lines.get((item.id, number), line)
                targets.append(CheckTarget(item, slug, path, at, check))
    return targets


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
    expectation = target.expectation
    expected = _expected_cell(expectation)
    try:
        result = await runner.run(target.code, timeout=timeout)
    except SnippetRejected as exc:  # too large, NUL bytes: a row, not the end of the check
        return CheckRow(
            target, False, "not run", expected, "(rejected)", exc.reason, None, None, None
        )
    verdict = compare(expectation, result.stdout, result.stderr, result.exit_code)
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
        expected,
        _got_cell(expectation, result),
        reason,
        exception_line(result.stderr),
        result.outcome.value,
        result.duration_ms,
    )


def _expected_cell(item: SupportsExpectation) -> str:
    if item.expect_error is not None:
        return item.expect_error
    return _output_cell(item.expect_stdout or "")


def _got_cell(item: SupportsExpectation, result: RunResult) -> str:
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
    """The table ``questions check`` prints, then one line per disagreement, then a summary.

    A check's row is labelled with its item's id and the texts it backs:
    ``dg-mc-12 [explanation]`` in the table, ``file:line: dg-mc-12: check backing
    explanation: reason`` (at the check's line) among the disagreements.
    """
    header = ("id", "expected", "got", "verdict")
    body = [(r.target.label, _cell(r.expected), _cell(r.got), r.verdict) for r in rows]
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
            backing = "" if row.target.claim is None else f"check backing {row.target.claim}: "
            out.append(f"{where}: {row.item_id}: {backing}{row.reason}{detail}")
    out.append("")
    checks = sum(row.target.check is not None for row in rows)
    counted = f"{len(rows) - checks} code item(s)" + (f" and {checks} check(s)" if checks else "")
    out.append(
        f"{counted}: {len(rows) - len(bad)} ok, {len(bad)} disagree with their expectation"
        if bad
        else f"{counted}: all agree with their expectation"
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
