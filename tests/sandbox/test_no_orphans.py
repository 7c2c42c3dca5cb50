"""Issue 27, finding 13: no process of a jail outlives the bot that asked for it.

A real bot process (``Sandbox`` in a subprocess, as the bot and the CLI hold it) is SIGKILLed,
alone or together with its manager, at each stage of a jail's life, while two busy loops keep
both cores loaded. Afterwards no process of its jails may be left: none with the jails' host uid
(each test run picks a uid of its own, so other suites' jails do not count), and neither the
manager nor anything it forked.

One stage needs a hand to be hit every time: "bwrap spawned, not yet running". There, bwrap has
been started but has not armed ``--die-with-parent``; on a loaded machine that window lasts as
long as the scheduler likes. The test widens it on purpose: ``SANDBOX_BWRAP`` points at a gate
script that waits for the test before it ``exec``s the real bwrap.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.test_fork_server import _children, _gone

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: The jails' host uid for this test run only (the manager runs as root here and drops to it).
UID = 61000 + os.getpid() % 3000

_BOT = """
import asyncio, json, sys
from bot.sandbox import Sandbox
from tests.sandbox.sandbox_helpers import sandbox_config

stage, uid, bwrap = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def say(**event):
    print(json.dumps(event), flush=True)

async def main():
    fork_server = stage != "single-use jail running"
    config = sandbox_config(
        preload=(), jail_uid=uid, jail_gid=uid, bwrap=bwrap, forks_ahead=2, pool_size=0,
        fork_server=fork_server,
    )
    sb = Sandbox(config)
    starting = asyncio.create_task(sb.start())
    while sb._proc is None:
        await asyncio.sleep(0.001)
    say(manager=sb._proc.pid)
    await starting
    say(available=sb.available, reason=sb.unavailable_reason)
    if stage == "children ready":
        await sb.wait_warm(2, within=120)
        say(warm=2)
    elif stage in ("snippet running", "single-use jail running"):
        if fork_server:
            await sb.wait_warm(2, within=120)
        run = asyncio.create_task(sb.run("import time\\ntime.sleep(60)\\n", timeout=60))
        while (await sb.status())["running"] != 1:
            await asyncio.sleep(0.01)
        say(running=1)
        await run
    await asyncio.Event().wait()

asyncio.run(main())
"""


def _uid_processes(uid: int) -> set[int]:
    """Live processes (not zombies) whose real uid is ``uid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines()
            )
            if int(fields["Uid"].split()[0]) == uid and fields["State"].split()[0] != "Z":
                found.add(int(entry.name))
    return found


def _describe(pids: set[int]) -> list[str]:
    out = []
    for pid in sorted(pids):
        with contextlib.suppress(OSError):
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120]
            status = Path(f"/proc/{pid}/status").read_text()
            ppid = next(line for line in status.splitlines() if line.startswith("PPid"))
            nspid = next(line for line in status.splitlines() if line.startswith("NSpid"))
            out.append(f"{pid} ({ppid.split()[1]}; NSpid {nspid.split(None, 1)[1]}) {cmd!r}")
    return out


def _until(what: str, check: object, within: float = 120.0) -> object:
    deadline = time.monotonic() + within
    while not (found := check()):  # type: ignore[operator]
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)
    return found


