"""One cgroup per jail: memory, pids and CPU limits, an OOM-kill counter, and a kill switch.

Supports cgroup v2 (one unified hierarchy) and v1 (one hierarchy per controller, as on hybrid
hosts where ``/sys/fs/cgroup/memory`` and friends are v1 and ``unified`` has no controllers).
A controller counts as available where it is actually mounted: on a hybrid host that is v1.

Layout: ``<where the manager lives>/studybot-sandbox-<manager pid>/run-<n>``. The manager is the
only writer; a jail never sees cgroupfs (no ``/sys`` inside) and has its own cgroup namespace.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from bot.log import get_logger

__all__ = ["Cgroup", "CgroupError", "CgroupRoot", "CgroupVersion", "Limits", "detect"]

log = get_logger(__name__)

CgroupVersion = int  # 1 or 2

_REQUIRED = ("memory", "pids")
_OPTIONAL = ("cpu",)


class CgroupError(RuntimeError):
    """The host cannot give the jail the cgroup limits it needs; the message says why."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one jail may use. ``cpu_quota`` is in cores (1.0 = one full CPU)."""

    memory_bytes: int
    pids: int
    cpu_quota: float
    cpu_weight_running: int = 100
    cpu_weight_warming: int = 10


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _read_counter(path: Path, key: str) -> int:
    try:
        text = path.read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _mounts(mountinfo: str) -> tuple[Path | None, dict[str, Path]]:
    """(the cgroup2 mount, {v1 controller: its mount}) from ``/proc/self/mountinfo``."""
    v2: Path | None = None
    v1: dict[str, Path] = {}
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, rfields = left.split(), right.split()
        if len(fields) < 5 or len(rfields) < 3:
            continue
        point, fstype, options = Path(fields[4]), rfields[0], rfields[2].split(",")
        if fstype == "cgroup2" and v2 is None:
            v2 = point
        elif fstype == "cgroup":
            for opt in options:
                if opt in (*_REQUIRED, *_OPTIONAL):
                    v1.setdefault(opt, point)
    return v2, v1


def _own_paths(proc_cgroup: str) -> tuple[str, dict[str, str]]:
    """(own v2 path, {v1 controller: own path}) from ``/proc/self/cgroup``."""
    v2 = "/"
    v1: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            v2 = path
        for ctrl in controllers.split(","):
            v1[ctrl] = path
    return v2, v1


