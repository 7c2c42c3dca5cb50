"""The fork server ("zygote") that runs inside a jail: import torch once, fork one child per run.

Like ``worker.py`` this file is not imported by the bot: the manager hands its source (and
the worker's, as the module ``bot.sandbox.inside.worker``) to a jailed interpreter on a
descriptor. It may use the standard library only.

Three processes make one run, so that member code meets nothing it could write or signal:

- **C**, forked by the zygote, unshares a nested user namespace with fresh mount, pid, net,
  ipc and uts namespaces, maps the jail's uid onto itself, forks **G** and exits.
- **G** is pid 1 of the new pid namespace. It says ``hi`` on its own socket (the manager learns
  its host pid from the kernel, ``SO_PASSCRED``, and moves it into a fresh cgroup), waits for
  ``go``, mounts a fresh ``/proc``, ``/tmp`` and ``/dev/shm``, drops every capability, sets
  ``no_new_privs``, loads the seccomp filter, and forks **H**. It then only waits for H and
  reports H's real exit status on the socket H never holds. G is not dumpable: H cannot open
  ``/proc/1/mem``; and as the namespace's init it ignores every signal H could send it.
- **H** reseeds ``random``, numpy and torch from fresh entropy (a forked generator repeats its
  parent's numbers), says ``ready`` and waits for exactly one snippet (``worker.serve_one``).

The zygote never runs a parallel op and never starts a thread: a forked child of a process with
an OpenMP pool would deadlock. It runs no member code, holds nothing secret, and exits when the
manager's end of its control socket closes.
"""

from __future__ import annotations

import ctypes
import gc
import os
import random
import resource
import signal
import socket
import sys

from bot.sandbox.inside import exercise, pictures
from bot.sandbox.inside.worker import serve_one

__all__ = ["main"]

_CLONE_NEWNS = 0x00020000
_CLONE_NEWCGROUP = 0x02000000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_SECCOMP_SET_MODE_FILTER = 1
_SYS_SECCOMP = 317  # x86_64; the filter itself kills any other ABI
_SYS_CAPSET = 126
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_FDS_PER_RUN = 5  # ctrl (code in), status (report out), stdout, stderr, G's socket

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str) -> None:
    def enc(text: str | None) -> bytes | None:
        return text.encode() if text else None

    rc = _libc.mount(enc(source), target.encode(), enc(fstype), flags, enc(data))
    _check(rc, f"mount {target}")


class _Fprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def _load_filter(bpf: bytes) -> None:
    """Install the same filter the single-use jail gets (``seccomp.py``): 8 bytes a record."""
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _Fprog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_void_p))
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    rc = _libc.syscall(_SYS_SECCOMP, _SECCOMP_SET_MODE_FILTER, 0, ctypes.byref(prog))
    _check(rc, "seccomp")


def _drop_capabilities() -> None:
    """Empty the bounding, ambient, effective, permitted and inheritable sets."""
    cap = 0
    while _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.syscall(_SYS_CAPSET, header, data), "capset")


def _reseed() -> None:
    random.seed(os.urandom(32))
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(int.from_bytes(os.urandom(4), "little"))
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)


def _warm() -> None:
    """Touch, before the code arrives, the pages a small torch snippet would copy on write."""
    torch = sys.modules.get("torch")
    if torch is not None:
        (torch.ones(4, requires_grad=True) * 2).sum().backward()
    compile("x = 1", "<warm>", "exec")


def _exit_status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) & 0xFF


