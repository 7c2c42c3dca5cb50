"""Where a run gets its process: the fork server first, single-use jails when it is down.

With the fork server (``SandboxConfig.fork_server``, the default) ``pool_size`` children are
forked ahead from the torch-warm zygote (``zygote.py``), and no whole jail is kept warm. While
the zygote starts or restarts, a run cold-starts a single-use jail of its own, so ``/run``
keeps working. Without the fork server, ``pool_size`` whole jails that have already imported
torch wait for one snippet each, refilled in the background whenever one is taken. Warming
jails run with a low CPU weight so they do not slow the snippets that are running. A failing
refill backs off instead of spinning, and remembers its error for ``status``.

At most ``max_running`` runs hold a jail at once, whoever asked (the chat limits each member to
one at a time, not the host); the others queue, each for at most its own wall clock, and are
then refused with :class:`PoolBusy` without having run.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Coroutine
from typing import Any

from bot.log import get_logger
from bot.sandbox.host.jail import Jail, JailEnv, JailError
from bot.sandbox.host.onerun import NotDelivered, OneRun
from bot.sandbox.host.turns import Turns
from bot.sandbox.host.zygote import ForkServer
from bot.sandbox.result import RunResult

__all__ = ["Pool", "PoolBusy"]

log = get_logger(__name__)


class PoolBusy(RuntimeError):
    """A run waited its whole wall clock for a turn and did not get one; nothing ran."""


class Pool:
    def __init__(self, env: JailEnv) -> None:
        self.env = env
        self.size = env.config.pool_size
        self._warm: collections.deque[Jail] = collections.deque()
        self._starting = 0
        self._running = 0
        self._queued = 0
        self._slots = asyncio.Semaphore(max(1, env.config.max_starting))
        self.max_running = max(1, env.config.max_running)
        # Members' runs first; pack checks hold at most all but one slot between them.
        self._turns = Turns(self.max_running, self.max_running - 1)
        self._tasks: set[asyncio.Task[None]] = set()
        self._cleanups: set[asyncio.Task[None]] = set()  # never cancelled
        self._backoff = 0.0
        self._closed = False
        self.last_error = ""
        self.runs = 0
        self.cold_starts = 0
        self.forkserver = ForkServer(env) if env.config.fork_server else None

    def status(self) -> dict[str, object]:
        fs = self.forkserver
        status: dict[str, object] = {
            "warm": len(self._warm) + (fs.warm if fs else 0),
            "starting": self._starting + (fs.forking if fs else 0),
            "running": self._running,
            "queued": self._queued,
            "running_checks": self._turns.background,
            "max_running": self.max_running,
            "size": self.size,
            "runs": self.runs,
            "cold_starts": self.cold_starts,
            "last_error": self.last_error,
        }
        if fs is not None:
            status |= fs.status()
        return status

    def start(self) -> None:
        if self.forkserver is not None:
            self.forkserver.start()
        else:
            self.refill()

    def refill(self) -> None:
        if self.forkserver is not None:
            self.forkserver.refill()
            return
        while not self._closed and len(self._warm) + self._starting < self.size:
            self._starting += 1
            self._spawn(self._warm_one())

    async def _launch(self) -> Jail:
        async with self._slots:
            jail = Jail(self.env)
            await jail.start()
            return jail

    async def _warm_one(self) -> None:
        try:
            if self._backoff:
                await asyncio.sleep(self._backoff)
            jail = await self._launch()
        except JailError as exc:
            self.last_error = str(exc)
            self._backoff = min(30.0, max(0.5, self._backoff * 2))
            log.warning("warming a jail failed (retry in %.1fs): %s", self._backoff, exc)
            self._starting -= 1
            self.refill()
            return
        except asyncio.CancelledError:
            self._starting -= 1
            raise
        self._starting -= 1
        self._backoff = 0.0
        if self._closed:
            await jail.destroy()
            return
        self._warm.append(jail)

    async def _acquire(self) -> OneRun:
        if self.forkserver is not None:
            child = await self.forkserver.take()
            if child is not None:
                return child
        while self._warm:
            jail = self._warm.popleft()
            if jail.alive:
                return jail
            await jail.destroy()
        if self._closed:
            raise JailError("the sandbox is shutting down")
        self.cold_starts += 1
        return await self._launch()

    async def run(
        self,
        code: str,
        wall: float,
        extra: dict[str, object] | None = None,
        *,
        background: bool = False,
    ) -> RunResult:
        """Run one snippet in a warm (or, failing that, a fresh) jail, then throw it away.

        Waits for a turn first (at most ``wall`` seconds, else :class:`PoolBusy`); a
        ``background`` run (a pack check) waits behind members' runs (:class:`Turns`).
        """
        self._queued += 1
        try:
            async with asyncio.timeout(wall):
                await self._turns.acquire(background=background)
        except TimeoutError:
            n = self.max_running
            raise PoolBusy(
                f"the sandbox is busy ({n} snippet{'s' if n != 1 else ''} at a time) and no turn"
                f" came within {wall:g} s; try again in a moment"
            ) from None
        finally:
            self._queued -= 1
        try:
            return await self._run_in_jail(code, wall, extra or {})
        finally:
            self._turns.release(background=background)

    async def _run_in_jail(self, code: str, wall: float, extra: dict[str, object]) -> RunResult:
        self._running += 1
        started = time.monotonic()
        jail: OneRun | None = None
        try:
            for attempt in range(3):
                jail = await self._acquire()
                self.refill()
                try:
                    return await jail.run(code, wall, extra)
                except NotDelivered as exc:
                    if attempt == 2:
                        raise JailError(f"no process took the snippet: {exc}") from exc
                    log.info("a ready process was gone before the code reached it; retrying")
                    await jail.destroy()
                    jail = None
            raise AssertionError("unreachable")
        finally:
            self._running -= 1
            self.runs += 1
            if jail is not None:
                # Every process of the jail is dead once run() returns (bwrap has reaped the
                # namespace's init); removing the cgroup and closing pipes need not delay the
                # answer, so they happen right after it.
                cleanup = asyncio.create_task(jail.destroy())
                self._cleanups.add(cleanup)
                cleanup.add_done_callback(self._cleanups.discard)
            self.refill()
            log.debug("run took %.0f ms end to end", (time.monotonic() - started) * 1000)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        self._closed = True
        if self.forkserver is not None:
            await self.forkserver.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        while self._warm:
            await self._warm.popleft().destroy()
        if self._cleanups:
            await asyncio.gather(*self._cleanups, return_exceptions=True)
