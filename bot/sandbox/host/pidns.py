"""The pid namespace all of one manager's jails live in, and its init, the keeper.

Why: bwrap arms ``--die-with-parent`` in its outer process only after ``clone()``, and its child
(pid 1 of the jail's namespace) arms its own only later still, after it has waited on an eventfd
for the outer bwrap to write its uid map. If the outer bwrap dies in between (its manager died,
so ``PR_SET_PDEATHSIG`` or a ``SIGPIPE`` on ``--info-fd`` ended it; or the manager gave up on a
starting jail before it knew the child's pid and killed bwrap), that child waits forever: pid 1
of its namespace, the jail's uid, re-parented to the host's init. A busy machine makes the window
long; no option of bwrap closes it.

So the manager (when it is root) makes one pid namespace for its jails at start-up
(:meth:`JailPidNamespace.create`, before any thread exists). Its first process, the **keeper**,
is the namespace's init, and every bwrap is launched into it (:meth:`JailPidNamespace.spawning`).
The keeper holds the read end of a pipe whose only write end is the manager's: however the
manager ends, the kernel closes it, the keeper exits (it carries ``PR_SET_PDEATHSIG`` too), and
the kernel SIGKILLs every process of the namespace and of the namespaces nested in it. While the
manager lives, the keeper SIGKILLs any process re-parented to it: only a jail process whose bwrap
is gone ends up there.

The manager itself stays in its own pid namespace (a process whose children go to another
namespace cannot start threads, so it points its children there only while it launches bwrap),
and keeps seeing host pids; bwrap reports its child's pid in the jails' namespace, which
:func:`pid_in_ours` translates.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["JailPidNamespace", "PidNamespaceError", "children", "ns_pids", "pid_in_ours"]

_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_PR_SET_PDEATHSIG = 1
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18
_SWEEP_EVERY = 0.2  # seconds between two looks for re-parented jail processes


class PidNamespaceError(RuntimeError):
    """The jails' pid namespace could not be made or entered; the message says why."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise PidNamespaceError(f"{what}: {os.strerror(err)}")


def ns_pids(pid: int) -> list[int]:
    """``pid``'s number in each pid namespace it is in, ours (that of ``/proc``) first."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("NSpid:"):
            return [int(n) for n in line.split()[1:]]
    raise OSError(f"no NSpid for {pid}")


def children(pid: int) -> list[int]:
    """The children of ``pid`` (as ``/proc`` numbers them)."""
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            found += [int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except FileNotFoundError:  # gone, or a kernel without CONFIG_PROC_CHILDREN: look at them all
        found = []
        for entry in Path("/proc").iterdir():
            with contextlib.suppress(OSError, ValueError, StopIteration):
                if entry.name.isdigit():
                    status = (entry / "status").read_text().splitlines()
                    ppid = next(line for line in status if line.startswith("PPid:"))
                    if int(ppid.split()[1]) == pid:
                        found.append(int(entry.name))
    return found


def pid_in_ours(parent: int, pid_in_theirs: int) -> int:
    """Our pid for the child of ``parent`` that ``parent``'s own namespace calls ``pid_in_theirs``.

    bwrap reports its child's pid as it sees it; with the jails in a namespace of their own that
    is not the pid the manager must pin, signal and put into a cgroup.
    """
    level = len(ns_pids(parent)) - 1
    for child in children(parent):
        with contextlib.suppress(OSError, ValueError):
            ids = ns_pids(child)
            if len(ids) > level and ids[level] == pid_in_theirs:
                return child
    raise PidNamespaceError(f"process {parent} has no child {pid_in_theirs} in its namespace")


def _covered_proc() -> list[str]:
    """The mount points inside ``/proc`` (none, where a jail can mount a procfs of its own)."""
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if len(fields) > 4 and fields[4].startswith("/proc/"):
            points.append(fields[4])
    return points


def _kill_orphans(me: int, level: int) -> None:
    """SIGKILL each child of the keeper (pinned by a pidfd, checked again before the kill)."""
    for child in children(me):
        with contextlib.suppress(OSError, ValueError, IndexError):
            pidfd = os.pidfd_open(ns_pids(child)[level])
            try:
                if child in children(me):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            finally:
                os.close(pidfd)


def _own_proc() -> None:
    """A mount namespace of the keeper's own whose ``/proc`` is the jails' pid namespace's.

    bwrap reads ``/proc/<its child's pid>/ns`` with the pid as its own namespace numbers it, so
    it is launched into this mount namespace (:data:`ENTER`). The host's mounts are not touched.
    """
    libc = _libc()
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "make / private")
    flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _check(libc.mount(b"proc", b"/proc", b"proc", flags, None), "mount /proc")


def _keep(alive: int, ready: int) -> None:
    """The keeper: the init of the jails' namespace, until the manager is gone."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _own_proc()
    os.write(ready, b"k")
    # Re-parented processes that exit are reaped by the kernel; no Python handler to call.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    for fd in range(3, max(alive, devnull, ready) + 1):
        if fd != alive:
            with contextlib.suppress(OSError):
                os.close(fd)
    os.closerange(alive + 1, 1 << 16)
    me = int(os.readlink("/proc/self"))  # 1: our /proc is the jails' namespace's
    level = len(ns_pids(me)) - 1
    # (getppid() says 0 here, the manager being outside our namespace: the pipe tells instead.
    # If the manager died before the prctl above, it is at end of file already.)
    while not select.select([alive], [], [], _SWEEP_EVERY)[0]:
        _kill_orphans(me, level)