def _init(fds: list[int], bpf: bytes, opts: dict[str, int]) -> None:
    """G: pid 1 of the run's namespaces. Set them up, fork the snippet's process, report it."""
    ctrl, status, out, err, gsock = fds
    # Reaped children are what we wait for, and as pid 1 we ignore every signal we do not
    # handle: the default disposition for SIGINT (Python's handler) leaves H nothing to send us.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    talk = socket.socket(fileno=gsock)
    talk.send(b"hi")  # the manager reads our host pid from the kernel's credentials
    if talk.recv(16) != b"go":  # in our cgroup now (or the manager gave up on us)
        os._exit(0)
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, "")
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "")
    size = f"size={opts['tmp_bytes']},mode=1777"
    _mount("tmpfs", "/tmp", "tmpfs", _MS_NOSUID | _MS_NODEV, size)  # noqa: S108 - our own tmpfs
    _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, size)  # noqa: S108
    os.chdir("/tmp")  # noqa: S108
    _check(_libc.unshare(_CLONE_NEWCGROUP), "unshare cgroup")  # rooted at the run's cgroup
    _drop_capabilities()
    _load_filter(bpf)
    pid = os.fork()
    if pid == 0:
        talk.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in any Python program
        _snippet(ctrl, status, out, err, opts)
    for fd in (ctrl, status, out, err):
        os.close(fd)
    _, wstatus = os.waitpid(pid, 0)
    talk.send(f"exit {_exit_status(wstatus)}".encode())
    os._exit(0)


def _snippet(ctrl: int, status: int, out: int, err: int, opts: dict[str, int]) -> None:
    """H: the process member code runs in (pid 2 of its namespace)."""
    try:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # as every process of a jail
        _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # its own /proc/self, as in any process
        resource.setrlimit(resource.RLIMIT_NOFILE, (opts["nofile"], opts["nofile"]))
        _reseed()
        _warm()
        os.write(status, b"ready\n")
    except BaseException:
        os._exit(70)
    serve_one(ctrl, status, out, err, opts["cpu_hard"])


def _namespaces(fds: list[int], bpf: bytes, opts: dict[str, int]) -> None:
    """C: new namespaces for the run, then G as their pid 1; C itself leaves at once."""
    # Before unshare: in the new user namespace nothing is mapped yet, and getuid() would say
    # 65534 (the overflow uid) whatever the jail's uid is.
    uid, gid = os.getuid(), os.getgid()
    _check(
        _libc.unshare(
            _CLONE_NEWUSER
            | _CLONE_NEWNS
            | _CLONE_NEWPID
            | _CLONE_NEWNET
            | _CLONE_NEWIPC
            | _CLONE_NEWUTS
        ),
        "unshare",
    )
    # The nested user namespace maps the jail's one uid onto itself: the snippet keeps the
    # identity it had in the single-use jail, and holds capabilities only over its own mounts.
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # /proc/self/*_map belong to us while we write
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    if os.fork() == 0:
        _init(fds, bpf, opts)
    os._exit(0)


def _serve(ctl: socket.socket, bpf: bytes, opts: dict[str, int]) -> None:
    zygote = os.getpid()
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctl, 16, _FDS_PER_RUN)
        except InterruptedError:
            continue
        if not msg:
            os._exit(0)  # the manager is gone
        if msg != b"fork" or len(fds) != _FDS_PER_RUN:
            for fd in fds:
                os.close(fd)
            continue
        if os.fork() == 0:
            try:
                _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                if os.getppid() != zygote:
                    os._exit(0)
                ctl.close()
                _namespaces(fds, bpf, opts)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)


def main(argv: list[str]) -> None:
    ctl_fd, bpf_fd, status = (int(a) for a in argv[:3])
    fsize, nofile, threads, tmp_bytes, cpu_hard = (int(a) for a in argv[3:8])
    preload = [m for m in argv[8].split(",") if m]

    os.environ.clear()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    with open(bpf_fd, "rb") as fh:
        bpf = fh.read()
    pictures.preload(preload)
    exercise.prepare()
    if "numpy" in sys.modules:
        import numpy.random  # noqa: F401 - a lazy import would fail in a child's namespaces
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_num_threads(threads)
        # One tiny single-threaded op warms the dispatcher for every child; never a parallel
        # one, whose thread pool would not survive fork.
        (torch.ones(4, requires_grad=True) * 2).sum().backward()
    # Everything alive now moves to the collector's permanent generation: a collection in a
    # child would otherwise walk (and so copy, page by page) the zygote's whole heap.
    gc.freeze()
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # C exits at once; the kernel reaps it
    opts = {"tmp_bytes": tmp_bytes, "nofile": nofile, "cpu_hard": cpu_hard}
    os.write(status, b"ready\n")
    _serve(socket.socket(fileno=ctl_fd), bpf, opts)


if __name__ == "__main__":
    main(sys.argv[1:])
