"""Turn what the manager saw of a finished jail into a :class:`RunResult`.

Evidence, strongest first: the manager's own wall clock (timeout), the cgroup's OOM-kill
counter (memory_limit), the exit status bwrap passes on (``128 + N`` for a signal, as a shell
would say it), and last the worker's own report (which the snippet could forge, so it is only
trusted for what the snippet could have printed anyway: its exit code and a MemoryError).
"""

from __future__ import annotations

import signal as _signal

from bot.sandbox.result import Outcome, RunResult

__all__ = ["classify", "signal_name"]


def signal_name(number: int) -> str:
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


def classify(
    *,
    returncode: int | None,
    timed_out: bool,
    report: dict[str, object] | None,
    oom_kills: int,
    stdout: str,
    stderr: str,
    truncated: bool,
    duration_ms: float,
) -> RunResult:
    """One result for every way a run can end. ``returncode`` is bwrap's (negative: a signal)."""

    def result(outcome: Outcome, code: int | None, sig: str | None) -> RunResult:
        return RunResult(outcome, code, sig, stdout, stderr, truncated, duration_ms)

    if timed_out:
        return result(Outcome.TIMEOUT, 128 + _signal.SIGKILL, "SIGKILL")

    if returncode is not None and returncode < 0:  # bwrap itself was signalled
        returncode = 128 - returncode

    exit_code = report.get("exit_code") if report else None
    if isinstance(exit_code, int) and not isinstance(exit_code, bool):
        if report and report.get("memory_error") is True:
            return result(Outcome.MEMORY_LIMIT, exit_code, None)
        if exit_code == 0:
            return result(Outcome.OK, 0, None)
        return result(Outcome.MEMORY_LIMIT if oom_kills else Outcome.ERROR, exit_code, None)

    if returncode is None:
        return result(Outcome.KILLED, None, None)
    if 128 < returncode <= 128 + 64:
        number = returncode - 128
        name = signal_name(number)
        if oom_kills:
            return result(Outcome.MEMORY_LIMIT, returncode, name)
        if number == _signal.SIGXCPU:
            return result(Outcome.TIMEOUT, returncode, name)
        return result(Outcome.KILLED, returncode, name)
    if returncode == 0:
        return result(Outcome.OK, 0, None)
    return result(Outcome.MEMORY_LIMIT if oom_kills else Outcome.ERROR, returncode, None)
