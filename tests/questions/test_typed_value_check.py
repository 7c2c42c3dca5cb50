"""``questions check`` proves a typed value key in the real jail: its right spellings agree
with the value the item's code gives, and its wrong ones do not; a key that breaks either is
reported at its file:line and the check fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters.test_typed_answers import TYPED_PACKS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _check(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", "questions", "check", str(folder)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_the_shipped_spellings_agree_and_a_broken_key_is_reported(tmp_path: Path) -> None:
    good = _check(TYPED_PACKS)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "tm-grad-value                    value key  ok" in good.stdout

    broken = (TYPED_PACKS / "typed-mini.yaml").read_text()
    broken = broken.replace('"torch.full((2,), 3.0)"', '"torch.full((2,), 4.0)"')
    broken = broken.replace('"[1.0, 2.0]"', '"[3., 3.]"')
    (tmp_path / "typed-mini.yaml").write_text(broken)
    bad = _check(tmp_path)
    assert bad.returncode == 1
    assert "also_right[2] `torch.full((2,), 4.0)` is refused: wrong value" in bad.stdout
    assert "wrong[2] `[3., 3.]` agrees with `x.grad`" in bad.stdout
    assert "typed-mini.yaml:" in bad.stdout and "1 typed value key(s): 1 broken" in bad.stdout
