"""The manager's side of the fork server: keep one torch-warm zygote up, fork children ahead.

One jail (``Jail(zygote=True)``, running ``forkserver.py``) imports torch once. For each run the
manager creates a cgroup and five descriptors, and sends the descriptors to the zygote with a
``fork`` request (``SCM_RIGHTS``). The zygote's child makes fresh namespaces and says ``hi``
from their pid 1 on a socket where the kernel attaches its host pid (``SO_PASSCRED``); the
manager pins that process with a pidfd, moves it into the run's cgroup and answers ``go``. Only
then is the snippet's process forked, locked down, and told to wait for code. A run then costs
a pipe write and the snippet itself; ``ahead`` children wait ready at all times.

If the zygote dies, its children die with its pid namespace; the manager restarts it with
backoff, and runs take the single-use jail path (``Jail``) until it is back.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import select
import signal
import socket
import struct
import time

from bot.log import get_logger
from bot.sandbox.host.aio import close_fd, wait_readable
from bot.sandbox.host.cgroups import Cgroup
from bot.sandbox.host.jail import Jail, JailEnv, JailError
from bot.sandbox.host.onerun import OneRun

__all__ = ["ForkServer", "ForkedRun"]

log = get_logger(__name__)

_SET_UP_WITHIN = 30.0  # seconds for a child to reach "ready" (fork + namespaces + mounts)
_HEALTHY_AFTER = 60.0  # a zygote up this long resets the restart backoff
_UCRED = struct.Struct("iII")  # pid, uid, gid


class ForkedRun(OneRun):
    """One fork-server child: its pid 1 (G) holds ``talk``; its snippet process holds the rest."""

    def __init__(self, output_bytes: int, max_files: int, max_file_bytes: int) -> None:
        super().__init__()
        self.output_bytes = output_bytes
        self.max_files = max_files
        self.max_file_bytes = max_file_bytes
        self.cgroup: Cgroup | None = None
        self.talk: socket.socket | None = None
        self._init_fd = -1  # pidfd of G: SIGKILL ends the run's whole pid namespace
        self._exit: int | None = None
        self._exit_known = False
        self._exit_reader: asyncio.Future[None] | None = None
        self.ready_at = 0.0

    @property
    def alive(self) -> bool:
        # G is not our child (its parent left at once), but its pidfd turns readable when it
        # exits all the same.
        return self._init_fd >= 0 and not select.select([self._init_fd], [], [], 0)[0]

    async def _wait_exit(self) -> None:
        # One reader for the whole run, shielded: a caller that gives up waiting (the report
        # came first) must not take G's "exit N" message with it.
        if self._exit_reader is None:
            self._exit_reader = asyncio.ensure_future(self._read_exit())
        await asyncio.shield(self._exit_reader)

    async def _read_exit(self) -> None:
        if self._exit_known or self.talk is None:
            return
        loop = asyncio.get_running_loop()
        while True:
            try:
                data = await loop.sock_recv(self.talk, 64)
            except OSError:
                data = b""
            if not data:  # G died without a word (killed): no status to report
                break
            if data.startswith(b"exit "):
                with contextlib.suppress(ValueError):
                    self._exit = int(data[5:])
                break
        self._exit_known = True

    def _exit_status(self) -> int | None:
        return self._exit

    def _kill_namespace(self) -> None:
        if self._init_fd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._init_fd, signal.SIGKILL)

    def _kill(self) -> None:
        self._kill_namespace()
        if self.cgroup is not None:
            self.cgroup.kill(deadline=1.0)

    async def destroy(self) -> None:
        """Kill what is left, remove the cgroup, close our descriptors. Idempotent."""
        self._kill_namespace()
        try:
            if self._init_fd >= 0:
                with contextlib.suppress(OSError, TimeoutError):
                    await asyncio.wait_for(wait_readable(self._init_fd), 5)
        finally:
            if self.cgroup is not None:
                cgroup, self.cgroup = self.cgroup, None
                await asyncio.to_thread(cgroup.remove)
            if self._init_fd >= 0:
                close_fd(self._init_fd)
                self._init_fd = -1
            if self._exit_reader is not None and not self._exit_reader.done():
                self._exit_reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, OSError):
                    await self._exit_reader
            if self.talk is not None:
                self.talk.close()
                self.talk = None
            self._close_all_mine()


def _descriptors(run: ForkedRun) -> list[int]:
    """Create a run's pipes and G's socket; ours go on ``run``, theirs are returned to send."""
    theirs: list[int] = []

    def pipe(*, ours: str) -> int:
        r, w = os.pipe2(os.O_CLOEXEC)
        mine, other = (r, w) if ours == "r" else (w, r)
        os.set_blocking(mine, False)
        run._mine.append(mine)
        theirs.append(other)
        return mine

    try:
        run._ctrl = pipe(ours="w")
        run._status = pipe(ours="r")
        run._out = pipe(ours="r")
        run._err = pipe(ours="r")
        talk, their_talk = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except OSError:
        for fd in theirs:
            close_fd(fd)
        raise
    talk.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    talk.setblocking(False)
    run.talk = talk
    theirs.append(their_talk.detach())
    return theirs


class ForkServer:
    """The zygote jail and the children it forked ahead; see the module docstring."""

    def __init__(self, env: JailEnv) -> None:
        self.env = env
        self.ahead = max(0, env.config.forks_ahead)
        self.jail: Jail | None = None
        self.state = "down"  # "starting", "up", "down"
        self.restarts = 0
        self.last_error = ""
        self._warm: collections.deque[ForkedRun] = collections.deque()
        self._forking = 0
        self._send_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._keeper: asyncio.Task[None] | None = None
        self._closed = False
        self._settled = asyncio.Event()  # clear while the zygote is starting

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def up(self) -> bool:
        return self.state == "up" and self.jail is not None and self.jail.alive

    def status(self) -> dict[str, object]:
        return {
            "zygote": self.state,
            "zygote_pid": self.jail.child_pid if self.jail is not None else None,
            "zygote_restarts": self.restarts,
            "forking": self._forking,
            "forked_warm": len(self._warm),
        }

    @property
    def warm(self) -> int:
        return len(self._warm)

    @property
    def forking(self) -> int:
        return self._forking

    def start(self) -> None:
        self._keeper = asyncio.create_task(self._keep_up())

    async def _keep_up(self) -> None:
        """Start the zygote; when it dies, start it again, backing off while it keeps dying."""
        backoff = 0.0
        while not self._closed:
            if backoff:
                await asyncio.sleep(backoff)
            self.state = "starting"
            self._settled.clear()
            jail = Jail(self.env, zygote=True)
            try:
                await jail.start()
            except JailError as exc:
                self.last_error = str(exc)
                self.state = "down"
                self._settled.set()  # runs waiting for it cold-start now
                backoff = min(30.0, max(0.5, backoff * 2))
                log.warning("fork server did not start (retry in %.1fs): %s", backoff, exc)
                continue
            self.jail = jail
            self.state = "up"
            self._settled.set()
            log.info("fork server up in %.0f ms", jail.age_ms)
            self.refill()
            up_since = time.monotonic()
            with contextlib.suppress(OSError):
                await jail._wait_exit()
            self.state = "down"
            self.jail = None
            await self._drop_warm()
            await jail.destroy()
            if self.closed:
                return
            self.restarts += 1
            lived = time.monotonic() - up_since
            backoff = 0.0 if lived > _HEALTHY_AFTER and not backoff else max(0.5, backoff * 2)
            backoff = min(30.0, backoff)
            self.last_error = f"fork server exited ({jail.diagnostics()})"
            log.warning("fork server exited after %.0f s; restarting in %.1f s", lived, backoff)

    async def _drop_warm(self) -> None:
        while self._warm:
            await self._warm.popleft().destroy()

    def refill(self) -> None:
        while self.up and not self._closed and len(self._warm) + self._forking < self.ahead:
            self._forking += 1
            task = asyncio.create_task(self._fork_ahead())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _fork_ahead(self) -> None:
        try:
            child = await self.fork()
        except JailError as exc:
            self.last_error = str(exc)
            log.warning("forking a sandbox child failed: %s", exc)
            return
        finally:
            self._forking -= 1
        if self._closed or not self.up:
            await child.destroy()
            return
        self._warm.append(child)

    async def take(self) -> ForkedRun | None:
        """A ready child (forked ahead, or now); None when the zygote is not up. While it is
        starting, wait for it rather than cold-start a whole jail that would import torch
        beside it on the same cores and come no sooner (the first /run, exercise or pack check
        after start); a failed start ends the wait, and a start never outlasts
        ``startup_timeout``."""
        if self.state == "starting" and not self._warm:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._settled.wait(), self.env.config.startup_timeout)
        while self._warm:
            child = self._warm.popleft()
            if child.alive:
                self.refill()
                return child
            await child.destroy()
        if not self.up:
            return None
        try:
            child = await self.fork()
        except JailError as exc:
            log.warning("forking a sandbox child failed: %s", exc)
            return None
        finally:
            self.refill()
        return child

    async def fork(self) -> ForkedRun:
        """Ask the zygote for one child, place it in its cgroup, wait until it is ready."""
        jail = self.jail
        if jail is None or jail.control is None:
            raise JailError("the fork server is not running")
        cfg = self.env.config
        run = ForkedRun(cfg.output_bytes, cfg.max_files, cfg.max_file_bytes)
        theirs: list[int] = []
        try:
            run.cgroup = self.env.cgroups.create()
            theirs = _descriptors(run)
            async with self._send_lock:
                while True:
                    try:
                        socket.send_fds(jail.control, [b"fork"], theirs)
                        break
                    except BlockingIOError:
                        await asyncio.sleep(0.001)
        except (OSError, RuntimeError) as exc:
            await run.destroy()
            raise JailError(f"cannot ask the fork server for a child: {exc}") from exc
        finally:
            for fd in theirs:
                close_fd(fd)
        assert run.talk is not None
        talk = run.talk
        try:
            async with asyncio.timeout(_SET_UP_WITHIN):
                pid = await self._hello(run)
                run._init_fd = os.pidfd_open(pid)
                assert run.cgroup is not None
                run.cgroup.add(pid)
                await asyncio.get_running_loop().sock_sendall(talk, b"go")
                line = await run._read_ready(_SET_UP_WITHIN)
        except (OSError, TimeoutError, RuntimeError) as exc:
            await run.destroy()
            raise JailError(f"a fork-server child did not start: {exc!r}") from exc
        except BaseException:
            await asyncio.shield(run.destroy())
            raise
        if line != b"ready":
            await run.destroy()
            raise JailError("a fork-server child did not start (no ready line)")
        run.ready_at = time.monotonic()
        return run

    @staticmethod
    async def _hello(run: ForkedRun) -> int:
        """The child's ``hi``, and its host pid from the credentials the kernel attached."""
        assert run.talk is not None
        while True:
            await wait_readable(run.talk.fileno())
            try:
                data, ancillary, _, _ = run.talk.recvmsg(16, socket.CMSG_SPACE(_UCRED.size))
            except BlockingIOError:
                continue
            if data != b"hi":
                raise RuntimeError(f"unexpected first message {data[:16]!r}")
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid, _, _ = _UCRED.unpack(payload[: _UCRED.size])
                    if pid > 0:
                        return int(pid)
            raise RuntimeError("no credentials came with the child's hello")

    async def close(self) -> None:
        self._closed = True
        self.state = "down"
        self._settled.set()  # a run waiting for the start stops waiting (and finds it down)
        if self._keeper is not None:
            self._keeper.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._keeper is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._keeper
        await self._drop_warm()
        if self.jail is not None:
            await self.jail.destroy()
            self.jail = None
