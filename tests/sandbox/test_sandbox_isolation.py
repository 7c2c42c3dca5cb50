"""What a snippet can see and do: no network, no secrets, no privileges, no way out."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

import bot
from bot.sandbox import Sandbox
from bot.sandbox.host.layout import jail_path
from bot.sandbox.result import Outcome
from tests.sandbox.sandbox_helpers import run, sandbox_config

pytestmark = [pytest.mark.asyncio(loop_scope="session"), pytest.mark.slow]


async def test_no_network_at_all(bare: Sandbox) -> None:
    r = await run(
        bare,
        """
        import socket
        for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET):
            try:
                socket.socket(family, socket.SOCK_DGRAM if family != socket.AF_PACKET else 3)
                print('OPEN', family)
            except OSError as exc:
                print('denied', exc.errno)
        try:
            socket.create_connection(('127.0.0.1', 80), timeout=1)
            print('CONNECTED')
        except OSError as exc:
            print('denied', exc.errno)
        a, b = socket.socketpair()
        a.sendall(b'unix ok')
        print(b.recv(16).decode())
        print(open('/proc/net/dev').read().count(':'))
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert "OPEN" not in r.stdout
    assert "CONNECTED" not in r.stdout
    assert r.stdout.count("denied 1") == 5  # EPERM from the seccomp filter
    assert "unix ok" in r.stdout
    assert r.stdout.strip().endswith("1")  # only lo exists in the namespace


async def test_environment_is_empty(sandbox: Sandbox, secret: str) -> None:
    assert os.environ["DISCORD_TOKEN"] == secret  # the bot process does have it
    r = await run(sandbox, "import os\nprint(dict(os.environ))")
    assert r.stdout == "{}\n"


def _bot_paths() -> tuple[str, str]:
    package_dir = Path(bot.__file__).resolve().parent
    return str(package_dir), str(package_dir.parent)


def _top_level_dirs(*paths: str) -> set[str]:
    """The top-level directories these host paths occupy inside the jail."""
    return {Path(jail_path(os.path.realpath(p))).parts[1] for p in paths}


def _jailed_processes() -> list[tuple[str, list[str], int]]:
    """(name, uids, CapEff) of every host process inside one of our jail cgroups."""
    seen = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cgroup = (proc / "cgroup").read_text()
            status = (proc / "status").read_text()
        except OSError:
            continue
        if "studybot-sandbox-" not in cgroup:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        seen.append((fields["Name"], fields["Uid"].split(), int(fields["CapEff"], 16)))
    return seen


def _start_host_victim() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["/bin/sleep", "60"], user=65534, group=65534, extra_groups=[])


def _cgroup_runs(manager_pid: int) -> dict[Path, int]:
    """Per hierarchy: how many run-N cgroups the given manager has right now."""
    while True:
        counts: dict[Path, int] = {}
        try:
            for base in Path("/sys/fs/cgroup").glob(f"**/studybot-sandbox-{manager_pid}"):
                with contextlib.suppress(FileNotFoundError):
                    counts[base] = sum(1 for n in os.listdir(base) if n.startswith("run-"))
            return counts
        except FileNotFoundError:  # a run's cgroup (or a dead manager's tree) went as we walked
            continue


