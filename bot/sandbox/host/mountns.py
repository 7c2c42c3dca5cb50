"""Make bind sources reachable for the unprivileged uid that runs bwrap, without touching the host.

bwrap runs as the jail uid (so every jailed process is unprivileged on the host too) and resolves
its bind sources with that uid's permissions. An interpreter under a private directory (pyenv
in ``/root``, a venv in a 0700 home) is then out of reach. When the manager is root it moves
itself into a private mount namespace at start-up and bind-mounts each unreachable source onto
a world-traversable staging tmpfs; bwrap (a child, so in the same namespace) binds from there to
the original path inside the jail. The host's mount table never changes, and the staging mounts
vanish with the manager.

Must run before any thread exists: a mount namespace unshared by one thread is that thread's.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import stat
import tempfile
from collections.abc import Mapping

from bot.log import get_logger

__all__ = ["StagingError", "closed_parent", "reachable", "stage_unreachable"]

log = get_logger(__name__)

_CLONE_NEWNS = 0x00020000
_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_PRIVATE = 1 << 18
_MNT_DETACH = 2


_PREFIX = "studybot-stage-"
#: Where :func:`stage_unreachable` writes the files it is given, under the staging root.
FILES = "files"


def _reap_stale_staging() -> None:
    """Remove (empty) mount points left by managers that were killed before cleaning up.

    Only those whose manager pid is gone: in a live manager's namespace the directory is a
    mount point, and removing it from here would detach that manager's staged files.
    """
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        if not name.startswith(_PREFIX):
            continue
        pid = name.removeprefix(_PREFIX).split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(tmp, name))


class StagingError(RuntimeError):
    """An interpreter path is unreachable for the jail uid and we cannot stage it."""


def closed_parent(path: str, uid: int, gid: int) -> str | None:
    """The directories above ``path`` that ``uid``/``gid`` (no capabilities) cannot traverse,
    as ``/root (mode 0700)``, top first; ``None`` when every one is open to them."""
    closed: list[str] = []
    current = os.path.dirname(os.path.abspath(path))
    while True:
        try:
            st = os.stat(current)
        except OSError:
            closed.insert(0, f"{current} (missing)")
        else:
            mode = stat.S_IMODE(st.st_mode)
            if st.st_uid == uid:
                ok = bool(mode & stat.S_IXUSR)
            elif st.st_gid == gid:
                ok = bool(mode & stat.S_IXGRP)
            else:
                ok = bool(mode & stat.S_IXOTH)
            if not ok:
                closed.insert(0, f"{current} (mode {mode:04o})")
        if current == "/":
            return ", ".join(closed) or None
        current = os.path.dirname(current)


def reachable(path: str, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` (no capabilities) can traverse every directory above ``path``."""
    return closed_parent(path, uid, gid) is None


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_void_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    libc.unshare.argtypes = [ctypes.c_int]
    return libc


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise StagingError(f"{what}: {os.strerror(err)}")


class Staging:
    """The staging tmpfs; ``close()`` unmounts it and removes its (empty) mount point."""

    def __init__(self, root: str) -> None:
        self.root = root

    def close(self) -> None:
        with contextlib.suppress(OSError):
            _libc().umount2(self.root.encode(), _MNT_DETACH)
            os.rmdir(self.root)


def stage_unreachable(
    binds: list[tuple[str, str]],
    uid: int,
    gid: int,
    files: Mapping[str, bytes] | None = None,
) -> tuple[list[tuple[str, str]], Staging | None]:
    """Return ``binds`` with unreachable sources replaced by staged copies (bind mounts).

    ``files`` (relative path -> bytes) are written onto the staging tmpfs, under
    :data:`FILES`, mode 0755: the vetted bundled bwrap when the jail uid cannot reach it where
    it was installed. A copy rather than a bind: what runs is the bytes that were checked.
    """
    todo = [i for i, (src, _) in enumerate(binds) if not reachable(src, uid, gid)]
    if not todo and not files:
        return binds, None
    if os.geteuid() != 0:
        src = binds[todo[0]][0]
        raise StagingError(f"{src} is not reachable by uid {uid}; make its parents o+x")
    libc = _libc()
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "make / private")
    _reap_stale_staging()
    root = tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-")
    os.chmod(root, 0o755)  # noqa: S103 - the jail uid must traverse it; it holds only mounts
    size = 64 * 1024 + sum(len(data) + 8192 for data in (files or {}).values())
    options = f"mode=0755,size={size}".encode()
    _check(libc.mount(b"tmpfs", root.encode(), b"tmpfs", 0, options), "tmpfs")
    for relative, data in (files or {}).items():
        target = os.path.join(root, FILES, relative)
        folder = os.path.dirname(target)
        os.makedirs(folder, exist_ok=True)
        while folder != root:  # our umask is 077; the jail uid must traverse them
            os.chmod(folder, 0o755)  # noqa: S103
            folder = os.path.dirname(folder)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o755)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, 0o755)  # run by the jail uid; root owns it and nobody else writes
        finally:
            os.close(fd)
    out = list(binds)
    for n, i in enumerate(todo):
        src, dest = binds[i]
        target = os.path.join(root, str(n))
        if os.path.isdir(src):
            os.mkdir(target, 0o755)
        else:
            with open(target, "w"):
                pass
        _check(
            libc.mount(src.encode(), target.encode(), None, _MS_BIND | _MS_REC, None),
            f"bind {src}",
        )
        out[i] = (target, dest)
    log.info(
        "staged %d interpreter path(s), %d file(s) for uid %d", len(todo), len(files or ()), uid
    )
    return out, Staging(root)