class JailPidNamespace:
    """See the module docstring. ``close()`` ends the keeper, and with it whatever is left."""

    def __init__(self, keeper: int, alive: int, ours: int, theirs: int) -> None:
        self.keeper = keeper
        self._alive = alive
        self._ours = ours
        self._theirs = theirs
        self.mount_ns = -1  # the keeper's mount namespace (its /proc is the jails')

    @classmethod
    def create(cls) -> JailPidNamespace:
        """Unshare a pid namespace for our children and fork its init. Before any thread."""
        covered = _covered_proc()
        if covered:
            # A fresh /proc would uncover what the host hides (ProtectKernelTunables=, a
            # container's masked paths). bwrap could not mount one for the jail there anyway.
            raise PidNamespaceError(f"the host's /proc has mounts over {covered}")
        libc = _libc()
        ours = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        try:
            _check(libc.unshare(_CLONE_NEWPID), "unshare(CLONE_NEWPID)")
        except PidNamespaceError:
            os.close(ours)
            raise
        r, w = os.pipe2(os.O_CLOEXEC)
        ready_r, ready_w = os.pipe2(os.O_CLOEXEC)
        keeper = os.fork()
        if keeper == 0:
            try:
                _keep(r, ready_w)
            finally:
                os._exit(0)
        os.close(r)
        os.close(ready_w)
        theirs = os.open("/proc/self/ns/pid_for_children", os.O_RDONLY | os.O_CLOEXEC)
        made = cls(keeper, w, ours, theirs)
        try:
            # Back to our own namespace for children: else no thread could be started.
            _check(libc.setns(ours, _CLONE_NEWPID), "setns(our pid namespace)")
            if os.read(ready_r, 1) != b"k":
                raise PidNamespaceError("the keeper could not mount a /proc of its own")
            made.mount_ns = os.open(f"/proc/{keeper}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
        except (PidNamespaceError, OSError) as exc:
            made.close()
            raise PidNamespaceError(str(exc)) from exc
        finally:
            os.close(ready_r)
        return made

    @property
    def alive(self) -> bool:
        """Whether the keeper still runs (if not, no process can be started in the namespace)."""
        with contextlib.suppress(ChildProcessError):
            return os.waitpid(self.keeper, os.WNOHANG) == (0, 0)
        return False

    @contextlib.contextmanager
    def spawning(self) -> Iterator[None]:
        """Within: the processes we start go into the jails' namespace. Start no thread here."""
        libc = _libc()
        _check(libc.setns(self._theirs, _CLONE_NEWPID), "setns(the jails' pid namespace)")
        try:
            yield
        finally:
            _check(libc.setns(self._ours, _CLONE_NEWPID), "setns(our pid namespace)")

    def close(self) -> None:
        """Tell the keeper to go (it exits, killing whatever is left in the namespace)."""
        if self._alive >= 0:
            os.close(self._alive)
            self._alive = -1
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.keeper, 0)
        for fd in (self._ours, self._theirs, self.mount_ns):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._ours = self._theirs = self.mount_ns = -1

    def command(self, argv: list[str], uid: int, gid: int) -> list[str]:
        """``argv`` (bwrap's), run in the keeper's mount namespace as ``uid``/``gid``.

        The manager has threads, and a thread cannot enter another mount namespace; the
        one-line interpreter this wraps ``argv`` in can, and then drops to the jail's uid.
        Pass :attr:`mount_ns` to it (``pass_fds``).
        """
        return [sys.executable, "-I", "-S", "-c", ENTER, str(self.mount_ns), str(uid), str(gid),
                *argv]  # fmt: skip


#: Enter the mount namespace on fd argv[1], drop to uid argv[2] and gid argv[3] (no
#: supplementary groups; -1: stay), then exec argv[4:].
ENTER = (
    "import ctypes,os,sys\n"
    "fd,uid,gid=(int(a) for a in sys.argv[1:4])\n"
    "if ctypes.CDLL(None,use_errno=True).setns(fd,0x20000):"
    "raise OSError(ctypes.get_errno(),'setns(mount namespace)')\n"
    "os.close(fd)\n"
    "if gid>=0:os.setgroups([]);os.setresgid(gid,gid,gid)\n"
    "if uid>=0:os.setresuid(uid,uid,uid)\n"
    "os.execv(sys.argv[4],sys.argv[4:])"
)