async def test_secrets_are_nowhere_in_the_jail(
    sandbox: Sandbox, secret: str, secret_file: str
) -> None:
    """Environment, every /proc entry, and every readable file outside the package trees."""
    package_dir, source_root = _bot_paths()
    code = f"""
        import os, stat, sys, json
        SECRET = {secret!r}.encode()
        found = []
        for pid in os.listdir('/proc'):
            if pid.isdigit():
                for name in ('environ', 'cmdline'):
                    try:
                        if SECRET in open(f'/proc/{{pid}}/{{name}}', 'rb').read():
                            found.append(f'/proc/{{pid}}/{{name}}')
                    except OSError:
                        pass
        skip = {{os.path.realpath(p) for p in sys.path if p}} | {{'/proc', '/sys'}}
        files = 0
        for root, dirs, names in os.walk('/'):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in skip]
            for name in names:
                path = os.path.join(root, name)
                if name in ('.env', 'studybot.sqlite3') or 'studybot-test-secret' in name:
                    found.append(path)
                try:
                    st = os.lstat(path)
                    if stat.S_ISREG(st.st_mode) and st.st_size < 4 * 1024 * 1024:
                        files += 1
                        if SECRET in open(path, 'rb').read():
                            found.append(path)
                except OSError:
                    pass
        print(json.dumps({{
            'found': found,
            'files': files,
            'package': os.path.exists({package_dir!r}),
            'env_file': os.path.exists(os.path.join({source_root!r}, '.env')),
            'questions': os.path.exists(os.path.join({source_root!r}, 'questions')),
            'secret_file': os.path.exists({secret_file!r}),
            'home': os.path.exists('/home'),
            'root_listing': sorted(os.listdir('/')),
            'import_bot': __import__('importlib.util').util.find_spec('bot') is not None,
        }}))
    """
    r = await run(sandbox, code, timeout=10)
    assert r.outcome is Outcome.OK, r
    report = json.loads(r.stdout)
    assert report["found"] == []
    assert report["files"] > 10  # it did look
    assert report["package"] is False
    assert report["env_file"] is False
    assert report["questions"] is False
    assert report["secret_file"] is False
    assert report["home"] is False
    assert report["import_bot"] is False
    allowed = {"dev", "etc", "lib", "lib64", "proc", "tmp", "usr"}
    assert set(report["root_listing"]) <= allowed | _top_level_dirs(source_root, os.__file__)


async def test_no_capabilities_and_unprivileged_uid(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import os
        lines = open('/proc/self/status').read().splitlines()
        status = dict(line.split(':\\t', 1) for line in lines if ':\\t' in line)
        print(status['Uid'].split()[0], status['Gid'].split()[0])
        for key in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'):
            print(key, int(status[key], 16))
        print('nnp', status['NoNewPrivs'], 'seccomp', status['Seccomp'])
        try:
            os.setuid(0)
            print('SETUID WORKED')
        except OSError as exc:
            print('setuid denied', exc.errno)
        """,
    )
    lines = r.stdout.splitlines()
    assert lines[0] == "65534 65534"
    assert all(line.endswith(" 0") for line in lines[1:6]), lines
    assert lines[6] == "nnp 1 seccomp 2"
    assert lines[7] == "setuid denied 1"


async def test_jail_processes_are_unprivileged_on_the_host(bare: Sandbox) -> None:
    """Seen from outside: every process in a jail's cgroup runs as the jail uid, no caps."""
    task = asyncio.create_task(run(bare, "import time\ntime.sleep(3)\nprint('done')"))
    await asyncio.sleep(1.5)
    seen = _jailed_processes()
    r = await task
    assert r.stdout == "done\n"
    assert seen, "found no jailed process on the host"
    for name, uids, caps in seen:
        assert uids == ["65534"] * 4, (name, uids)
        assert caps == 0, name


@pytest.mark.parametrize(
    ("call", "errno_"),
    [
        ("libc.unshare(0x10000000)", 1),  # CLONE_NEWUSER
        ("libc.unshare(0x00020000)", 1),  # CLONE_NEWNS
        ("libc.mount(b'none', b'/tmp', b'tmpfs', 0, None)", 1),
        ("libc.ptrace(0, 0, None, None)", 1),  # PTRACE_TRACEME
        ("libc.syscall(321, 0, None, 0)", 1),  # bpf
        ("libc.syscall(425, 8, None)", 1),  # io_uring_setup
        ("libc.syscall(323, 0)", 1),  # userfaultfd
        ("libc.syscall(250, 0, 0, 0, 0, 0)", 1),  # keyctl
        ("libc.syscall(298, None, 0, -1, -1, 0)", 1),  # perf_event_open
        ("libc.syscall(308, -1, 0)", 1),  # setns
    ],
    ids=["unshare-user", "unshare-ns", "mount", "ptrace", "bpf", "io_uring", "userfaultfd",
         "keyctl", "perf_event_open", "setns"],
)  # fmt: skip
async def test_dangerous_syscalls_fail_with_eperm(bare: Sandbox, call: str, errno_: int) -> None:
    r = await run(
        bare,
        f"import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"rc = {call}\nprint(rc, ctypes.get_errno())\n",
    )
    assert r.stdout == f"-1 {errno_}\n", r


async def test_clone_with_namespace_flags_is_denied(bare: Sandbox) -> None:
    r = await run(
        bare,
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.syscall(56, 0x40000000 | 17, None, None, None, None), ctypes.get_errno())\n",
    )
    assert r.stdout == "-1 1\n"


