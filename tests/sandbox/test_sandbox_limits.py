"""Wall clock, memory, processes, output and disk: every limit holds and is reported as such."""

from __future__ import annotations

import asyncio

import pytest

from bot.sandbox import Sandbox, SandboxBusy
from bot.sandbox.result import Outcome
from tests.sandbox.sandbox_helpers import run, sandbox_config

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]


async def test_small_torch_snippet_runs(sandbox: Sandbox) -> None:
    r = await run(sandbox, "import torch\nprint(torch.arange(5).sum().item())\n")
    assert (r.outcome, r.exit_code, r.signal, r.stdout, r.truncated) == (
        Outcome.OK,
        0,
        None,
        "10\n",
        False,
    )
    assert r.duration_ms > 0


@pytest.mark.parametrize(
    "code",
    [
        "while True:\n    pass\n",
        "import time\ntime.sleep(60)\n",
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)\n",
        "import threading\n"
        "def spin():\n    while True:\n        pass\n"
        "for _ in range(3):\n    threading.Thread(target=spin).start()\nspin()\n",
    ],
    ids=["cpu-spin", "sleep", "sigterm-ignored", "spinning-threads"],
)
async def test_wall_clock_kills(bare: Sandbox, code: str) -> None:
    r = await run(bare, code, timeout=1.5)
    assert r.outcome is Outcome.TIMEOUT
    assert (r.exit_code, r.signal) == (137, "SIGKILL")
    assert 1400 <= r.duration_ms < 6000


async def test_timeout_cannot_exceed_configured_max(bare: Sandbox) -> None:
    assert bare.config.clamp_timeout(10_000) == bare.config.timeout
    r = await run(bare, "import time\ntime.sleep(600)\n", timeout=10_000)
    assert r.outcome is Outcome.TIMEOUT
    assert r.duration_ms < (bare.config.timeout + 5) * 1000


@pytest.mark.parametrize(
    "code",
    [
        "x = bytearray(2 * 1024**3)\n",
        "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024**2))\n",
        "import torch\nt = torch.ones(1024, 1024, 1024)\n",
        "import torch\nt = torch.empty(10**13, dtype=torch.uint8)\n",
        "import numpy\na = numpy.ones((1024, 1024, 256))\n",
    ],
    ids=["python-bytearray", "python-grow", "torch-ones", "torch-huge", "numpy"],
)
async def test_memory_bombs(sandbox: Sandbox, code: str) -> None:
    r = await run(sandbox, code, timeout=8)
    assert r.outcome is Outcome.MEMORY_LIMIT, r


async def test_memory_limit_leaves_room_for_real_work(sandbox: Sandbox) -> None:
    r = await run(sandbox, "import torch\nt = torch.ones(2**24)\nprint(int(t.sum()))\n")
    assert r.outcome is Outcome.OK
    assert r.stdout == f"{2**24}\n"


async def test_fork_bomb_is_contained(bare: Sandbox) -> None:
    r = await run(
        bare,
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        timeout=3,
    )
    assert r.outcome in (Outcome.TIMEOUT, Outcome.ERROR, Outcome.KILLED), r
    after = await run(bare, "print('still fine')")
    assert after.stdout == "still fine\n"


async def test_process_limit_reports_error(bare: Sandbox) -> None:
    r = await run(
        bare,
        """
        import os, time
        kids = []
        for _ in range(200):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
        """,
        timeout=5,
    )
    assert r.outcome is Outcome.ERROR, r
    assert "BlockingIOError" in r.stderr or "Resource temporarily unavailable" in r.stderr


async def test_thread_bomb_is_contained(bare: Sandbox) -> None:
    r = await run(
        bare,
        """
        import threading, time
        while True:
            threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        """,
        timeout=5,
    )
    assert r.outcome is Outcome.ERROR, r
    assert "can't start new thread" in r.stderr


async def test_stdout_flood_is_capped(bare: Sandbox) -> None:
    cap = bare.config.output_bytes
    r = await run(bare, "import sys\nsys.stdout.write('x' * 10_000_000)\n")
    assert r.outcome is Outcome.OK
    assert r.truncated is True
    assert len(r.stdout) == cap


