"""Decide whether a snippet's run did what its item says it does.

Every item with ``code`` carries a machine-checkable expectation, so that a question can never
teach an output that torch does not produce. This module is the one place that says what
"matches" means. It is pure (text in, a :class:`OutputMatch` out) so that the shipped-pack test,
which runs snippets in a plain subprocess, and the sandboxed ``questions check`` command judge
runs by exactly the same rules.

The rules
---------

``expect_stdout``
    The run must have finished with exit code 0, and its stdout must equal the expectation
    once both are normalised by :func:`normalize_output`: ``\\r\\n`` and ``\\r`` become ``\\n``,
    trailing whitespace is stripped from every line, and trailing blank lines are dropped.
    Leading whitespace and blank lines between lines still count. stderr is ignored, because
    torch writes warnings there that are not part of the lesson. The exit code is checked
    because a snippet that prints the expected lines and then crashes does not show what the
    question claims.

``expect_error``
    The run must have finished with a non-zero exit code, and the exception class named on the
    last traceback in stderr (see :func:`exception_name`) must be the expected one. Names are
    equal, or one of them is unqualified and equals the last dotted part of the other:
    ``OutOfMemoryError`` matches ``torch.OutOfMemoryError`` and the other way round. Two
    different qualified names do not match. A subclass does not match its base class (an
    ``expect_error: RuntimeError`` is not met by ``torch.OutOfMemoryError``): only the text is
    seen, and an item should name the class a learner will really see.

A run that did not finish (``exit_code`` is ``None``: timed out or killed) never matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "Expectation",
    "OutputMatch",
    "SupportsExpectation",
    "compare",
    "exception_name",
    "names_match",
    "normalize_output",
]

_TRACEBACK_HEADER = "Traceback (most recent call last):"
# What Python prints as the last line of a traceback: ``Name`` or ``Name: message``.
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(?::|$)")
_DID_NOT_FINISH = "the run did not finish (timed out or killed)"


class SupportsExpectation(Protocol):
    """Anything with the two expectation fields: a schema item or an :class:`Expectation`."""

    @property
    def expect_stdout(self) -> str | None: ...

    @property
    def expect_error(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class Expectation:
    """An expectation without an item, e.g. for a snippet a member runs with ``/run``."""

    expect_stdout: str | None = None
    expect_error: str | None = None

    def __post_init__(self) -> None:
        if (self.expect_stdout is None) == (self.expect_error is None):
            raise ValueError("give exactly one of expect_stdout or expect_error")


@dataclass(frozen=True, slots=True)
class OutputMatch:
    """The outcome of one comparison, a value so that callers can report many at once.

    ``expected`` and ``got`` are what was compared: the normalised stdout for an
    ``expect_stdout`` item, or the exception names for an ``expect_error`` item (``got`` then
    says what happened instead when no exception was found). ``reason`` is one readable
    sentence, also when ``ok`` is true.
    """

    ok: bool
    expected: str
    got: str
    reason: str


def normalize_output(text: str) -> str:
    """Output as compared: Unix line endings, no trailing spaces, no trailing blank lines.

    These differences are invisible in a chat message and in a YAML block scalar (which adds a
    final newline), so they must not decide whether an item is right.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    stripped = [line.rstrip() for line in lines]
    while stripped and not stripped[-1]:
        stripped.pop()
    return "\n".join(stripped)


def exception_name(stderr: str) -> str | None:
    """The class name of the exception that ended a Python process, read from its stderr.

    This is the first unindented line after the frames of the *last* traceback, so chained
    exceptions give the final one and multi-line messages (torch.compile's errors go on for
    many lines after the name) do not hide it. A ``SyntaxError`` in ``python -c`` code has no
    ``Traceback`` header, only a ``File`` line; that form is read too. ``None`` when stderr
    holds no traceback (e.g. ``sys.exit(3)`` or a process killed by a signal).
    """
    lines = normalize_output(stderr).split("\n")
    headers = [i for i, line in enumerate(lines) if line == _TRACEBACK_HEADER]
    if headers:
        start = headers[-1] + 1
    else:
        frames = [i for i, line in enumerate(lines) if line.startswith('  File "')]
        if not frames:
            return None
        start = frames[-1]
    for line in lines[start:]:
        if line[:1].isspace():
            continue  # a frame, its source line or the ^^^ markers under it
        match = _EXCEPTION_LINE.match(line)
        return match.group(1) if match else None
    return None


def names_match(expected: str, got: str) -> bool:
    """Exception names match when equal, or when the unqualified one is the other's class.

    ``RuntimeError`` ~ ``RuntimeError``, ``OutOfMemoryError`` ~ ``torch.OutOfMemoryError``
    (either way round); ``a.Error`` and ``b.Error`` are different classes and do not match.
    """
    if expected == got:
        return True
    if "." in expected and "." in got:
        return False
    return expected.rsplit(".", 1)[-1] == got.rsplit(".", 1)[-1]


def compare(
    item_or_expectation: SupportsExpectation,
    stdout: str,
    stderr: str,
    exit_code: int | None,
) -> OutputMatch:
    """Judge one run against an item's expectation by the rules in the module docstring."""
    want_stdout = item_or_expectation.expect_stdout
    want_error = item_or_expectation.expect_error
    if want_stdout is not None and want_error is not None:
        return OutputMatch(False, "", "", "the item gives both expect_stdout and expect_error")
    if want_stdout is not None:
        return _compare_stdout(want_stdout, stdout, stderr, exit_code)
    if want_error is not None:
        return _compare_error(want_error.strip(), stderr, exit_code)
    return OutputMatch(False, "", "", "the item has no expectation to check")


def _compare_stdout(want: str, stdout: str, stderr: str, exit_code: int | None) -> OutputMatch:
    expected = normalize_output(want)
    got = normalize_output(stdout)
    if exit_code is None:
        return OutputMatch(False, expected, got, _DID_NOT_FINISH)
    if exit_code != 0:
        raised = exception_name(stderr)
        how = f"raised {raised}" if raised else "printed no traceback"
        return OutputMatch(
            False, expected, got, f"expected output, but the run failed (exit {exit_code}, {how})"
        )
    if got != expected:
        return OutputMatch(False, expected, got, _first_difference(expected, got))
    return OutputMatch(True, expected, got, "output matches")


def _compare_error(want: str, stderr: str, exit_code: int | None) -> OutputMatch:
    if exit_code is None:
        return OutputMatch(False, want, "(did not finish)", _DID_NOT_FINISH)
    if exit_code == 0:
        return OutputMatch(
            False, want, "(no exception, exit 0)", f"expected {want}, but the run succeeded"
        )
    raised = exception_name(stderr)
    if raised is None:
        return OutputMatch(
            False,
            want,
            f"(no traceback, exit {exit_code})",
            f"expected {want}, but the run failed with exit {exit_code} and no traceback",
        )
    if not names_match(want, raised):
        return OutputMatch(False, want, raised, f"expected {want}, but the run raised {raised}")
    return OutputMatch(True, want, raised, f"raised {raised} as expected")


def _first_difference(expected: str, got: str) -> str:
    """Point at the first differing line, which is what an author needs to fix an item."""
    want_lines, got_lines = expected.split("\n"), got.split("\n")
    for number, (want_line, got_line) in enumerate(zip(want_lines, got_lines, strict=False), 1):
        if want_line != got_line:
            return f"line {number} differs: expected {want_line!r}, got {got_line!r}"
    if len(got_lines) < len(want_lines):
        return f"output stops after {len(got_lines)} line(s); expected {len(want_lines)}"
    return f"output has {len(got_lines)} line(s); expected {len(want_lines)}"
