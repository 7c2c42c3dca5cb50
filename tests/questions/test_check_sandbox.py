"""`studybot questions check` through the real sandbox, as an operator and CI run it.

These run real jails (bwrap, the warm pool, torch imported once per jail). On a host that
cannot isolate snippets the sandbox says why, and the tests that need it are skipped with
that reason; the command itself must then exit 2 and run nothing.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.questions.importers import import_bytes, to_yaml
from bot.settings import Settings
from tests.test_cli import ROOT, studybot

DATA = Path(__file__).resolve().parents[1] / "data" / "import"
SHIPPED = Path(__file__).resolve().parents[2] / "questions"


@functools.cache
def _sandbox_unavailable_reason() -> str | None:
    """Whether this host can isolate snippets: the manager's own probe and smoke test (a jail
    without preloads) decide, so the probe's jails skip importing torch; asked once per test
    process (``test_claims.py`` asks too)."""
    from bot.sandbox import Sandbox, SandboxConfig

    async def probe() -> str | None:
        config = SandboxConfig.from_settings(Settings(), pool_size=1, preload=())  # type: ignore[call-arg]
        async with Sandbox(config) as sandbox:
            if not sandbox.available:
                return sandbox.unavailable_reason
            # One run before closing: closing a sandbox straight after it started can trip
            # an assertion in its response reader (reported to the sandbox's owner).
            await sandbox.run("pass")
            return None

    return asyncio.run(probe())


@pytest.fixture(scope="module")
def sandbox_ready() -> None:
    reason = _sandbox_unavailable_reason()
    if reason is not None:
        pytest.skip(f"sandbox unavailable on this host: {reason}")


def _imported_sheet(tmp_path: Path) -> Path:
    source = DATA / "autograd-sheet.txt"
    out = tmp_path / "autograd-sheet.yaml"
    out.write_text(to_yaml(import_bytes(source.read_bytes(), str(source))), encoding="utf-8")
    return out


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_ready")
def test_check_shows_where_torch_disagrees_with_an_imported_sheet(tmp_path: Path) -> None:
    pack = _imported_sheet(tmp_path)
    proc = studybot("questions", "check", str(pack), "--timeout", "60")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines()[2:7]}
    assert rows["autograd-sheet-prac-02"][1:] == ["8.0", "8.0", "ok"]
    assert rows["autograd-sheet-prac-03"][1:] == ["5.0", "10.0", "disagrees"]
    assert rows["autograd-sheet-prac-04"][-1] == "disagrees"
    assert rows["autograd-sheet-prac-06"][1:] == ["None", "None", "ok"]
    assert proc.stdout.strip().splitlines()[-1] == (
        "5 code item(s): 3 ok, 2 disagree with their expectation"
    )


@pytest.mark.slow
@pytest.mark.usefixtures("sandbox_ready")
def test_check_json(tmp_path: Path) -> None:
    pack = _imported_sheet(tmp_path)
    proc = studybot("questions", "check", str(pack), "--json", "--jobs", "2")
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    assert document["checked"] == 5
    assert document["disagree"] == 2
    wrong = next(row for row in document["items"] if row["id"] == "autograd-sheet-prac-03")
    assert wrong["verdict"] == "disagrees"
    assert wrong["got"] == "10.0"
    assert wrong["path"] == str(pack)


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.usefixtures("sandbox_ready")
def test_every_shipped_pack_passes_the_sandboxed_check() -> None:
    """CI runs `questions check` on every shipped pack; torch.compile items need --timeout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STUDYBOT_", "SANDBOX_"))}
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "questions", "check", str(SHIPPED), "--timeout", "120"],
        capture_output=True,
        text=True,
        timeout=880,
        check=False,
        cwd=ROOT,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all agree with their expectation" in proc.stdout
    # The exercises: each reference passes its checks, its examples agree, its starter fails.
    assert "exercise(s): all pass their checks" in proc.stdout
    # The typed value keys: every right spelling agrees with the item's code, no wrong one does.
    assert proc.stdout.strip().splitlines()[-1].endswith("typed value key(s): all agree")


def test_check_never_runs_unsandboxed(tmp_path: Path) -> None:
    pack = _imported_sheet(tmp_path)
    proc = studybot("questions", "check", str(pack), env={"SANDBOX_ENABLED": "false"})
    assert proc.returncode == 2
    assert proc.stderr.startswith("sandbox unavailable: ")
    assert proc.stderr.strip().endswith("; nothing was run")
    assert proc.stdout == ""