async def test_non_native_syscall_abi_kills(bare: Sandbox) -> None:
    """i386 ``int 0x80`` from a 64-bit process: the filter kills it (SIGSYS)."""
    r = await run(
        bare,
        """
        import ctypes, mmap
        code = bytes([0xB8, 0x14, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax,20; int 0x80; ret
        buf = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        buf.write(code)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
        print('calling', flush=True)
        print('returned', ctypes.CFUNCTYPE(ctypes.c_long)(addr)())
        """,
    )
    assert r.stdout == "calling\n"
    assert (r.outcome, r.signal, r.exit_code) == (Outcome.KILLED, "SIGSYS", 128 + 31)


async def test_x32_syscall_abi_kills(bare: Sandbox) -> None:
    r = await run(
        bare,
        "import ctypes\nprint('calling', flush=True)\n"
        "print(ctypes.CDLL(None).syscall(0x40000000 + 39))\n",
    )
    assert r.stdout == "calling\n"
    assert (r.outcome, r.signal) == (Outcome.KILLED, "SIGSYS")


async def test_kill_minus_one_is_harmless_to_the_host(bare: Sandbox) -> None:
    """A host process of the very same uid survives ``kill(-1, SIGKILL)`` from a jail."""
    victim = _start_host_victim()
    try:
        r = await run(
            bare,
            """
            import os, signal
            for sig in (signal.SIGKILL, signal.SIGTERM):
                try:
                    os.kill(-1, sig)
                except ProcessLookupError:
                    pass  # nobody else in sight: the jail's PID namespace holds only us
            print('after kill')
            """,
        )
        assert r.outcome is Outcome.OK
        assert r.stdout == "after kill\n"
        await asyncio.sleep(0.2)
        assert victim.poll() is None, "a host process of the jail uid was killed"
        assert (await bare.status())["last_error"] == ""
        again = await run(bare, "print('pool fine')")
        assert again.stdout == "pool fine\n"
    finally:
        victim.kill()
        victim.wait()


def _host_processes_with(token: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                data = (proc / "cmdline").read_bytes() + (proc / "comm").read_bytes()
            except OSError:
                continue
            if token.encode() in data:
                found.append(int(proc.name))
    return found


async def _none_left_with(token: str, within: float = 10.0) -> bool:
    """True once no host process carries ``token``; the jail's teardown runs just after the
    answer, so this waits for it (up to ``within`` seconds) instead of a fixed sleep."""
    for _ in range(int(within / 0.1)):
        if not _host_processes_with(token):
            return True
        await asyncio.sleep(0.1)
    return not _host_processes_with(token)


async def test_no_process_left_behind_double_fork_daemon(bare: Sandbox) -> None:
    token = f"daemon{uuid.uuid4().hex[:8]}"
    r = await run(
        bare,
        f"""
        import os, sys
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                argv = [sys.executable, '-c', 'import time; time.sleep(300)', {token!r}]
                os.execv(sys.executable, argv)
            os._exit(0)
        os.wait()
        print('parent done')
        """,
    )
    assert r.stdout == "parent done\n"
    assert await _none_left_with(token)


async def test_no_process_left_behind_after_timeout(bare: Sandbox) -> None:
    token = f"stray{uuid.uuid4().hex[:8]}"
    r = await run(
        bare,
        f"""
        import ctypes, os, time
        for _ in range(5):
            if os.fork() == 0:
                ctypes.CDLL(None).prctl(15, {token!r}.encode(), 0, 0, 0)  # PR_SET_NAME
                while True:
                    time.sleep(1)
        time.sleep(60)
        """,
        timeout=2,
    )
    assert r.outcome is Outcome.TIMEOUT
    assert await _none_left_with(token)


async def test_jail_cgroups_are_removed(bare: Sandbox) -> None:
    """After runs, only live jails (warm, starting, running, the fork server) have a cgroup."""
    for _ in range(3):
        r = await run(bare, "print(1)")
        assert r.stdout == "1\n"
    assert bare._proc is not None
    # destroy() finishes just after the answer: give it a moment, not a fixed sleep
    for _ in range(100):
        status = await bare.status()
        live = status["warm"] + status["starting"] + status["running"]
        live += status.get("zygote") in ("up", "starting")
        counts = _cgroup_runs(bare._proc.pid)
        if counts and all(count <= live for count in counts.values()):
            break
        await asyncio.sleep(0.1)
    assert counts, "found no cgroup of the manager"
    for base, count in counts.items():
        assert count <= live, (base, count, status)


@pytest.mark.parametrize(
    ("code", "signal", "exit_code"),
    [
        ("import ctypes\nctypes.string_at(0)\n", "SIGSEGV", 139),
        ("import os\nos.abort()\n", "SIGABRT", 134),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "SIGKILL", 137),
    ],
    ids=["segfault", "abort", "self-sigkill"],
)
async def test_interpreter_crash_is_reported(
    bare: Sandbox, code: str, signal: str, exit_code: int
) -> None:
    r = await run(bare, code)
    assert (r.outcome, r.signal, r.exit_code) == (Outcome.KILLED, signal, exit_code)


