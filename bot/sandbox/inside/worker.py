"""The code that runs inside the jail: pre-import, wait, run one snippet, report, vanish.

This file is not imported by the bot. The manager reads its source and hands it to the jailed
interpreter on a descriptor (``python -I -B -c BOOTSTRAP SOURCE_FD FDS...``), so nothing of the
bot needs to be mounted in the jail. It may use the standard library only.

Descriptors (numbers come in ``sys.argv``): ``ctrl`` (read: one request), ``status`` (write:
``ready`` then one result line), ``out`` and ``err`` (the snippet's stdout and stderr, read by
the manager up to the output cap). Until the snippet starts, fds 1 and 2 point at a diagnostics
pipe, so torch's import-time chatter never reaches the member's output.

Two processes, as in a fork-server run (``forkserver.py``): bwrap starts this file as pid 1 of
the jail's pid namespace (``--as-pid-1``). That init arms ``PR_SET_PDEATHSIG``, makes itself not
dumpable and forks the worker proper as pid 2, which imports torch and runs the snippet; the init
only waits and exits with the worker's status, which bwrap passes on. So the snippet cannot open
``/proc/1/mem`` (its init is not dumpable and it holds no capability), and as the namespace's
init the init ignores every signal the snippet could send it.

Why ``os._exit``: a normal interpreter exit after ``import torch`` spends ~400 ms in teardown
(flush, atexit, module finalisers). The jail is thrown away anyway, so we flush our own streams
and leave.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import io
import json
import linecache
import os
import resource
import signal
import sys
import types
from typing import Any

from bot.sandbox.inside import exercise, pictures, tidy

__all__ = ["main"]

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4

#: This interpreter's host paths and their aliases, for tracebacks (the jail binds them as is).
_PATHS = tidy.Paths.of(
    sys.path, [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
)

# The report goes out through these, kept before a snippet could replace them.
_os_write = os.write

# Messages a memory-allocation failure produces when it is not a MemoryError.
_ALLOC_FAILURES = ("can't allocate memory", "not enough memory", "cannot allocate memory")


def _set_limit(which: int, soft: int, hard: int | None = None) -> None:
    resource.setrlimit(which, (soft, soft if hard is None else hard))


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _read_request(fd: int) -> tuple[dict[str, object], bytes]:
    data = bytearray()
    while b"\n" not in data:
        chunk = os.read(fd, 65536)
        if not chunk:
            raise EOFError("manager closed the control pipe")
        data += chunk
    head, _, rest = bytes(data).partition(b"\n")
    header = json.loads(head)
    size = int(header["size"])
    body = bytearray(rest)
    while len(body) < size:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        body += chunk
    return header, bytes(body[:size])


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _print_exception(exc: BaseException) -> None:
    """The traceback a member can read (``tidy.format_exception``): the error line first, the
    snippet's frames in full, library frames folded, no host path; nothing of this file shows.

    An exception that never reached a ``<snippet>`` frame was raised while compiling (a
    SyntaxError, an IndentationError, a too deeply nested expression): Python prints only the
    exception for those, with the ``File "<snippet>", line N`` / source / caret lines. The
    interpreter's own printer does that; the snippet has not run yet, so it is still pristine.
    """
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != "<snippet>":
        tb = tb.tb_next
    if tb is None:
        # The C printer takes the traceback from the exception itself, not from its argument.
        sys.__excepthook__(type(exc), exc.with_traceback(None), None)
    else:
        sys.stderr.write(tidy.format_exception(exc, _PATHS))


def _is_memory_failure(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and any(s in text for s in _ALLOC_FAILURES)


def _run(code: bytes, module: types.ModuleType) -> tuple[int, bool]:
    """Run the snippet as ``__main__``; (exit code, whether it ran out of memory)."""
    module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = module
    # "utf-8-sig": a leading byte order mark is dropped, as Python does when it reads a file.
    text = code.decode("utf-8-sig")
    # Registered so that tracebacks show the member's source lines.
    linecache.cache["<snippet>"] = (len(text), None, text.splitlines(True), "<snippet>")
    try:
        compiled = compile(text, "<snippet>", "exec", dont_inherit=True)
    except (MemoryError, RecursionError) as exc:
        # CPython's parser gives up on very deep nesting (`x = ------...1`) with a bare
        # MemoryError or a RecursionError: no memory limit was reached, and nothing ran.
        os.write(
            2,
            f"SyntaxError: the snippet is nested too deeply for Python's parser "
            f"({type(exc).__name__} while compiling; nothing ran)\n".encode(),
        )
        return 1, False
    except BaseException as exc:
        try:
            _print_exception(exc)
        except BaseException:
            os.write(2, f"{type(exc).__name__}\n".encode())
        return 1, False
    try:
        exec(compiled, module.__dict__)  # noqa: S102 - running the snippet is the job
    except SystemExit as exc:
        return _exit_code(exc), False
    except BaseException as exc:
        try:
            _print_exception(exc)
        except BaseException:
            os.write(2, f"{type(exc).__name__}\n".encode())
        return 1, _is_memory_failure(exc)
    return 0, False


def _show_failure(exc: BaseException, label: str) -> None:
    """The traceback of the first check the member's function failed, for them to read."""
    try:
        sys.stderr.write(f"While running {label}:\n")
        _print_exception(exc)
    except BaseException:
        os.write(2, f"{type(exc).__name__}\n".encode())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[_os_write(fd, view) :]


