"""The manager's side of one snippet run, shared by both kinds of process that can hold one.

A single-use jail (``jail.py``: bwrap per run) and a fork-server child (``zygote.py``) speak the
same protocol: a header line and the code on ``ctrl``, the snippet's output on ``out`` and
``err``, one report line on ``status``. They differ only in how the real exit status is learnt
and how everything is killed, which subclasses say in three methods.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import re
import secrets
import time

from bot.log import get_logger
from bot.sandbox.exercise import ExerciseReport, ExerciseReportInvalid, parse_exercise_report
from bot.sandbox.graph import GRAPH_UNREADABLE, AutogradGraph, GraphReportInvalid, parse_graph
from bot.sandbox.host.aio import (
    ByteBudget,
    CappedBuffer,
    close_fd,
    drain_capped,
    read_chunk,
    read_line,
    write_all,
)
from bot.sandbox.host.cgroups import Cgroup
from bot.sandbox.host.images import file_type, honest_name
from bot.sandbox.host.outcome import classify, plausible_report
from bot.sandbox.result import LEFT_OUT_REASONS, RunFile, RunResult, SkippedFile
from bot.text import clean_text

__all__ = ["NotDelivered", "OneRun", "clean_file_name"]

log = get_logger(__name__)

_MAX_DEPTH = 3  # sub-folders, as pictures.MAX_DEPTH
_MAX_NAMED = 20  # left-out entries named, as pictures.MAX_NAMED

_REPORT_LIMIT = 4 * 1024 * 1024  # the report line: exit status, file list, autograd graph
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def clean_file_name(name: str) -> str:
    """A path of parts made of ``[A-Za-z0-9._-]`` only (``plots/fig.png``), at most 100
    characters each and :data:`_MAX_DEPTH` deep, never hidden, absolute or empty.

    The jail cleans names too; this side does not rely on it.
    """
    parts = [_UNSAFE.sub("_", p)[:100].lstrip(".") for p in name.split("/")[: _MAX_DEPTH + 1]]
    return "/".join(p or "file" for p in parts) if any(parts) else "file"


def _left_out(
    report: dict[str, object],
) -> tuple[tuple[SkippedFile, ...], tuple[tuple[str, int], ...]]:
    """The named left-out entries and the counts by reason, as far as they are believable.

    A reason outside :data:`LEFT_OUT_REASONS` is dropped; counts are at least the named ones.
    """
    named: list[SkippedFile] = []
    raw = report.get("skipped_files")
    for item in raw[:_MAX_NAMED] if isinstance(raw, list) else ():
        if not isinstance(item, dict) or item.get("reason") not in LEFT_OUT_REASONS:
            continue
        size = item.get("size")
        named.append(
            SkippedFile(
                clean_file_name(str(item.get("name", ""))),
                size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else 0,
                str(item["reason"]),
            )
        )
    counts = collections.Counter(s.reason for s in named)
    raw_counts = report.get("skipped_counts")
    for reason, n in raw_counts.items() if isinstance(raw_counts, dict) else ():
        if reason in LEFT_OUT_REASONS and isinstance(n, int) and not isinstance(n, bool):
            counts[reason] = max(counts[reason], min(n, 10**9))
    return tuple(named), tuple((r, counts[r]) for r in LEFT_OUT_REASONS if counts[r] > 0)


def _graph(report: dict[str, object]) -> tuple[AutogradGraph | None, str | None]:
    """The graph the report carries, checked whole; or why there is none."""
    raw = report.get("graph")
    failed = report.get("graph_error")
    if isinstance(raw, dict) and "error" in raw and "nodes" not in raw:
        return None, clean_text(str(raw["error"]), 300)
    if raw is None:
        return None, None if failed is None else clean_text(str(failed), 300)
    try:
        return parse_graph(raw), None
    except GraphReportInvalid as exc:
        log.info("a run's graph report was refused: %s", exc)
        return None, GRAPH_UNREADABLE


def _exercise(report: dict[str, object]) -> ExerciseReport | None:
    """An exercise run's values, checked whole; None when absent or refused."""
    raw = report.get("exercise")
    if raw is None:
        return None
    try:
        return parse_exercise_report(raw)
    except ExerciseReportInvalid as exc:
        log.info("a run's exercise report was refused: %s", exc)
        return None


class NotDelivered(RuntimeError):
    """The snippet never reached the process meant to run it; nothing ran."""


