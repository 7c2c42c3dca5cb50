"""Turn what the manager saw of a finished jail into a :class:`RunResult`.

Evidence, strongest first: the manager's own wall clock (timeout), the cgroup's OOM-kill
counter (memory_limit), the exit status bwrap passes on (``128 + N`` for a signal, as a shell
would say it), and last the worker's own report.

The snippet can write the report's line itself. A report is therefore used only when it says
what the snippet could have made true anyway (:func:`plausible_report`): an exit code of 0 to
255, as ``sys.exit(n)`` gives, and ``memory_error`` only with the exit code 1 that a raised
exception ends with. Anything else (``2**70``, ``-7`` with ``memory_error``) is ignored and the
manager waits for the exit status bwrap passes on instead; with that status known, a report
that disagrees with it is ignored too. No exit code outside 0-255 is ever shown.
"""

from __future__ import annotations

import signal as _signal

from bot.sandbox.result import Outcome, RunResult

__all__ = ["classify", "plausible_report", "signal_name"]


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
        if code is not None and not 0 <= code <= 255:
            code = None  # no process exits with that: never show it
        return RunResult(outcome, code, sig, stdout, stderr, truncated, duration_ms)

    if timed_out:
        return result(Outcome.TIMEOUT, 128 + _signal.SIGKILL, "SIGKILL")

    if returncode is not None and returncode < 0:  # bwrap itself was signalled
        returncode = 128 - returncode

    if report is not None and plausible_report(report):
        claimed = report["exit_code"]
        assert isinstance(claimed, int)
        if returncode is None or returncode == claimed:
            if report.get("memory_error") is True:
                return result(Outcome.MEMORY_LIMIT, claimed, None)
            if claimed == 0:
                return result(Outcome.OK, 0, None)
            return result(Outcome.MEMORY_LIMIT if oom_kills else Outcome.ERROR, claimed, None)

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


def plausible_report(report: dict[str, object]) -> bool:
    """Whether a worker report claims only what the snippet could have made true itself."""
    code = report.get("exit_code")
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        return False
    memory = report.get("memory_error", False)
    return memory is False or (memory is True and code == 1)
