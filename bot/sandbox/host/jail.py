"""One jail: the bwrap command line, and the life of one single-use worker inside it.

A jail is launched as the unprivileged jail uid with an empty environment, blocks (``--block-fd``)
until the manager has moved its init into a fresh cgroup, then imports torch and says ``ready``.
It runs exactly one snippet and is destroyed: there is no state to leak between runs because
nothing survives one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from bot.log import get_logger
from bot.sandbox.config import SandboxConfig
from bot.sandbox.host import seccomp
from bot.sandbox.host.aio import (
    CappedBuffer,
    close_fd,
    drain_capped,
    read_chunk,
    read_line,
    wait_readable,
    write_all,
)
from bot.sandbox.host.cgroups import Cgroup, CgroupRoot, Limits
from bot.sandbox.host.layout import Layout
from bot.sandbox.host.onerun import OneRun
from bot.sandbox.host.pidns import JailPidNamespace, PidNamespaceError, pid_in_ours
from bot.sandbox.inside.tidy import Paths

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


def worker_source(main: str = "worker") -> str:
    """The code a jail runs, as one JSON payload: the jail-side modules and which one is main.

    Nothing of the bot is mounted in a jail; the bootstrap registers these sources under their
    usual names so that their imports of each other work.
    """
    inside = Path(__file__).resolve().parent.parent / "inside"
    modules = [
        (f"bot.sandbox.inside.{name}", (inside / f"{name}.py").read_text(encoding="utf-8"))
        for name in ("pictures", "tidy", "traps", "nodes", "exercise", "worker", "forkserver")
    ]
    return json.dumps({"modules": modules, "main": f"bot.sandbox.inside.{main}"})


@dataclass(frozen=True, slots=True)
class JailEnv:
    """Everything shared by all jails of one manager (computed once at start-up)."""

    config: SandboxConfig
    bwrap: str
    layout: Layout
    cgroups: CgroupRoot
    worker: str
    run_as: tuple[int, int] | None  # (uid, gid) to drop to before exec'ing bwrap
    # The pid namespace every bwrap is started in, whose init ends with the manager (pidns.py).
    pidns: JailPidNamespace | None = None
    # The interpreter's host paths, hidden from every run's output before it leaves the manager.
    paths: Paths = dataclasses.field(default_factory=lambda: Paths((), ()))

    @property
    def uid(self) -> int:
        return self.run_as[0] if self.run_as else os.getuid()

    @property
    def gid(self) -> int:
        return self.run_as[1] if self.run_as else os.getgid()


# The jail's code arrives on a descriptor rather than in argv, so that ``ps`` stays readable.
_BOOTSTRAP = (
    "import os,sys,json,types;fd=int(sys.argv.pop(1));b=json.loads(os.read(fd,1<<22));"
    "os.close(fd)\n"
    "for n in ('bot','bot.sandbox','bot.sandbox.inside'):sys.modules[n]=types.ModuleType(n)\n"
    "for n,src in b['modules']:\n"
    " m=sys.modules[n]=types.ModuleType(n);exec(compile(src,'<'+n+'>','exec'),m.__dict__)\n"
    "sys.modules[b['main']].main(sys.argv[1:])"
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


def bwrap_argv(
    env: JailEnv, fds: _Fds, preload: tuple[str, ...], *, zygote: bool = False
) -> list[str]:
    """The full bwrap command: namespaces, mounts, identity, seccomp, then the worker.

    For the fork server (``zygote``) bwrap loads no filter and user namespaces stay allowed:
    each child makes its own namespaces, then loads the filter (``fds.seccomp``) itself.
    """
    cfg = env.config
    tmp_bytes = cfg.tmp_mb * 1024 * 1024
    argv = [
        env.bwrap,
        "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net",
        "--unshare-uts", "--unshare-cgroup-try",
        # A single-use jail's pid 1 is the worker's own init (worker.py), not bwrap's: it is not
        # dumpable, so the snippet (pid 2) cannot open /proc/1/mem, as with the fork server's G.
        *(() if zygote else ("--disable-userns", "--as-pid-1")),
        "--die-with-parent", "--new-session", "--clearenv",
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
        *(() if zygote else ("--seccomp", str(fds.seccomp))),
        "--info-fd", str(fds.info),
        "--block-fd", str(fds.block),
        "--",
    ]  # fmt: skip
    if zygote:
        return [
            *argv,
            env.layout.python, "-I", "-B", "-c", _BOOTSTRAP, str(fds.source),
            str(fds.ctrl), str(fds.seccomp), str(fds.status),
            str(tmp_bytes), str(cfg.nofile), str(cfg.torch_threads), str(tmp_bytes),
            str(math.ceil(cfg.timeout) + 3), ",".join(preload),
        ]  # fmt: skip
    return [
        *argv,
        env.layout.python, "-I", "-B", "-c", _BOOTSTRAP, str(fds.source),
        str(fds.ctrl), str(fds.status), str(fds.out), str(fds.err),
        str(cfg.import_cpu_seconds), str(tmp_bytes), str(cfg.nofile), str(cfg.torch_threads),
        ",".join(preload),
        # The CPU hard limit, fixed before the import: room for the import and the longest run,
        # since an unprivileged process can lower it later but never raise it again.
        str(cfg.import_cpu_seconds + math.ceil(cfg.timeout) + 2),
    ]  # fmt: skip


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class Jail(OneRun):
    """One single-use jailed worker. ``start()`` -> ``run()`` once -> ``destroy()``.

    With ``zygote=True`` the jail holds the fork server instead (``forkserver.py``): no seccomp
    filter of bwrap's and user namespaces allowed, because each child sets up its own
    namespaces and then loads the same filter itself; ``control`` is then the manager's end of
    its fork-request socket.
    """

    def __init__(
        self, env: JailEnv, *, preload: tuple[str, ...] | None = None, zygote: bool = False
    ) -> None:
        super().__init__()
        self.env = env
        self.zygote = zygote
        self.output_bytes = env.config.output_bytes
        self.max_files = env.config.max_files
        self.max_file_bytes = env.config.max_file_bytes
        self.control: socket.socket | None = None
        self.preload = env.config.preload if preload is None else preload
        self.proc: subprocess.Popen[bytes] | None = None
        self._proc_fd = -1  # pidfd of bwrap: wait and kill without pid-reuse races
        self.cgroup: Cgroup | None = None
        self.child_pid: int | None = None
        self._init_fd = -1
        self._diag = -1
        self._diag_buf = CappedBuffer(4096)
        self._diag_task: asyncio.Task[None] | None = None
        self._info_task: asyncio.Task[None] | None = None
        self.started_at = 0.0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

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
            if self.zygote:
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                ours.setblocking(False)
                self.control = ours
                ctrl_r = theirs.detach()
                child_side.append(ctrl_r)
                out_w = err_w = -1
            else:
                ctrl_r, self._ctrl = pipe(ours="w")
                self._out, out_w = pipe(ours="r")
                self._err, err_w = pipe(ours="r")
            self._status, status_w = pipe(ours="r")
            self._diag, diag_w = pipe(ours="r")
            info_r, info_w = pipe(ours="r")
            block_r, block_w = pipe(ours="w")
            seccomp_fd = seccomp.filter_fd()
            child_side.append(seccomp_fd)
            passwd = _PASSWD.replace(b"{uid}", str(uid).encode()).replace(
                b"{gid}", str(gid).encode()
            )
            source = worker_source("forkserver") if self.zygote else self.env.worker
            fds = _Fds(
                source=memfd("worker", source.encode()),
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
            argv = bwrap_argv(self.env, fds, self.preload, zygote=self.zygote)
            self.started_at = time.monotonic()
            pidns = self.env.pidns
            with pidns.spawning() if pidns is not None else contextlib.nullcontext():
                self.proc = self._popen(argv, child_side, diag_w, uid, gid)
            self._proc_fd = os.pidfd_open(self.proc.pid)
        except (OSError, seccomp.SeccompError, PidNamespaceError) as exc:
            self._close_all_mine()
            if self.control is not None:
                self.control.close()
            raise JailError(f"cannot launch bwrap: {exc}{self._keeper_gone()}") from exc
        finally:
            for fd in child_side:
                close_fd(fd)
        return info_r, block_w

    def _keeper_gone(self) -> str:
        pidns = self.env.pidns
        if pidns is None or pidns.alive:
            return ""
        return " (the jails' pid namespace is gone: its keeper died; restart the sandbox)"

    def _popen(
        self, argv: list[str], child_side: list[int], diag_w: int, uid: int, gid: int
    ) -> subprocess.Popen[bytes]:
        drop = self.env.run_as is not None
        pass_fds = [fd for fd in child_side if fd != diag_w]
        pidns = self.env.pidns
        if pidns is not None:
            # Into the keeper's mount namespace (its /proc is the jails'), dropping the uid
            # there: a one-line wrapper does both, then execs bwrap in its own place.
            argv = pidns.command(argv, uid if drop else -1, gid if drop else -1)
            pass_fds.append(pidns.mount_ns)
            drop = False
        # Popen, not asyncio's subprocess: we reap bwrap ourselves through a pidfd. With a
        # child watcher reaping in another thread, killing by pid can hit a recycled pid,
        # and here recycled pids belong to other jails' bwraps.
        return subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            argv,
            stdin=subprocess.DEVNULL,
            stdout=diag_w,
            stderr=diag_w,
            pass_fds=pass_fds,
            env={},
            cwd="/",
            user=uid if drop else None,
            group=gid if drop else None,
            extra_groups=[] if drop else None,
        )

    async def start(self) -> None:
        """Launch bwrap, join the cgroup, wait for ``ready``; JailError on any failure."""
        cfg = self.env.config
        info_r, block_w = self._spawn()
        self._diag_task = asyncio.create_task(drain_capped(self._diag, self._diag_buf))
        try:
            try:
                ns_pid = await asyncio.wait_for(self._read_child_pid(info_r), 30)
                # bwrap's number for its child is in the jails' pid namespace; we need ours.
                assert self.proc is not None
                self.child_pid = pid_in_ours(self.proc.pid, ns_pid)
                # A pidfd names the jail's init for good: killing it ends the whole PID
                # namespace, even before it is in the cgroup and without a pid-reuse race.
                self._init_fd = os.pidfd_open(self.child_pid)
                self.cgroup = self.env.cgroups.create(self._limits())
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

    def _limits(self) -> Limits | None:
        """The fork server holds one torch image and its not yet placed children."""
        if not self.zygote:
            return None
        base = self.env.cgroups.limits
        return dataclasses.replace(
            base,
            memory_bytes=max(2 * base.memory_bytes, 1024 * 1024 * 1024),
            pids=base.pids + 4 * self.env.config.forks_ahead + 16,
            cpu_weight_warming=base.cpu_weight_running,
        )

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

    def _kill_namespace(self) -> None:
        if self._init_fd >= 0:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._init_fd, signal.SIGKILL)

    async def _wait_exit(self) -> None:
        """Wait for bwrap to exit (its pidfd turns readable), then reap it."""
        assert self.proc is not None
        if self.proc.returncode is None and self._proc_fd >= 0:
            await wait_readable(self._proc_fd)
        self.proc.wait()

    def _exit_status(self) -> int | None:
        """bwrap passes on the worker's status (128+N for a signal; negative if it was killed)."""
        return None if self.proc is None else self.proc.returncode

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
        self._close_all_mine()
        if self.control is not None:
            self.control.close()