async def test_endless_output_times_out_with_capped_output(bare: Sandbox) -> None:
    r = await run(
        bare,
        "import os\nwhile True:\n    os.write(1, b'y' * 4096)\n    os.write(2, b'z' * 4096)\n",
        timeout=2,
    )
    assert r.outcome is Outcome.TIMEOUT
    assert r.truncated is True
    assert len(r.stdout) + len(r.stderr) == bare.config.output_bytes


async def test_stdout_and_stderr_share_one_output_cap(bare: Sandbox) -> None:
    """SANDBOX_OUTPUT_BYTES is what the member gets in all, not per stream."""
    cap = bare.config.output_bytes
    r = await run(
        bare, f"import sys\nsys.stdout.write('o' * {cap})\nsys.stderr.write('e' * {cap})\n"
    )
    assert r.outcome is Outcome.OK
    assert r.truncated is True
    assert len(r.stdout) + len(r.stderr) == cap
    assert set(r.stdout) <= {"o"} and set(r.stderr) <= {"e"}


async def test_output_exactly_at_the_cap_is_not_truncated(bare: Sandbox) -> None:
    half = bare.config.output_bytes // 2
    r = await run(
        bare, f"import sys\nsys.stdout.write('o' * {half})\nsys.stderr.write('e' * {half})\n"
    )
    assert (len(r.stdout), len(r.stderr), r.truncated) == (half, half, False)


async def test_small_output_is_not_truncated(bare: Sandbox) -> None:
    r = await run(bare, "import sys\nprint('out')\nprint('err', file=sys.stderr)\n")
    assert (r.stdout, r.stderr, r.truncated) == ("out\n", "err\n", False)


async def test_disk_fill_stops_at_tmpfs_size(bare: Sandbox) -> None:
    r = await run(
        bare,
        """
        block = b'0' * (1024 * 1024)
        n = 0
        try:
            with open('/tmp/fill', 'wb') as fh:
                while True:
                    fh.write(block)
                    fh.flush()
                    n += 1
        except OSError as exc:
            print(n, exc.strerror)
        """,
        timeout=8,
    )
    assert r.outcome is Outcome.OK, r
    written, _, reason = r.stdout.strip().partition(" ")
    assert int(written) <= bare.config.tmp_mb
    assert reason in ("No space left on device", "File too large")


async def test_dev_shm_is_capped_too(bare: Sandbox) -> None:
    r = await run(
        bare,
        """
        n = 0
        try:
            with open('/dev/shm/fill', 'wb') as fh:
                while True:
                    fh.write(b'0' * 1024 * 1024)
                    fh.flush()
                    n += 1
        except OSError as exc:
            print(n, exc.strerror)
        """,
        timeout=8,
    )
    assert r.outcome is Outcome.OK, r
    assert int(r.stdout.split()[0]) <= bare.config.tmp_mb


async def test_rest_of_filesystem_is_read_only(bare: Sandbox) -> None:
    r = await run(
        bare,
        """
        import os, sys
        targets = ['/x', '/etc/x', '/dev/x', '/proc/x', os.path.join(sys.prefix, 'x'),
                   os.path.join(os.path.dirname(os.__file__), 'x')]
        for path in targets:
            try:
                open(path, 'w').close()
                print('WROTE', path)
            except OSError as exc:
                print('refused', path, exc.errno)
        """,
    )
    assert r.outcome is Outcome.OK
    assert "WROTE" not in r.stdout
    assert r.stdout.count("refused") == 6


async def test_files_do_not_persist_between_runs(bare: Sandbox) -> None:
    first = await run(
        bare,
        "open('/tmp/left-behind', 'w').write('x')\n"
        "open('/dev/shm/left-behind', 'w').write('x')\nprint('written')",
    )
    assert first.stdout == "written\n"
    second = await run(
        bare,
        "import os\nprint(os.path.exists('/tmp/left-behind'), "
        "os.path.exists('/dev/shm/left-behind'), os.listdir('/tmp'))",
    )
    assert second.stdout == "False False []\n"