class OneRun:
    """Descriptors and the run logic for exactly one snippet; see the module docstring."""

    output_bytes: int
    max_files: int
    max_file_bytes: int
    cgroup: Cgroup | None

    def __init__(self) -> None:
        self._mine: list[int] = []  # parent-side fds to close on destroy
        self._ctrl = self._status = self._out = self._err = -1
        self._status_pending = bytearray()

    # What a subclass says -------------------------------------------------------------------

    async def _wait_exit(self) -> None:
        """Return once the run's first process has ended (or is known to be gone)."""
        raise NotImplementedError

    def _exit_status(self) -> int | None:
        """The real exit status after :meth:`_wait_exit` (negative: killed by that signal)."""
        raise NotImplementedError

    def _kill_namespace(self) -> None:
        """SIGKILL the run's pid namespace: no snippet instruction runs after this."""
        raise NotImplementedError

    def _kill(self) -> None:
        """Kill everything of the run (namespace, cgroup), for a timeout."""
        raise NotImplementedError

    @property
    def alive(self) -> bool:
        """Whether the process waiting for the snippet is still there."""
        raise NotImplementedError

    async def destroy(self) -> None:
        """Kill what is left, remove the cgroup, close our descriptors. Idempotent."""
        raise NotImplementedError

    # Shared ---------------------------------------------------------------------------------

    def _close_mine(self, fd: int) -> None:
        """Close one of our descriptors exactly once.

        Closing twice is not harmless here: runs start concurrently, the number may already
        belong to another run's pipe, and a stray close would cross-wire or break it.
        """
        if fd in self._mine:
            self._mine.remove(fd)
            close_fd(fd)

    def _close_all_mine(self) -> None:
        for fd in list(self._mine):
            self._close_mine(fd)

    async def _read_ready(self, within: float) -> bytes | None:
        return await asyncio.wait_for(read_line(self._status, self._status_pending), within)

    async def run(
        self, code: str, wall: float, extra: dict[str, object] | None = None
    ) -> RunResult:
        """Send the snippet, enforce the wall clock, collect output, classify the ending.

        ``extra`` joins the request's header (``graph``: draw the autograd graph).
        """
        assert self.cgroup is not None
        # One budget for both streams: SANDBOX_OUTPUT_BYTES is the most a run can send back.
        budget = ByteBudget(self.output_bytes)
        out, err = CappedBuffer(budget=budget), CappedBuffer(budget=budget)
        self.cgroup.set_cpu_weight(running=True)
        body = code.encode("utf-8")
        files_cap = {"max": self.max_files, "bytes": self.max_file_bytes}
        # An exercise's report decides a verdict, and the snippet can write lines of its own on
        # the status pipe: only a line carrying this run's nonce is the worker's.
        nonce = secrets.token_hex(16) if extra and "exercise" in extra else None
        sealed = {"nonce": nonce} if nonce else {}
        header = (
            json.dumps(
                {
                    "timeout": wall,
                    "size": len(body),
                    "files": files_cap,
                    **(extra or {}),
                    **sealed,
                }
            ).encode()
            + b"\n"
        )
        readers = [
            asyncio.create_task(drain_capped(self._out, out)),
            asyncio.create_task(drain_capped(self._err, err)),
        ]
        started = time.monotonic()
        timed_out = False
        report: dict[str, object] | None = None
        files: tuple[RunFile, ...] = ()
        try:
            try:
                await asyncio.wait_for(write_all(self._ctrl, header + body), wall)
                self._close_mine(self._ctrl)
                receipt = await asyncio.wait_for(
                    read_line(self._status, self._status_pending),
                    max(0.0, wall - (time.monotonic() - started)),
                )
            except (BrokenPipeError, ConnectionResetError):
                receipt = None
            if receipt != b"started":
                # The process died before it took the code (its zygote was killed, say):
                # nothing of the snippet ran, so another process may take the run.
                for task in readers:
                    task.cancel()
                raise NotDelivered("the process ended before it read the snippet")
            remaining = max(0.0, wall - (time.monotonic() - started))
            report = await asyncio.wait_for(self._report_or_exit(nonce), remaining)
            if report is not None and plausible_report(report):
                remaining = max(0.0, wall - (time.monotonic() - started))
                files = await self._read_files(report, remaining)
            if report is not None and not plausible_report(report):
                # A line the snippet forged: only the real exit status can say how it ended.
                report = None
                remaining = max(0.0, wall - (time.monotonic() - started))
                await asyncio.wait_for(self._wait_exit(), remaining)
        except TimeoutError:
            timed_out = True
            self._kill()
            await self._wait_exit()
        duration_ms = (time.monotonic() - started) * 1000
        if report is not None:
            # The snippet has flushed, closed its output and is exiting. Tearing down a process
            # that mapped torch takes the kernel 30-60 ms; nothing of the snippet can run any
            # more once its namespace's init is SIGKILLed, so the answer need not wait for the
            # reaping, which destroy() finishes (and checks) right after.
            self._kill_namespace()
        # EOF comes when the last holder of the pipes is gone: at once on the fast path, or
        # once the namespace has been reaped.
        _, pending = await asyncio.wait(readers, timeout=2)
        for task in pending:
            task.cancel()
        result = classify(
            returncode=None if report is not None else self._exit_status(),
            timed_out=timed_out,
            report=report,
            oom_kills=self.cgroup.oom_kills(),
            stdout=out.data.decode("utf-8", "replace"),
            stderr=err.data.decode("utf-8", "replace"),
            truncated=out.truncated or err.truncated,
            duration_ms=duration_ms,
        )
        if report is None:
            return result
        named, counts = _left_out(report)
        graph, graph_error = _graph(report)
        return dataclasses.replace(
            result,
            exercise=_exercise(report),
            files=files,
            skipped_files=named,
            skipped_counts=counts,
            graph=graph,
            graph_error=graph_error,
        )

    async def _read_files(self, report: dict[str, object], within: float) -> tuple[RunFile, ...]:
        """The bytes that follow the report, as it declares them; nothing if it overclaims.

        The declaration comes from the jail, so it is checked against our own caps before a
        byte is read, and reading stops at the run's wall clock.
        """
        declared = report.get("files")
        if not isinstance(declared, list) or not declared:
            return ()
        wanted: list[tuple[str, int]] = []
        for item in declared[: self.max_files + 1]:
            if not isinstance(item, dict):
                return ()
            name, size = item.get("name"), item.get("size")
            if not isinstance(name, str) or not isinstance(size, int) or isinstance(size, bool):
                return ()
            if not 0 <= size <= self.max_file_bytes:
                return ()
            wanted.append((clean_file_name(name), size))
        if len(wanted) > self.max_files:
            return ()
        total = sum(size for _, size in wanted)
        buffer = bytearray(self._status_pending)
        self._status_pending.clear()
        try:
            async with asyncio.timeout(max(0.05, within)):
                while len(buffer) < total:
                    chunk = await read_chunk(self._status, min(1 << 20, total - len(buffer)))
                    if not chunk:
                        return ()
                    buffer += chunk
        except TimeoutError:
            return ()
        out, at = [], 0
        for name, size in wanted:
            data = bytes(buffer[at : at + size])
            # Decoding a large picture takes a while: off the loop that serves the other runs.
            mime = await asyncio.to_thread(file_type, data)
            out.append(RunFile(honest_name(name, mime), data, mime))
            at += size
        return tuple(out)

    async def _sealed_line(self, nonce: str | None) -> bytes | None:
        """The next report line; with a ``nonce``, the first that carries it (lines the
        snippet wrote itself are skipped)."""
        while True:
            raw = await read_line(self._status, self._status_pending, limit=_REPORT_LIMIT)
            if raw is None or nonce is None:
                return raw
            with contextlib.suppress(ValueError):
                parsed = json.loads(raw)
                if isinstance(parsed, dict) and parsed.get("nonce") == nonce:
                    return raw

    async def _report_or_exit(self, nonce: str | None = None) -> dict[str, object] | None:
        """The snippet's report if it sends one; None once the run ends without one."""
        report_task = asyncio.create_task(self._sealed_line(nonce))
        exit_task = asyncio.create_task(self._wait_exit())
        try:
            await asyncio.wait({report_task, exit_task}, return_when=asyncio.FIRST_COMPLETED)
            raw = report_task.result() if report_task.done() else None
            if raw is None and len(self._status_pending) > _REPORT_LIMIT:
                # Longer than any report the worker writes: the snippet's own line. Read and
                # drop the rest so that nothing blocks on a full pipe, and let the real exit
                # status say how the run ended (a finished run is not a timeout).
                self._status_pending.clear()
                drained = asyncio.create_task(drain_capped(self._status, CappedBuffer(0)))
                try:
                    await exit_task
                finally:
                    drained.cancel()
            elif raw is None and not exit_task.done():
                await exit_task  # the status pipe closed: the snippet is dying
        finally:
            for task in (report_task, exit_task):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if not raw:
            return None
        try:
            parsed = json.loads(raw)
        except ValueError:
            return None
        if isinstance(parsed, dict):
            parsed.pop("nonce", None)
        return parsed if isinstance(parsed, dict) and "exit_code" in parsed else None
