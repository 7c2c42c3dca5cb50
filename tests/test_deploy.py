"""The systemd unit's hardening leaves `/run` working: its mounts, recreated for real.

systemd implements several hardening options as mounts in the service's mount namespace. Some
of them (`ProtectKernelTunables=`, `ProtectKernelLogs=`) cover parts of `/proc`, and then the
kernel refuses the fresh procfs bwrap mounts in every jail, so `/run` would be off in the very
deployment we ship. These tests read `deploy/studybot.service`, recreate the mounts its options
make in a private mount namespace (`unshare -m`, as root), and run a torch snippet through the
real CLI and jail there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNIT = ROOT / "deploy" / "studybot.service"

#: The mounts systemd makes for an option, as shell commands run inside ``unshare -m``.
MOUNTS = {
    "ProtectKernelTunables": "mount --bind /proc/sys /proc/sys && "
    "mount -o remount,bind,ro /proc/sys",
    "ProtectKernelLogs": "mount --bind /dev/null /proc/kmsg",
    # a private /dev with the API devices only (systemd's set, bind-mounted from the host)
    "PrivateDevices": "mkdir -p /run/hostdev && mount --bind /dev /run/hostdev && "
    "mount -t tmpfs -o mode=755 tmpfs /dev && "
    "for d in null zero full random urandom tty; do "
    "touch /dev/$d && mount --bind /run/hostdev/$d /dev/$d; done && "
    "mkdir -p /dev/shm /dev/pts && mount -t tmpfs tmpfs /dev/shm",
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        os.geteuid() != 0 or shutil.which("unshare") is None,
        reason="recreating systemd's mounts needs root and unshare(1)",
    ),
]


def service_options(unit: Path) -> dict[str, str]:
    """``Key=value`` lines of the unit's ``[Service]`` section (the last one of a key wins)."""
    options: dict[str, str] = {}
    section = ""
    for raw in unit.read_text().splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            options[key] = value
    return options


def run_under(options: dict[str, str], tmp_path: Path) -> dict[str, object]:
    """Run a torch snippet with `studybot snippet run` inside the mounts ``options`` make."""
    enabled = [name for name in MOUNTS if options.get(name, "no") in {"yes", "true", "1"}]
    setup = " && ".join([MOUNTS[name] for name in enabled] + ['exec "$@"'])
    command = [sys.executable, "-m", "bot", "snippet", "run", "-", "--json", "--timeout", "60"]
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", setup, "sh", *command],
        input="import torch\nprint(torch.ones(3, requires_grad=True).sum().item())\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "SANDBOX_POOL_SIZE": "0"},
        timeout=180,
        check=False,
    )
    if proc.returncode == 3:  # the sandbox said it cannot isolate here
        return {"outcome": "unavailable", "reason": proc.stderr.strip()}
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_the_shipped_unit_leaves_the_sandbox_working(tmp_path: Path) -> None:
    options = service_options(UNIT)
    assert options["PrivateDevices"] == "yes"  # the hardening is really there
    result = run_under(options, tmp_path)
    assert result["outcome"] == "ok", result
    assert result["stdout"] == "3.0\n"


def test_covering_proc_would_switch_runs_off_with_the_reason(tmp_path: Path) -> None:
    """Why the unit leaves ProtectKernelTunables= off: the jail's procfs would be refused."""
    options = {**service_options(UNIT), "ProtectKernelTunables": "yes"}
    result = run_under(options, tmp_path)
    assert result["outcome"] == "unavailable"
    assert "Can't mount proc" in str(result["reason"])


def test_the_scale_compose_file_covers_every_shard_once_and_wires_every_bot() -> None:
    import yaml

    from bot.adapters.discord.shards import ShardRange

    compose = yaml.safe_load((ROOT / "deploy" / "compose.scale.yaml").read_text())
    services = compose["services"]
    owned: list[int] = []
    counts = set()
    for name, service in services.items():
        command = service.get("command", [])
        if "--shards" in command:
            count = int(command[command.index("--shard-count") + 1])
            counts.add(count)
            owned += ShardRange.parse(command[command.index("--shards") + 1], count).ids
        if command[:2] == ["studybot", "run"]:
            env = service["environment"]
            assert env["DATABASE_URL"].startswith("postgresql://studybot:"), name
            for url in env["SANDBOX_URLS"].split(","):
                host = url.split("//", 1)[1].split(":", 1)[0]
                assert host in services, (name, host)
    assert len(counts) == 1  # one shard count shared by every Discord process
    assert sorted(owned) == list(range(counts.pop()))  # each shard run by exactly one
    assert services["postgres"]["image"].startswith("postgres:15")