@pytest.mark.parametrize(
    ("code", "exit_code"),
    [
        ("raise ValueError('boom')\n", 1),
        ("import sys\nsys.exit(3)\n", 3),
        ("import os\nos._exit(5)\n", 5),
        ("def broken(:\n", 1),
    ],
    ids=["exception", "sys-exit", "os-exit", "syntax-error"],
)
async def test_failing_snippet_is_an_error_result(bare: Sandbox, code: str, exit_code: int) -> None:
    r = await run(bare, code)
    assert (r.outcome, r.exit_code, r.signal) == (Outcome.ERROR, exit_code, None)


async def test_traceback_shows_snippet_lines_only(bare: Sandbox) -> None:
    r = await run(bare, "def f():\n    return 1 / 0\n\nf()\n")
    assert r.outcome is Outcome.ERROR
    assert 'File "<snippet>", line 4, in <module>' in r.stderr
    assert "return 1 / 0" in r.stderr
    assert "ZeroDivisionError: division by zero" in r.stderr
    assert "worker" not in r.stderr


@pytest.mark.parametrize(
    ("code", "stderr"),
    [
        (
            "def f(:\n  pass\n",
            '  File "<snippet>", line 1\n    def f(:\n          ^\nSyntaxError: invalid syntax\n',
        ),
        (
            "if True:\nprint(1)\n",
            '  File "<snippet>", line 2\n    print(1)\n    ^\n'
            "IndentationError: expected an indented block after 'if' statement on line 1\n",
        ),
        (
            "x = 1\ncompile('(', 'inner', 'exec')\n",
            # Raised while running: the error line first (issue 29), then as Python prints it.
            "SyntaxError: '(' was never closed\n"
            "Traceback (most recent call last):\n"
            '  File "<snippet>", line 2, in <module>\n'
            "    compile('(', 'inner', 'exec')\n"
            '  File "inner", line 1\n    (\n    ^\n'
            "SyntaxError: '(' was never closed\n",
        ),
    ],
    ids=["syntax-error", "indentation-error", "syntax-error-raised-by-the-snippet"],
)
async def test_syntax_errors_read_as_plain_python_prints_them(
    bare: Sandbox, code: str, stderr: str
) -> None:
    """Exactly what ``python snippet.py`` prints (with the snippet's name): nothing of ours."""
    r = await run(bare, code)
    assert (r.outcome, r.exit_code) == (Outcome.ERROR, 1)
    assert r.stderr == stderr


async def test_concurrent_runs_are_isolated() -> None:
    """Eight runs at the same moment, torch preloaded as in production. SANDBOX_MAX_RUNNING
    (4 by default) would queue half of them; here it is raised so all eight overlap."""
    code = """
        import os, socket, time, json
        me = os.urandom(8).hex()
        open('/tmp/mine', 'w').write(me)
        s = socket.socket(socket.AF_UNIX)
        s.bind('\\0studybot-shared-name')
        time.sleep(1)
        print(json.dumps({'me': me, 'read': open('/tmp/mine').read(), 'tmp': os.listdir('/tmp'),
                          'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit())}))
    """
    async with Sandbox(sandbox_config(pool_size=2, max_running=8)) as sandbox:
        assert sandbox.available, sandbox.unavailable_reason
        results = await asyncio.gather(*(run(sandbox, code, timeout=10) for _ in range(8)))
    reports = []
    for r in results:
        assert r.outcome is Outcome.OK, r
        reports.append(json.loads(r.stdout))
    assert len({rep["me"] for rep in reports}) == 8
    for rep in reports:
        assert rep["read"] == rep["me"]
        assert rep["tmp"] == ["mine"]
        assert rep["pids"] == [1, 2]  # bwrap's init and the worker, nothing of anyone else
