"""The bot-side API: :class:`Sandbox`, an async context manager around the manager process.

The manager is started with an **empty environment** (``env={}``) and no inherited descriptors,
so a token in the bot's environment cannot reach it or any jail it launches; it gets only the
:class:`SandboxConfig` as one JSON line. Requests are multiplexed by id over its stdin/stdout.

``run()`` returns a :class:`RunResult` for everything a snippet can do, including crashing,
looping and exhausting memory. It raises only :class:`SnippetRejected` (refused input) and
:class:`SandboxUnavailable` (no isolation on this host, sandbox off, the manager died, or so
busy that the run got no turn within its timeout; nothing ran in any of these cases).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import sys
from pathlib import Path
from types import TracebackType
from typing import Any

from bot.log import get_logger
from bot.sandbox.config import SandboxConfig
from bot.sandbox.errors import SandboxBusy, SandboxUnavailable
from bot.sandbox.exercise import ExerciseJob
from bot.sandbox.result import RunResult
from bot.sandbox.validate import Snippet, validate_snippet

__all__ = ["Sandbox"]

log = get_logger(__name__)

_LINE_LIMIT = 128 * 1024 * 1024  # a result with 10 files of 8 MiB, in base64
_ANSWER_MARGIN = 30.0  # seconds beyond a run's own limits before the manager counts as gone
_PACKAGE_ROOT = Path(__file__).resolve().parents[3]


class Sandbox:
    """Run untrusted snippets in single-use jails from a pre-warmed pool.

    ``async with Sandbox(config) as sandbox: result = await sandbox.run(code)``. After
    ``start()``, ``available`` says whether snippets can run; if not, ``unavailable_reason`` is
    a one-line explanation for operators and members (e.g. ``bwrap not found at ...``).

    The sandbox becoming unavailable is logged as a warning (or an error, if the manager dies)
    unless ``log_unavailable`` is False: a caller that reports the reason itself (the CLI)
    would otherwise show it twice. It is then logged at DEBUG.
    """

    def __init__(
        self,
        config: SandboxConfig,
        *,
        hello_timeout: float = 120.0,
        log_unavailable: bool = True,
    ) -> None:
        self.config = config
        self._hello_timeout = hello_timeout
        self._log_unavailable = log_unavailable
        self._proc: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._reader: asyncio.Task[None] | None = None
        self._logger: asyncio.Task[None] | None = None
        self._available = False
        self._reason: str | None = "sandbox not started"
        self._lock = asyncio.Lock()

    @property
    def available(self) -> bool:
        return self._available

    @property
    def unavailable_reason(self) -> str | None:
        return None if self._available else self._reason

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Start the manager and wait for its verdict on this host. Never raises for a bad host."""
        if not self.config.enabled:
            self._reason = "sandbox disabled (SANDBOX_ENABLED=false)"
            return
        try:
            self._proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-s",
                "-m",
                "bot.sandbox.host.manager",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env={},
                cwd=str(_PACKAGE_ROOT),
                close_fds=True,
                limit=_LINE_LIMIT,
            )
        except OSError as exc:
            self._reason = f"cannot start the sandbox manager: {exc}"
            return
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        assert self._proc.stderr is not None
        self._logger = asyncio.create_task(self._forward_logs(self._proc.stderr))
        hello_line = json.dumps({"op": "config", "config": self.config.to_json()}) + "\n"
        self._proc.stdin.write(hello_line.encode())
        try:
            await self._proc.stdin.drain()
            line = await asyncio.wait_for(self._proc.stdout.readline(), self._hello_timeout)
            hello = json.loads(line) if line else {}
        except (OSError, ValueError, TimeoutError) as exc:
            hello = {"available": False, "reason": f"sandbox manager did not answer: {exc!r}"}
        if not hello:
            hello = {"available": False, "reason": "sandbox manager exited during start-up"}
        self._available = bool(hello.get("available"))
        self._reason = None if self._available else str(hello.get("reason") or "unknown")
        if self._available:
            self._reader = asyncio.create_task(self._read_responses(self._proc.stdout))
            cfg = self.config
            if cfg.fork_server:
                log.info("sandbox ready (fork server, %d children ahead)", cfg.forks_ahead)
            else:
                log.info("sandbox ready (pool of %d)", cfg.pool_size)
        else:
            level = logging.WARNING if self._log_unavailable else logging.DEBUG
            log.log(level, "sandbox unavailable: %s", self._reason)
            await self._stop_manager()

    async def _forward_logs(self, stderr: asyncio.StreamReader) -> None:
        # Given the stream, not self._proc: _stop_manager() clears that while this task drains.
        while line := await stderr.readline():
            log.info("manager: %s", line.decode("utf-8", "replace").rstrip())

    async def _read_responses(self, stdout: asyncio.StreamReader) -> None:
        try:
            while line := await stdout.readline():
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                fut = self._pending.pop(message.get("id"), None)
                if fut is not None and not fut.done():
                    fut.set_result(message)
        finally:
            self._available = False
            if self._reason is None:
                self._reason = "sandbox manager exited unexpectedly"
                log.log(logging.ERROR if self._log_unavailable else logging.DEBUG, self._reason)
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(SandboxUnavailable(self._reason))
            self._pending.clear()

    async def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        if not self._available or self._proc is None or self._proc.stdin is None:
            raise SandboxUnavailable(self._reason or "sandbox unavailable")
        rid = next(self._ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = fut
        try:
            async with self._lock:
                self._proc.stdin.write(json.dumps({"id": rid, **message}).encode() + b"\n")
                await self._proc.stdin.drain()
        except (OSError, RuntimeError) as exc:
            self._pending.pop(rid, None)
            raise SandboxUnavailable(f"sandbox manager is gone: {exc}") from exc
        try:
            # A run answers within its wall clock in the queue for a turn, then a cold jail
            # start at worst, then its wall clock; a manager that says nothing for longer than
            # that is treated as gone, not waited on forever.
            limit = 2 * self.config.timeout + self.config.startup_timeout + _ANSWER_MARGIN
            async with asyncio.timeout(limit):
                response = await fut
        except TimeoutError:
            raise SandboxUnavailable("the sandbox manager stopped answering") from None
        finally:
            self._pending.pop(rid, None)
        if "error" in response:
            if response.get("busy"):
                raise SandboxBusy(str(response["error"]))
            raise SandboxUnavailable(str(response["error"]))
        result = response.get("result")
        return result if isinstance(result, dict) else {}

    async def run(
        self,
        code: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        graph: tuple[str, ...] | None = None,
        svg: bool = False,
        background: bool = False,
        exercise: ExerciseJob | None = None,
    ) -> RunResult:
        """Run ``code`` once in a fresh jail. ``timeout`` (seconds) is capped at the config's.

        ``background`` runs (pack checks) take a turn only when no member's run waits, and
        never all the slots (``turns.py``).

        With ``graph`` (names of tensors, or ``()`` for the last one the snippet assigned with
        a ``grad_fn``) the result also carries the autograd graph (``RunResult.graph``) and its
        picture among the files.

        With ``exercise`` (entry, checks, seed, forbid: ``bot.services.exercises`` builds it)
        the code is a solution: the jail calls its function on each check's arguments and the
        result carries the values (``RunResult.exercise``), for the host to compare.
        """
        # Validated once: a Snippet was checked where it entered (the bot's /run).
        text = code if isinstance(code, Snippet) else validate_snippet(code, self.config.max_bytes)
        request: dict[str, Any] = {
            "op": "run", "code": text, "timeout": self.config.clamp_timeout(timeout)
        }  # fmt: skip
        if graph is not None:
            request["graph"] = {"of": list(graph), "svg": svg}
        if background:
            request["background"] = True
        if exercise is not None:
            request["exercise"] = exercise.to_wire()
        data = await self._request(request)
        return RunResult.from_wire(data)

    async def status(self) -> dict[str, Any]:
        """Pool counters: ``warm``, ``starting``, ``running``, ``queued``, ``runs``, ..."""
        return await self._request({"op": "status"})

    async def wait_warm(self, count: int | None = None, within: float = 300.0) -> None:
        """Wait until ``count`` (default: the pool size) warm jails are waiting."""
        cfg = self.config
        want = (cfg.forks_ahead if cfg.fork_server else cfg.pool_size) if count is None else count
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while (await self.status()).get("warm", 0) < want:
            if loop.time() > deadline:
                raise TimeoutError(f"pool did not reach {want} warm jails in {within:.0f}s")
            await asyncio.sleep(0.05)

    async def _stop_manager(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.returncode is None and proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.write(b'{"op": "shutdown"}\n')
                await proc.stdin.drain()
                proc.stdin.close()
            try:
                await asyncio.wait_for(proc.wait(), 15)
            except TimeoutError:
                log.warning("sandbox manager did not stop; killing it")
                proc.kill()
                await proc.wait()
        for task in (self._reader, self._logger):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                    await asyncio.wait_for(task, 5)

    async def close(self) -> None:
        """Stop the manager; it kills every jail and removes its cgroups on the way out."""
        if self._available:
            self._reason = "sandbox closed"
        self._available = False
        await self._stop_manager()