async def test_cpu_rlimit_applies_after_import(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        "import resource\nsoft, hard = resource.getrlimit(resource.RLIMIT_CPU)\n"
        "print(soft, hard, resource.getrlimit(resource.RLIMIT_CORE),"
        " resource.getrlimit(resource.RLIMIT_NOFILE))",
    )
    soft, hard, *_ = r.stdout.split()
    # Room for what the import used plus this run's wall clock, not the import budget.
    assert 0 < int(soft) < 60
    assert int(hard) == int(soft) + 1
    assert "(0, 0)" in r.stdout
    assert "(256, 256)" in r.stdout


async def test_runs_beyond_the_global_limit_wait_their_turn() -> None:
    """SANDBOX_MAX_RUNNING jails at once, whoever asks: the others queue instead of starting."""
    code = "import time\nstart = time.time()\ntime.sleep(1.5)\nprint(start, time.time())\n"
    async with Sandbox(sandbox_config(pool_size=2, preload=(), max_running=2)) as sb:
        assert sb.available, sb.unavailable_reason
        results = await asyncio.gather(*(sb.run(code, timeout=10) for _ in range(5)))
    assert [r.outcome for r in results] == [Outcome.OK] * 5, results
    spans = [tuple(float(t) for t in r.stdout.split()) for r in results]
    # The jails share the host's clock: count the snippets running when each one started.
    at_once = [sum(1 for s, e in spans if s <= start < e) for start, _ in spans]
    assert max(at_once) == 2, spans


async def test_a_run_that_gets_no_turn_within_its_timeout_is_refused() -> None:
    async with Sandbox(sandbox_config(pool_size=1, preload=(), max_running=1)) as sb:
        assert sb.available, sb.unavailable_reason
        first = asyncio.create_task(sb.run("import time\ntime.sleep(3)\nprint('first')\n"))
        for _ in range(500):  # until the first run holds the one turn
            if (await sb.status())["running"] == 1:
                break
            await asyncio.sleep(0.02)
        else:
            pytest.fail("the first run never started")
        with pytest.raises(SandboxBusy) as info:
            await sb.run("print('second')\n", timeout=1)
        assert info.value.reason == (
            "the sandbox is busy (1 snippet at a time) and no turn came within 1 s; "
            "try again in a moment"
        )
        assert (await first).stdout == "first\n"
        # Refusing a run does not make the sandbox unavailable.
        assert sb.available
        assert (await sb.run("print('third')\n")).stdout == "third\n"


async def test_a_forged_status_line_is_not_believed(bare: Sandbox) -> None:
    """The snippet writes fake worker reports on every descriptor it has, then exits.

    Only what the exit status the manager saw backs is shown: no exit code of 2**70, and no
    "ran out of memory" for a snippet that never did.
    """
    forge = """
        import json, os, sys
        def forge(claim):
            line = json.dumps(claim).encode() + b"\\n"
            for fd in range(3, 256):
                try:
                    os.write(fd, line)
                except OSError:
                    pass
        forge({"exit_code": 2**70, "memory_error": True})
        forge({"exit_code": -7, "memory_error": True})
        sys.stdout.flush()
        os._exit(CODE)
    """
    # Repeated: the real status races the forged line, and it must win every time (a lost
    # race once showed as "killed" with no exit code, 3 runs in 60).
    for _ in range(20):
        failed = await run(bare, forge.replace("CODE", "3"))
        assert (failed.outcome, failed.exit_code) == (Outcome.ERROR, 3)
    clean = await run(bare, forge.replace("CODE", "0"))
    assert clean.outcome is Outcome.OK
    assert clean.exit_code == 0


async def test_too_deep_for_the_parser_is_not_called_out_of_memory(bare: Sandbox) -> None:
    result = await run(bare, "x = " + "-" * 60000 + "1\nprint('never')")
    assert result.outcome is Outcome.ERROR
    assert result.exit_code == 1
    assert "nested too deeply for Python's parser" in result.stderr
    assert "never" not in result.stdout
