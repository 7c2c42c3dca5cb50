"""The sandbox's settings: a frozen value with no secrets, safe to hand to the manager process.

Built from the bot's settings by :meth:`SandboxConfig.from_settings` (never at import time) and
sent to the manager as JSON over its stdin; the manager never sees the settings. The settings
are described by a protocol (:class:`SandboxSettings`), not imported, so that the sandbox
depends on nothing of the bot and can run as a service of its own.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["SandboxConfig", "SandboxSettings"]


class SandboxSettings(Protocol):
    """The fields of the bot's settings that the sandbox reads (``bot.settings.Settings``)."""

    @property
    def sandbox_enabled(self) -> bool: ...
    @property
    def sandbox_timeout(self) -> float: ...
    @property
    def sandbox_memory_mb(self) -> int: ...
    @property
    def sandbox_pids(self) -> int: ...
    @property
    def sandbox_output_bytes(self) -> int: ...
    @property
    def sandbox_tmp_mb(self) -> int: ...
    @property
    def sandbox_pool_size(self) -> int: ...
    @property
    def sandbox_max_running(self) -> int: ...
    @property
    def run_max_bytes(self) -> int: ...
    @property
    def sandbox_cgroup_parent(self) -> str: ...
    @property
    def sandbox_fork_server(self) -> bool: ...
    @property
    def sandbox_forks_ahead(self) -> int: ...


@dataclass(frozen=True, slots=True)
class SandboxConfig:
    """Limits and knobs for every jail. Sizes in the unit their name says.

    ``timeout`` is the wall-clock maximum a caller may ask for; ``startup_timeout`` bounds a cold
    start (bwrap + ``import torch``), which is not charged to the snippet. ``cpu_quota`` is in
    cores. ``max_running`` is how many runs may hold a jail at once, for all callers together
    (the rest wait, at most their own timeout); ``max_starting`` how many jails may be starting.
    ``jail_uid``/``jail_gid`` are used when the manager is root (it always drops to them before
    bwrap); otherwise the manager's own uid is used. ``preload`` are the modules a warm worker
    imports before it waits for code. ``fork_server`` runs snippets in children of one
    torch-warm zygote (``forks_ahead`` of them ready at all times) instead of one whole jail
    per run (``pool_size`` of those kept warm).
    """

    enabled: bool = True
    timeout: float = 10.0
    memory_mb: int = 512
    pids: int = 64
    output_bytes: int = 65536
    tmp_mb: int = 64
    pool_size: int = 2
    max_bytes: int = 65536
    bwrap: str = "bwrap"
    python: str = ""
    jail_uid: int = 65534
    jail_gid: int = 65534
    cpu_quota: float = 1.0
    nofile: int = 256
    torch_threads: int = 1
    import_cpu_seconds: int = 120
    startup_timeout: float = 120.0
    max_starting: int = 4
    max_running: int = 4
    cgroup_parent: str = ""
    preload: tuple[str, ...] = ("numpy", "torch", "matplotlib")
    fork_server: bool = True
    max_files: int = 10
    max_file_bytes: int = 8 * 1024 * 1024
    forks_ahead: int = 24

    @classmethod
    def from_settings(cls, settings: SandboxSettings, **overrides: Any) -> SandboxConfig:
        """The sandbox_* fields of the bot's settings (plus explicit overrides, for tests)."""
        base = cls(
            enabled=settings.sandbox_enabled,
            timeout=settings.sandbox_timeout,
            memory_mb=settings.sandbox_memory_mb,
            pids=settings.sandbox_pids,
            output_bytes=settings.sandbox_output_bytes,
            tmp_mb=settings.sandbox_tmp_mb,
            pool_size=settings.sandbox_pool_size,
            max_running=settings.sandbox_max_running,
            max_bytes=settings.run_max_bytes,
            cgroup_parent=settings.sandbox_cgroup_parent,
            fork_server=settings.sandbox_fork_server,
            forks_ahead=settings.sandbox_forks_ahead,
        )
        return dataclasses.replace(base, **overrides)

    @property
    def python_path(self) -> str:
        """The interpreter jails run: ``python`` if set, else the one running the bot."""
        return self.python or sys.executable

    def clamp_timeout(self, timeout: float | None) -> float:
        """A caller's timeout, never above the configured maximum (and never absurdly small)."""
        if timeout is None:
            return self.timeout
        return max(0.05, min(float(timeout), self.timeout))

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["preload"] = list(self.preload)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SandboxConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if "preload" in values:
            values["preload"] = tuple(values["preload"])
        return cls(**values)
