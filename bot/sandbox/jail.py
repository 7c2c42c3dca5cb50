"""One jail: the bwrap command line, and the life of one single-use worker inside it.

A jail is launched as the unprivileged jail uid with an empty environment, blocks (``--block-fd``)
until the manager has moved its init into a fresh cgroup, then imports torch and says ``ready``.
It runs exactly one snippet and is destroyed: there is no state to leak between runs because
nothing survives one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bot.log import get_logger
from bot.sandbox import seccomp
from bot.sandbox.aio import (
    ByteBudget,
    CappedBuffer,
    close_fd,
    drain_capped,
    read_chunk,
    read_line,
    wait_readable,
    write_all,
)
from bot.sandbox.cgroups import Cgroup, CgroupRoot
from bot.sandbox.config import SandboxConfig
from bot.sandbox.layout import Layout
from bot.sandbox.outcome import classify, plausible_report
from bot.sandbox.result import RunResult

__all__ = ["Jail", "JailEnv", "JailError", "bwrap_argv", "worker_source"]

log = get_logger(__name__)

_PASSWD = b"sandbox:x:{uid}:{gid}:sandbox:/tmp:/nonexistent\n"
_GROUP = b"sandbox:x:{gid}:\n"
# Paths inside the jail (private tmpfs mounts, not the host's).
_JAIL_TMP = "/tmp"  # noqa: S108
_JAIL_SHM = "/dev/shm"  # noqa: S108
_CHILD_PID = re.compile(rb'"child-pid"\s*:\s*(\d+)')


class JailError(RuntimeError):
    """A jail could not be started; the message carries bwrap's or the worker's own words."""


def worker_source() -> str:
    return (Path(__file__).with_name("worker.py")).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class JailEnv:
    """Everything shared by all jails of one manager (computed once at start-up)."""

    config: SandboxConfig
    bwrap: str
    layout: Layout
    cgroups: CgroupRoot
    worker: str
    run_as: tuple[int, int] | None  # (uid, gid) to drop to before exec'ing bwrap

    @property
    def uid(self) -> int:
        return self.run_as[0] if self.run_as else os.getuid()

    @property
    def gid(self) -> int:
        return self.run_as[1] if self.run_as else os.getgid()


# The worker's source arrives on a descriptor rather than in argv, so that ``ps`` stays readable.
_BOOTSTRAP = (
    "import os,sys;fd=int(sys.argv.pop(1));src=os.read(fd,1<<20);os.close(fd);"
    "exec(compile(src,'<worker>','exec'))"
)


@dataclass(frozen=True, slots=True)
class _Fds:
    source: int
    seccomp: int
    info: int
    block: int
    passwd: int
    group: int
    ctrl: int
    status: int
    out: int
    err: int


def bwrap_argv(env: JailEnv, fds: _Fds, preload: tuple[str, ...]) -> list[str]:
    """The full bwrap command: namespaces, mounts, identity, seccomp, then the worker."""
    cfg = env.config
    tmp_bytes = cfg.tmp_mb * 1024 * 1024
    argv = [
        env.bwrap,
        "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net",
        "--unshare-uts", "--unshare-cgroup-try",
        "--disable-userns", "--die-with-parent", "--new-session", "--clearenv",
        "--cap-drop", "ALL",
        "--uid", str(env.uid), "--gid", str(env.gid),
        "--hostname", "sandbox",
    ]  # fmt: skip
    for source, dest in env.layout.binds:
        argv += ["--ro-bind", source, dest]
    for target, link in env.layout.symlinks:
        argv += ["--symlink", target, link]
    for hidden in env.layout.hidden:
        argv += ["--tmpfs", hidden, "--remount-ro", hidden]
    argv += [
        "--ro-bind-data", str(fds.passwd), "/etc/passwd",
        "--ro-bind-data", str(fds.group), "/etc/group",
        "--proc", "/proc",
        "--dev", "/dev",
        "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", _JAIL_SHM,
        "--remount-ro", "/dev",
        "--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", _JAIL_TMP,
        "--remount-ro", "/",
        "--chdir", _JAIL_TMP,
        "--seccomp", str(fds.seccomp),
        "--info-fd", str(fds.info),
        "--block-fd", str(fds.block),
        "--",
        env.layout.python, "-I", "-B", "-c", _BOOTSTRAP, str(fds.source),
        str(fds.ctrl), str(fds.status), str(fds.out), str(fds.err),
        str(cfg.import_cpu_seconds), str(tmp_bytes), str(cfg.nofile), str(cfg.torch_threads),
        ",".join(preload),
        # The CPU hard limit, fixed before the import: room for the import and the longest run,
        # since an unprivileged process can lower it later but never raise it again.
        str(cfg.import_cpu_seconds + math.ceil(cfg.timeout) + 2),
    ]  # fmt: skip
    return argv


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class Jail:
    """One single-use jailed worker. ``start()`` -> ``run()`` once -> ``destroy()``."""

    def __init__(self, env: JailEnv, *, preload: tuple[str, ...] | None = None) -> None:
        self.env = env
        self.preload = env.config.preload if preload is None else preload
        self.proc: subprocess.Popen[bytes] | None = None
        self._proc_fd = -1  # pidfd of bwrap: wait and kill without pid-reuse races
        self.cgroup: Cgroup | None = None
        self.child_pid: int | None = None
        self._init_fd = -1
        self._mine: list[int] = []  # parent-side fds to close on destroy
        self._ctrl = self._status = self._out = self._err = self._diag = -1
        self._status_pending = bytearray()
        self._diag_buf = CappedBuffer(4096)
        self._diag_task: asyncio.Task[None] | None = None
        self._info_task: asyncio.Task[None] | None = None
        self.started_at = 0.0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _close_mine(self, fd: int) -> None:
        """Close one of our descriptors exactly once.

        Closing twice is not harmless here: jails start concurrently, the number may already
        belong to another jail's pipe, and a stray close would cross-wire or break it.
        """
        if fd in self._mine:
            self._mine.remove(fd)
            close_fd(fd)

    def _spawn(self) -> tuple[int, int]:
        """Create the pipes and launch bwrap; returns (info fd, block fd) for the set-up."""
        child_side: list[int] = []  # closed in the parent once bwrap has them

        def pipe(*, ours: str) -> tuple[int, int]:
            r, w = os.pipe2(os.O_CLOEXEC)
            mine, theirs = (r, w) if ours == "r" else (w, r)
            self._mine.append(mine)
            child_side.append(theirs)
            os.set_blocking(mine, False)
            return r, w

        def memfd(name: str, data: bytes) -> int:
            fd = _memfd(name, data)
            child_side.append(fd)
            return fd

        uid, gid = self.env.uid, self.env.gid
        try:
            ctrl_r, self._ctrl = pipe(ours="w")
            self._status, status_w = pipe(ours="r")
            self._out, out_w = pipe(ours="r")
            self._err, err_w = pipe(ours="r")
            self._diag, diag_w = pipe(ours="r")
            info_r, info_w = pipe(ours="r")
            block_r, block_w = pipe(ours="w")
            seccomp_fd = seccomp.filter_fd()
            child_side.append(seccomp_fd)
            passwd = _PASSWD.replace(b"{uid}", str(uid).encode()).replace(
                b"{gid}", str(gid).encode()
            )
            fds = _Fds(
                source=memfd("worker", self.env.worker.encode()),
                seccomp=seccomp_fd,
                info=info_w,
                block=block_r,
                passwd=memfd("passwd", passwd),
                group=memfd("group", _GROUP.replace(b"{gid}", str(gid).encode())),
                ctrl=ctrl_r,
                status=status_w,
                out=out_w,
                err=err_w,
            )
            argv = bwrap_argv(self.env, fds, self.preload)
            drop = self.env.run_as is not None
            self.started_at = time.monotonic()
            # Popen, not asyncio's subprocess: we reap bwrap ourselves through a pidfd. With a
            # child watcher reaping in another thread, killing by pid can hit a recycled pid,
            # and here recycled pids belong to other jails' bwraps.
            self.proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                argv,
                stdin=subprocess.DEVNULL,
                stdout=diag_w,
                stderr=diag_w,
                pass_fds=[fd for fd in child_side if fd != diag_w],
                env={},
                cwd="/",
                user=uid if drop else None,
                group=gid if drop else None,
                extra_groups=[] if drop else None,
            )
            self._proc_fd = os.pidfd_open(self.proc.pid)
        except (OSError, seccomp.SeccompError) as exc:
            for fd in list(self._mine):
                self._close_mine(fd)
            raise JailError(f"cannot launch bwrap: {exc}") from exc
        finally:
            for fd in child_side:
                close_fd(fd)
        return info_r, block_w

    async def start(self) -> None:
        """Launch bwrap, join the cgroup, wait for ``ready``; JailError on any failure."""
        cfg = self.env.config
        info_r, block_w = self._spawn()
        self._diag_task = asyncio.create_task(drain_capped(self._diag, self._diag_buf))
        try:
            try:
                self.child_pid = await asyncio.wait_for(self._read_child_pid(info_r), 30)
                # A pidfd names the jail's init for good: killing it ends the whole PID
                # namespace, even before it is in the cgroup and without a pid-reuse race.
                self._init_fd = os.pidfd_open(self.child_pid)
                self.cgroup = self.env.cgroups.create()
                self.cgroup.add(self.child_pid)
                await write_all(block_w, b"go")
            finally:
                self._close_mine(block_w)
            # bwrap writes more to the info fd later (namespace ids); closing our end now
            # would kill it with SIGPIPE and orphan the jail's init. Drain it until bwrap is done.
            self._info_task = asyncio.create_task(drain_capped(info_r, CappedBuffer(0)))
            line = await asyncio.wait_for(
                read_line(self._status, self._status_pending), cfg.startup_timeout
            )
        except (OSError, TimeoutError, RuntimeError) as exc:
            await self.destroy()
            raise JailError(f"jail set-up failed: {exc!r}; {self.diagnostics()}") from exc
        except BaseException:
            await asyncio.shield(self.destroy())
            raise
        if line != b"ready":
            await self.destroy()
            raise JailError(f"worker did not start: {self.diagnostics()}")
        log.debug("jail %s ready in %.0f ms", self.child_pid, self.age_ms)

    @property
    def age_ms(self) -> float:
        return (time.monotonic() - self.started_at) * 1000

    async def _read_child_pid(self, fd: int) -> int:
        data = b""
        while (match := _CHILD_PID.search(data)) is None:
            chunk = await read_chunk(fd)
            if not chunk:
                raise RuntimeError("bwrap exited before creating the sandbox")
            data += chunk
        return int(match.group(1))

    def diagnostics(self) -> str:
        text = self._diag_buf.data.decode("utf-8", "replace").strip()
        lines = [line for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-3:]) if lines else "no output from bwrap"

    async def run(self, code: str, wall: float) -> RunResult:
        """Send the snippet, enforce the wall clock, collect output, classify the ending."""
        assert self.proc is not None
        assert self.cgroup is not None
        # One budget for both streams: SANDBOX_OUTPUT_BYTES is the most a run can send back.
        budget = ByteBudget(self.env.config.output_bytes)
        out, err = CappedBuffer(budget=budget), CappedBuffer(budget=budget)
        if self.cgroup is not None:
            self.cgroup.set_cpu_weight(running=True)
        body = code.encode("utf-8")
        header = json.dumps({"timeout": wall, "size": len(body)}).encode() + b"\n"
        readers = [
            asyncio.create_task(drain_capped(self._out, out)),
            asyncio.create_task(drain_capped(self._err, err)),
        ]
        started = time.monotonic()
        timed_out = False
        report: dict[str, object] | None = None
        try:
            await asyncio.wait_for(write_all(self._ctrl, header + body), wall)
            self._close_mine(self._ctrl)
            remaining = max(0.0, wall - (time.monotonic() - started))
            report = await asyncio.wait_for(self._report_or_exit(), remaining)
            if report is not None and not plausible_report(report):
                # A line the snippet forged: only bwrap's exit status can say how it ended.
                report = None
                remaining = max(0.0, wall - (time.monotonic() - started))
                await asyncio.wait_for(self._wait_exit(), remaining)
        except TimeoutError:
            timed_out = True
            self._kill()
            await self._wait_exit()
        duration_ms = (time.monotonic() - started) * 1000
        if report is not None:
            # The worker has flushed, closed its output and is exiting. Tearing down a process
            # that mapped torch takes the kernel 30-60 ms; nothing of the snippet can run any
            # more once its namespace's init is SIGKILLed, so the answer need not wait for the
            # reaping, which destroy() finishes (and checks) right after.
            self._kill_namespace()
        # EOF comes when the last holder of the pipes is gone: at once on the fast path, or
        # once bwrap has reaped the namespace.
        _, pending = await asyncio.wait(readers, timeout=2)
        for task in pending:
            task.cancel()
        return classify(
            returncode=None if report is not None else self.proc.returncode,
            timed_out=timed_out,
            report=report,
            oom_kills=self.cgroup.oom_kills(),
            stdout=out.data.decode("utf-8", "replace"),
            stderr=err.data.decode("utf-8", "replace"),
            truncated=out.truncated or err.truncated,
            duration_ms=duration_ms,
        )

    async def _report_or_exit(self) -> dict[str, object] | None:
        """The worker's report if it sends one; None once bwrap exits without one."""
        report_task = asyncio.create_task(read_line(self._status, self._status_pending))
        exit_task = asyncio.create_task(self._wait_exit())
        try:
            await asyncio.wait({report_task, exit_task}, return_when=asyncio.FIRST_COMPLETED)
            raw = report_task.result() if report_task.done() else None
            if raw is None and not exit_task.done():
                await exit_task  # the status pipe closed: the worker is dying
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
        return parsed if isinstance(parsed, dict) and "exit_code" in parsed else None

    def _kill_namespace(self) -> None:
        if self._init_fd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._init_fd, signal.SIGKILL)

    async def _wait_exit(self) -> int:
        """Wait for bwrap to exit (its pidfd turns readable), then reap it."""
        assert self.proc is not None
        if self.proc.returncode is None and self._proc_fd >= 0:
            await wait_readable(self._proc_fd)
        return self.proc.wait()

    def _kill(self) -> None:
        self._kill_namespace()
        if self.cgroup is not None:
            self.cgroup.kill(deadline=1.0)
        if self._proc_fd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._proc_fd, signal.SIGKILL)

    async def destroy(self) -> None:
        """Kill whatever is left, reap bwrap, remove the cgroup, close our fds. Idempotent.

        Killing and removing a cgroup poll the kernel until it lets go (tens of ms for a
        torch-sized process, seconds if stuck); that runs in a thread so other runs' pipes
        and timers are not held up.
        """
        await asyncio.to_thread(self._kill)
        try:
            if self.proc is not None:
                await self._wait_exit()
        finally:
            if self.cgroup is not None:
                cgroup, self.cgroup = self.cgroup, None
                await asyncio.to_thread(cgroup.remove)
            for fd in (self._init_fd, self._proc_fd):
                if fd >= 0:
                    close_fd(fd)
            self._init_fd = self._proc_fd = -1
        for task in (self._diag_task, self._info_task):
            if task is not None:
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(task, 0.5)
        for fd in list(self._mine):
            self._close_mine(fd)