def _afterwards(
    header: dict[str, object], namespace: dict[str, Any], exit_code: int
) -> dict[str, Any]:
    """Figures, files and (if asked) the autograd graph, for the report. Never raises."""
    extras: dict[str, Any] = {}
    here = os.getcwd()
    try:
        graph_request = header.get("graph")
        if isinstance(graph_request, dict):
            wanted = [str(n) for n in graph_request.get("of") or []]
            if exit_code != 0:
                extras["graph"] = {"error": "the snippet ended with an error before the graph"}
            else:
                roots, why = pictures.pick_tensors(namespace, wanted)
                if not roots:
                    extras["graph"] = {"error": why}
                else:
                    graph = pictures.walk_graph(roots, namespace)
                    pictures.save_open_figures(here)
                    graph["picture"] = pictures.draw_graph(
                        graph, here, [n for n, _ in roots], svg=bool(graph_request.get("svg"))
                    )
                    extras["graph"] = graph
        pictures.save_open_figures(here)
        limits = header.get("files")
        limits = limits if isinstance(limits, dict) else {}
        files, skipped, counts = pictures.collect_files(
            here, int(limits.get("max", 10)), int(limits.get("bytes", 8 * 2**20))
        )
        extras["_files"] = files
        extras["skipped_files"] = skipped
        extras["skipped_counts"] = counts
    except BaseException as exc:  # the snippet may have broken anything; still report
        extras.setdefault("graph_error", f"{type(exc).__name__}: {exc}"[:300])
    return extras


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:  # noqa: S110 - a snippet may have broken its streams
            pass


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")


def _exit_status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) & 0xFF


def _become_init(fds: list[int]) -> None:
    """As pid 1: fork the worker (which returns from here as pid 2), wait for it, exit likewise.

    Until the fork nothing of the snippet can run, so the snippet never meets a dumpable pid 1.
    The init holds none of the run's descriptors (``fds``) once the worker has them.
    """
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # bwrap armed it too; ends the namespace with it
    _prctl(_PR_SET_DUMPABLE, 0)
    # As pid 1 we ignore every signal we do not handle: no Python handler for the snippet to hit.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        _prctl(_PR_SET_DUMPABLE, 1)  # its own /proc/self, as in any process
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return
    for fd in fds:
        os.close(fd)
    while True:  # reap whatever the snippet left reparented to us, until the worker is done
        try:
            done, status = os.wait()
        except ChildProcessError:
            os._exit(70)
        except InterruptedError:
            continue
        if done == pid:
            os._exit(_exit_status(status))


def main(argv: list[str]) -> None:
    ctrl, status, out, err = (int(a) for a in argv[:4])
    _become_init([ctrl, status, out, err])  # we are pid 1 (bwrap --as-pid-1); go on as pid 2
    cpu_import, fsize, nofile, threads = (int(a) for a in argv[4:8])
    preload = [m for m in argv[8].split(",") if m]
    cpu_hard = int(argv[9])

    # bwrap always sets PWD; the snippet gets an empty environment.
    os.environ.clear()
    # Limits that hold from the start. CPU gets room for the import and is cut before the run.
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_FSIZE, fsize)
    _set_limit(resource.RLIMIT_NOFILE, nofile)
    _set_limit(resource.RLIMIT_CPU, cpu_import, cpu_hard)

    pictures.preload(preload)
    exercise.prepare()
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        torch.set_num_threads(threads)
    os.write(status, b"ready\n")

    serve_one(ctrl, status, out, err, cpu_hard)


def serve_one(ctrl: int, status: int, out: int, err: int, cpu_hard: int) -> None:
    """Wait for one request on ``ctrl``, run it with fds 1 and 2 on ``out``/``err``, report, exit.

    Shared by the single-use jail (above) and the fork server's children (``forkserver.py``).
    """
    header, code = _read_request(ctrl)
    os.close(ctrl)
    # The bootstrap registered this code under the bot's package names (so that its imports
    # work); a snippet must find no module called ``bot``.
    for name in [n for n in sys.modules if n == "bot" or n.startswith("bot.")]:
        del sys.modules[name]
    # Receipt: from here on the snippet may have run, and a run that dies is the snippet's.
    os.write(status, b"started\n")
    timeout = float(header["timeout"])  # type: ignore[arg-type]
    budget = min(int(_cpu_seconds() + timeout) + 1, cpu_hard - 1)
    _set_limit(resource.RLIMIT_CPU, budget, budget + 1)

    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    os.set_inheritable(status, False)
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="backslashreplace"
    )
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    sys.argv = ["<snippet>"]

    pictures.install_show(os.getcwd())
    module = types.ModuleType("__main__")
    spec = header.get("exercise")
    judged = isinstance(spec, dict)  # decided before the snippet could patch isinstance
    if judged and isinstance(spec, dict):
        exit_code, memory, checked = exercise.run(spec, code, module, _run, _show_failure)
        extras = _afterwards({}, module.__dict__, exit_code)
        extras["exercise"] = checked
    else:
        exit_code, memory = _run(code, module)
        extras = _afterwards(header, module.__dict__, exit_code)
    _flush()
    # Closing our ends lets the manager see EOF now rather than after the kernel has torn down
    # this process's (large, torch-sized) address space.
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.close(fd)
    files = extras.pop("_files", [])
    extras["files"] = [{"name": name, "size": len(data)} for name, data in files]
    fields = {"exit_code": exit_code, "memory_error": memory, **extras}
    if judged:
        # An exercise's report decides a verdict: it carries the manager's nonce (the snippet
        # can write a line of its own on this pipe, but cannot know the nonce) and is written
        # without the json module, which the snippet may have replaced.
        report = exercise.sealed({**fields, "nonce": header.get("nonce")})
    else:
        report = json.dumps(fields)
    with contextlib.suppress(OSError):
        # The report line, then each file's bytes, in the order and sizes it declares.
        _write_all(status, report.encode() + b"\n")
        for _, data in files:
            _write_all(status, data)
    os._exit(exit_code)


if __name__ == "__main__":
    main(sys.argv[1:])