@pytest.fixture(scope="module")
def cpu_load() -> Iterator[None]:
    """Two busy loops: both cores of the CI machine are taken while jails start and die."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield
    finally:
        for proc in loops:
            proc.kill()
            proc.wait()


@pytest.fixture
def gate() -> Iterator[Path]:
    """A bwrap that waits at ``gate/fifo`` (after touching ``gate/reached``) before running."""
    here = Path(tempfile.mkdtemp(prefix="studybot-gate-"))  # reachable by the jail uid
    os.mkfifo(here / "fifo", 0o666)
    script = here / "bwrap"
    script.write_text(
        textwrap.dedent(
            f"""\
            #!/bin/sh
            : > {here}/reached
            read _ < {here}/fifo
            exec /usr/bin/bwrap "$@"
            """
        )
    )
    script.chmod(0o755)
    here.chmod(0o777)  # the jail uid, which runs the script, creates "reached" here
    yield here
    _open_gate(here)
    shutil.rmtree(here)


def _open_gate(here: Path) -> None:
    """Let every bwrap waiting at the gate go on (if one still waits)."""
    while True:
        try:
            fd = os.open(here / "fifo", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: nobody waits
            return
        os.close(fd)
        time.sleep(0.01)  # let the reader see the end of file before opening again


STAGES = [
    "manager starting",
    "bwrap spawned, not yet running",
    "jail setting up",
    "children ready",
    "snippet running",
    "single-use jail running",
]


@pytest.mark.parametrize("kill", ["bot", "bot and manager"])
@pytest.mark.parametrize("stage", STAGES)
def test_killing_the_bot_leaves_no_jail_behind(
    stage: str, kill: str, cpu_load: None, gate: Path
) -> None:
    bwrap = str(gate / "bwrap") if stage == "bwrap spawned, not yet running" else "bwrap"
    assert not _uid_processes(UID), "processes of this test's jail uid exist already"
    bot = subprocess.Popen(
        [sys.executable, "-c", _BOT, stage, str(UID), bwrap],
        cwd=ROOT,
        env={"PATH": os.environ.get("PATH", "")},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert bot.stdout is not None
    watched: set[int] = set()
    try:
        manager = json.loads(bot.stdout.readline())["manager"]
        if stage == "bwrap spawned, not yet running":
            _until("bwrap at the gate", (gate / "reached").exists)
        elif stage == "jail setting up":
            _until("a jail process", lambda: _uid_processes(UID))
        elif stage != "manager starting":
            hello = json.loads(bot.stdout.readline())
            assert hello["available"], hello
            event = json.loads(bot.stdout.readline())
            assert event.get("warm") or event.get("running"), event
        watched = {manager} | _children(manager) | _uid_processes(UID)
        if kill == "bot and manager":
            os.kill(manager, signal.SIGKILL)
        bot.kill()
        bot.wait()
        if stage == "bwrap spawned, not yet running":
            # A bwrap held at the gate runs on once its manager is gone (if the manager does
            # not go, it is held no longer than this deadline: that is a failure below).
            with contextlib.suppress(AssertionError):
                _until("the manager's end", lambda: not _gone({manager}), within=10)
            _open_gate(gate)

        def clean() -> bool:
            return not (_gone(watched) | _uid_processes(UID))

        deadline = time.monotonic() + 20
        while not clean():
            left = _gone(watched) | _uid_processes(UID)
            assert time.monotonic() < deadline, f"left behind: {_describe(left)}"
            time.sleep(0.05)
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait()
        for pid in _gone(watched) | _uid_processes(UID):  # nor to the next test
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


_KEEPER = """
import subprocess, sys
from bot.sandbox.host.pidns import JailPidNamespace

mark = sys.argv[1]
ns = JailPidNamespace.create()
with ns.spawning():
    # sh leaves a sleep behind and exits: the sleep is re-parented to the keeper.
    orphan = subprocess.run(["/bin/sh", "-c", f"sleep 3000.{mark} >/dev/null 2>&1 & echo $!"],
                            capture_output=True, text=True, check=True).stdout.strip()
    child = subprocess.Popen(["sleep", f"3001.{mark}"])
print(orphan, child.pid, ns.keeper, flush=True)
sys.stdin.read()
"""


def _sleeps(mark: str) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and mark.encode() in (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
    return _gone(found)


def test_the_keeper_kills_orphans_and_dies_with_its_manager() -> None:
    """A jail process whose parent is gone is killed while the manager lives; everything in
    the jails' pid namespace is killed when the manager dies, SIGKILL included."""
    mark = str(os.getpid())
    manager = subprocess.Popen(
        [sys.executable, "-c", _KEEPER, mark],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert manager.stdout is not None
        # (sh's $! is the orphan's pid in the jails' namespace: it is found by its argv here.)
        assert select.select([manager.stdout], [], [], 60)[0], "the manager did not start"
        _, child, keeper = (int(n) for n in manager.stdout.readline().split())
        assert os.readlink(f"/proc/{child}/ns/pid") != os.readlink("/proc/self/ns/pid")
        _until("the orphan's end", lambda: not _sleeps(f"3000.{mark}"), within=10)
        assert _gone({child, keeper}) == {child, keeper}  # the manager's own child lives on
        manager.kill()
        manager.wait()
        _until("the namespace's end", lambda: not _gone({child, keeper}), within=10)
        assert not _sleeps(f".{mark}")
    finally:
        if manager.poll() is None:
            manager.kill()
            manager.wait()
        for pid in _sleeps(f".{mark}"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
