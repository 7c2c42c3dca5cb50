"""The jail's seccomp filter, compiled with libseccomp (via ctypes) into a BPF program for bwrap.

Namespaces and a missing capability set already stop most of these calls; the filter is the
second wall for when a kernel bug makes the first one thin. Denied calls fail with ``EPERM`` so
that libraries degrade gracefully instead of crashing; a syscall made through a non-native ABI
(i386 ``int 0x80``, x32) kills the process, because a filter written for one ABI's numbers
means nothing for another's. ``socket`` is allowed for ``AF_UNIX`` only, which is what makes
"no network, not even loopback" true: bwrap brings ``lo`` up in the new network namespace.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import socket
from functools import cache

__all__ = [
    "CLONE_NAMESPACE_FLAGS",
    "DENIED_SYSCALLS",
    "SeccompError",
    "build_filter",
    "filter_fd",
    "libseccomp_version",
]

#: Syscalls answered with EPERM. Grouped by what they would give an attacker.
DENIED_SYSCALLS: tuple[str, ...] = (
    # debugging and reading other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    # new namespaces and mounts: the usual first step of a container escape
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "open_by_handle_at", "name_to_handle_at",
    # kernel attack surface with a long CVE history
    "bpf", "keyctl", "add_key", "request_key", "userfaultfd", "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # the host's kernel, clock and devices
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
    "vhangup", "lookup_dcookie", "uselib", "personality",
    # identity: the jail runs as one unprivileged uid and stays that way
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
    "setfsuid", "setfsgid", "setgroups", "capset",
)  # fmt: skip

#: clone(2) flags that create namespaces; clone with any of them is denied.
CLONE_NAMESPACE_FLAGS: tuple[int, ...] = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)

_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_KILL_PROCESS = 0x80000000
_SCMP_FLTATR_ACT_BADARCH = 2
_SCMP_CMP_NE = 1
_SCMP_CMP_MASKED_EQ = 7


def _scmp_act_errno(code: int) -> int:
    return 0x00050000 | (code & 0x0000FFFF)


class SeccompError(RuntimeError):
    """libseccomp could not be loaded or refused to build the filter."""


class _ArgCmp(ctypes.Structure):
    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


@cache
def _lib() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompError(f"libseccomp not found ({exc}); install libseccomp2") from exc
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.restype = None
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_attr_set.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    return lib


def libseccomp_version() -> str:
    """``major.minor.micro`` of the loaded libseccomp (for the probe and the docs)."""

    class _Version(ctypes.Structure):
        _fields_ = (("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint))

    lib = _lib()
    lib.seccomp_version.restype = ctypes.POINTER(_Version)
    v = lib.seccomp_version().contents
    return f"{v.major}.{v.minor}.{v.micro}"


def _check(rc: int, what: str) -> None:
    if rc < 0:
        raise SeccompError(f"libseccomp: {what}: {os.strerror(-rc)}")


@cache
def build_filter() -> bytes:
    """The filter as raw ``struct sock_filter`` records, the format ``bwrap --seccomp`` reads.

    Built once per manager: the program is the same for every jail.
    """
    lib = _lib()
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
    if not ctx:
        raise SeccompError("libseccomp: seccomp_init failed")
    try:
        _check(
            lib.seccomp_attr_set(ctx, _SCMP_FLTATR_ACT_BADARCH, _SCMP_ACT_KILL_PROCESS),
            "set bad-arch action",
        )
        eperm = _scmp_act_errno(errno.EPERM)
        for name in DENIED_SYSCALLS:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:  # not a syscall on this architecture (e.g. iopl on arm64)
                continue
            _check(lib.seccomp_rule_add_array(ctx, eperm, nr, 0, None), f"deny {name}")
        clone = lib.seccomp_syscall_resolve_name(b"clone")
        for flag in CLONE_NAMESPACE_FLAGS:
            cmp = (_ArgCmp * 1)(_ArgCmp(0, _SCMP_CMP_MASKED_EQ, flag, flag))
            _check(lib.seccomp_rule_add_array(ctx, eperm, clone, 1, cmp), "deny clone flags")
        # clone3 passes its flags in memory a filter cannot read: ENOSYS makes glibc fall back
        # to clone(2), whose flags the rules above can see.
        clone3 = lib.seccomp_syscall_resolve_name(b"clone3")
        if clone3 >= 0:
            _check(
                lib.seccomp_rule_add_array(ctx, _scmp_act_errno(errno.ENOSYS), clone3, 0, None),
                "deny clone3",
            )
        sock = lib.seccomp_syscall_resolve_name(b"socket")
        cmp = (_ArgCmp * 1)(_ArgCmp(0, _SCMP_CMP_NE, socket.AF_UNIX, 0))
        _check(lib.seccomp_rule_add_array(ctx, eperm, sock, 1, cmp), "restrict socket")
        read_fd, write_fd = os.pipe()
        try:
            _check(lib.seccomp_export_bpf(ctx, write_fd), "export")
            os.close(write_fd)
            write_fd = -1
            chunks = []
            while chunk := os.read(read_fd, 65536):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
    finally:
        lib.seccomp_release(ctx)


def filter_fd() -> int:
    """A fresh, rewound memfd holding the filter, for one bwrap launch (bwrap reads it whole).

    One descriptor per launch: concurrent launches must not share a file offset.
    """
    fd = os.memfd_create("studybot-seccomp", os.MFD_CLOEXEC)
    os.write(fd, build_filter())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