@dataclass(slots=True)
class Cgroup:
    """One jail's cgroup: one directory (v2) or one per controller (v1)."""

    version: CgroupVersion
    dirs: dict[str, Path]
    limits: Limits

    @property
    def _procs_dirs(self) -> list[Path]:
        return list(dict.fromkeys(self.dirs.values()))

    def apply_limits(self) -> None:
        lim = self.limits
        if self.version == 2:
            d = self.dirs["memory"]
            _write(d / "memory.max", str(lim.memory_bytes))
            if (d / "memory.swap.max").exists():
                _write(d / "memory.swap.max", "0")
            _write(d / "pids.max", str(lim.pids))
            if (d / "cpu.max").exists():
                _write(d / "cpu.max", f"{int(lim.cpu_quota * 100_000)} 100000")
        else:
            mem = self.dirs["memory"]
            _write(mem / "memory.limit_in_bytes", str(lim.memory_bytes))
            if (mem / "memory.memsw.limit_in_bytes").exists():
                with contextlib.suppress(OSError):  # absent without swap accounting
                    _write(mem / "memory.memsw.limit_in_bytes", str(lim.memory_bytes))
            with contextlib.suppress(OSError):
                _write(mem / "memory.swappiness", "0")
            _write(self.dirs["pids"] / "pids.max", str(lim.pids))
            if "cpu" in self.dirs:
                cpu = self.dirs["cpu"]
                _write(cpu / "cpu.cfs_period_us", "100000")
                _write(cpu / "cpu.cfs_quota_us", str(int(lim.cpu_quota * 100_000)))
        self.set_cpu_weight(running=False)

    def set_cpu_weight(self, *, running: bool) -> None:
        """A warming jail yields the CPU to running ones; it gets its full share when it runs."""
        weight = self.limits.cpu_weight_running if running else self.limits.cpu_weight_warming
        with contextlib.suppress(OSError, KeyError):
            if self.version == 2:
                if (self.dirs["memory"] / "cpu.weight").exists():
                    _write(self.dirs["memory"] / "cpu.weight", str(weight))
            elif "cpu" in self.dirs:
                # v1 shares: 1024 is the default for weight 100.
                _write(self.dirs["cpu"] / "cpu.shares", str(max(2, weight * 1024 // 100)))

    def add(self, pid: int) -> None:
        """Move ``pid`` in; its later children are born inside."""
        for d in self._procs_dirs:
            _write(d / "cgroup.procs", str(pid))

    def pids(self) -> list[int]:
        found: set[int] = set()
        for d in self._procs_dirs:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (d / "cgroup.procs").read_text().split())
        return sorted(found)

    def oom_kills(self) -> int:
        """How many processes the kernel's OOM killer took from this jail."""
        d = self.dirs["memory"]
        if self.version == 2:
            return _read_counter(d / "memory.events", "oom_kill")
        return _read_counter(d / "memory.oom_control", "oom_kill")

    def _kill_member(self, pid: int) -> None:
        """SIGKILL ``pid`` only if it is still ours: pin it with a pidfd, then check membership.

        A pid read from ``cgroup.procs`` may exit and be recycled before the kill; the pidfd
        fixes which process we mean, and the check proves that process is in this cgroup.
        """
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return
        try:
            if any(str(pid) in (d / "cgroup.procs").read_text().split() for d in self._procs_dirs):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(pidfd)

    def kill(self, deadline: float = 5.0) -> bool:
        """SIGKILL everything inside until it is empty; True when empty.

        v2 has ``cgroup.kill`` (atomic, no race with fork). On v1 a fork can race one pass,
        so we repeat; the pids limit bounds how many there can be, and the jail's PID
        namespace dies with its init anyway.
        """
        if self.version == 2 and (self.dirs["memory"] / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                _write(self.dirs["memory"] / "cgroup.kill", "1")
        end = time.monotonic() + deadline
        while True:
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                self._kill_member(pid)
            if time.monotonic() > end:
                log.warning("cgroup %s still has processes %s", self._procs_dirs[0], pids)
                return False
            time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and delete the directories (retrying while the kernel lets go)."""
        self.kill()
        for d in self._procs_dirs:
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        log.warning("cannot remove cgroup %s: %s", d, exc)
                        break
                    time.sleep(0.01)


@dataclass(slots=True)
class CgroupRoot:
    """The manager's own sub-tree, parent of every jail's cgroup."""

    version: CgroupVersion
    bases: dict[str, Path]
    limits: Limits
    _counter: int = field(default=0)

    def create(self, limits: Limits | None = None) -> Cgroup:
        """A new run's cgroup under ours, with these limits (default: one run's)."""
        self._counter += 1
        name = f"run-{self._counter}"
        dirs: dict[str, Path] = {}
        try:
            for ctrl, base in self.bases.items():
                d = base / name
                if d not in dirs.values():
                    d.mkdir()
                dirs[ctrl] = d
            cg = Cgroup(self.version, dirs, limits or self.limits)
            cg.apply_limits()
        except OSError as exc:
            for d in dict.fromkeys(dirs.values()):
                with contextlib.suppress(OSError):
                    d.rmdir()
            raise CgroupError(f"cannot create cgroup {name}: {exc}") from exc
        return cg

    def close(self) -> None:
        for base in dict.fromkeys(self.bases.values()):
            for child in base.glob("run-*"):
                Cgroup(self.version, {"memory": child}, self.limits).remove()
            with contextlib.suppress(OSError):
                base.rmdir()


def _reap_stale(parent: Path, prefix: str) -> None:
    """Remove sub-trees left by managers that died without cleaning up."""
    for stale in parent.glob(f"{prefix}*"):
        pid = stale.name.removeprefix(prefix)
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        for child in stale.glob("run-*"):
            Cgroup(1, {"x": child}, Limits(0, 0, 0)).remove()
        with contextlib.suppress(OSError):
            stale.rmdir()


def _enable_v2(parent: Path, controllers: list[str]) -> None:
    """Turn on ``controllers`` for ``parent``'s children (the v2 "no internal processes" rule).

    If ``parent`` holds processes (the manager and the bot, typically, in a container) they are
    first moved to a ``studybot-host`` leaf, the way container runtimes do it.
    """
    wanted = " ".join(f"+{c}" for c in controllers)
    try:
        _write(parent / "cgroup.subtree_control", wanted)
        return
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise
    leaf = parent / "studybot-host"
    leaf.mkdir(exist_ok=True)
    for pid in (parent / "cgroup.procs").read_text().split():
        with contextlib.suppress(OSError):
            _write(leaf / "cgroup.procs", pid)
    _write(parent / "cgroup.subtree_control", wanted)


def detect(
    limits: Limits,
    *,
    parent: str | None = None,
    proc: Path = Path("/proc/self"),
) -> CgroupRoot:
    """Find usable controllers, create the manager's sub-tree, or raise CgroupError."""
    v2_mount, v1_mounts = _mounts((proc / "mountinfo").read_text())
    v2_path, v1_paths = _own_paths((proc / "cgroup").read_text())
    prefix = "studybot-sandbox-"
    name = f"{prefix}{os.getpid()}"

    v2_ctrls: set[str] = set()
    if v2_mount is not None:
        with contextlib.suppress(OSError):
            v2_ctrls = set((v2_mount / "cgroup.controllers").read_text().split())
    if v2_mount is not None and set(_REQUIRED) <= v2_ctrls:
        own = Path(parent) if parent else v2_mount / v2_path.lstrip("/")
        ctrls = [c for c in (*_REQUIRED, *_OPTIONAL) if c in v2_ctrls]
        try:
            available = set((own / "cgroup.controllers").read_text().split())
            missing = [c for c in _REQUIRED if c not in available]
            if missing:
                raise CgroupError(f"no cgroup {missing[0]} controller delegated to {own}")
            _reap_stale(own, prefix)
            _enable_v2(own, [c for c in ctrls if c in available])
            base = own / name
            base.mkdir(exist_ok=True)
            _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in ctrls))
        except OSError as exc:
            raise CgroupError(f"cgroup not writable: {own}: {exc.strerror}") from exc
        return CgroupRoot(2, dict.fromkeys(ctrls, base), limits)

    bases: dict[str, Path] = {}
    for ctrl in (*_REQUIRED, *_OPTIONAL):
        mount = v1_mounts.get(ctrl)
        if mount is None:
            if ctrl in _REQUIRED:
                raise CgroupError(f"no cgroup {ctrl} controller")
            log.warning("no cgroup %s controller: jails get no CPU share limit", ctrl)
            continue
        own = Path(parent) / ctrl if parent else mount / v1_paths.get(ctrl, "/").lstrip("/")
        try:
            _reap_stale(own, prefix)
            base = own / name
            base.mkdir(exist_ok=True)
            if ctrl == "memory":
                with contextlib.suppress(OSError):
                    _write(base / "memory.use_hierarchy", "1")
        except OSError as exc:
            for made in bases.values():
                with contextlib.suppress(OSError):
                    made.rmdir()
            raise CgroupError(f"cgroup not writable: {own}: {exc.strerror}") from exc
        bases[ctrl] = base
    return CgroupRoot(1, bases, limits)
