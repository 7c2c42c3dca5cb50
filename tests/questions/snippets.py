"""Run a pack snippet for the tests: a fresh interpreter and next to nothing else.

The shipped packs' snippets are our own code, so this runs them directly, outside any jail,
with the test's interpreter (the venv's torch), isolated (``-I``), in an empty folder, with an
almost empty environment and a timeout: one test per item, naming it when it fails.
``test_check_sandbox.py`` runs the same snippets through the real jail (``questions check``).

A cold ``python -c`` per snippet spent two seconds importing torch before the snippet's own
line ran, for each of the ~250 snippets (most of the suite's time on two cores). So each test
process starts one ``python -I`` that imports torch once (:data:`_SERVER`) and forks a child
per snippet, as the sandbox's fork server does: the child gets the empty folder as its
working directory, the environment, ``/dev/null`` as stdin and its own stdout and stderr,
fresh ``__main__`` globals and fresh Python, numpy and torch seeds, runs the snippet as ``-c`` would (an uncaught exception
prints its traceback and exits 1, ``SystemExit`` exits with its code, non-daemon threads and
``atexit`` run before exit) and is killed with its process group at the timeout.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bot.questions.expectations import OutputMatch

__all__ = ["SNIPPET_TIMEOUT_S", "explain", "run_snippet", "run_snippet_cold"]

SNIPPET_TIMEOUT_S = 120  # importing torch takes seconds on a small, busy machine; compile more

# Passed through because on some processors older OpenBLAS builds need them to work at all.
PASSTHROUGH_ENV = ("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _env(workdir: Path) -> dict[str, str]:
    env = {name: os.environ[name] for name in PASSTHROUGH_ENV if name in os.environ}
    return env | {"HOME": str(workdir), "TMPDIR": str(workdir), "LANG": "C.UTF-8"}


def run_snippet(code: str, workdir: Path) -> tuple[str, str, int | None]:
    """``(stdout, stderr, exit_code)``; ``exit_code`` is None when the run timed out."""
    return _server().run(code, workdir, _env(workdir))


def run_snippet_cold(code: str, workdir: Path) -> tuple[str, str, int | None]:
    """:func:`run_snippet` in a fresh ``python -I -c`` of its own (what the warm server
    stands for; ``test_the_warm_runner_agrees_with_a_cold_interpreter`` compares the two)."""
    env = _env(workdir)
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-c", code],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=SNIPPET_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return _text(exc.stdout), _text(exc.stderr), None
    return done.stdout, done.stderr, done.returncode


def explain(verdict: OutputMatch, stderr: str) -> str:
    """A failure message an author can act on: the reason, both outputs, the end of stderr."""
    tail = "\n".join(stderr.strip().splitlines()[-15:])
    return (
        f"{verdict.reason}\n--- expected ---\n{verdict.expected}\n--- got ---\n{verdict.got}"
        f"\n--- stderr (last lines) ---\n{tail}"
    )


def _text(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        return output.decode("utf-8", "replace")
    return output or ""


_SERVER = r"""
import builtins, importlib.machinery, io, json, os, select, signal, sys, types

import torch  # noqa: F401 - the two seconds every snippet would pay again


def child(code, cwd, env, out, err):
    os.setsid()  # a timeout kills the snippet's whole process group
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                            (1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    import tempfile
    tempfile.tempdir = None  # found again from TMPDIR, as a fresh interpreter would
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
        errors="backslashreplace", line_buffering=True)
    sys.argv = ["-c"]
    import random
    random.seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    torch.seed()  # a fresh interpreter seeds torch from the OS too
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __annotations__={},
                         __loader__=importlib.machinery.BuiltinImporter)
    sys.modules["__main__"] = main
    status = 0
    try:
        exec(compile(code, "<string>", "exec"), main.__dict__)
    except SystemExit as exc:
        if exc.code is None:
            status = 0
        elif isinstance(exc.code, int):
            status = exc.code
        else:
            print(exc.code, file=sys.stderr)
            status = 1
    except BaseException as exc:
        exc.__traceback__ = exc.__traceback__.tb_next  # from the snippet's frame on
        sys.excepthook(type(exc), exc, exc.__traceback__)
        status = 1
    import atexit, threading
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(status & 0xFF)


for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(request["code"], request["cwd"], request["env"], request["out"],
                  request["err"])
        finally:
            os._exit(70)
    pidfd = os.pidfd_open(pid)
    finished = select.select([pidfd], [], [], request["timeout"])[0]
    if not finished:
        os.killpg(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    os.close(pidfd)
    try:
        os.killpg(pid, signal.SIGKILL)  # anything the snippet left behind
    except ProcessLookupError:
        pass
    code = None if not finished else (
        -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))
    sys.stdout.write(json.dumps({"exit": code}) + "\n")
    sys.stdout.flush()
"""


class _WarmServer:
    """One torch-warm ``python -I`` per test process; one snippet at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._outputs = tempfile.mkdtemp(prefix="studybot-snippets-")
        atexit.register(shutil.rmtree, self._outputs, ignore_errors=True)

    def _started(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            env = _env(Path(self._outputs))
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-c", _SERVER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                cwd=self._outputs,
                env=env,
                text=True,
                encoding="utf-8",
            )
        return self._proc

    def run(self, code: str, workdir: Path, env: dict[str, str]) -> tuple[str, str, int | None]:
        with self._lock:
            proc = self._started()
            assert proc.stdin is not None and proc.stdout is not None
            out = os.path.join(self._outputs, "stdout")
            err = os.path.join(self._outputs, "stderr")
            request = {
                "code": code, "cwd": str(workdir), "env": env, "out": out, "err": err,
                "timeout": SNIPPET_TIMEOUT_S,
            }  # fmt: skip
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
            answer = proc.stdout.readline()
            if not answer:
                raise RuntimeError(f"the warm snippet runner died (exit {proc.wait()})")
            exit_code = json.loads(answer)["exit"]
            with open(out, encoding="utf-8", errors="replace") as fh:
                stdout = fh.read()
            with open(err, encoding="utf-8", errors="replace") as fh:
                stderr = fh.read()
            return stdout, stderr, exit_code


@functools.cache
def _server() -> _WarmServer:
    return _WarmServer()
