"""The expectation rules: what counts as the output or the error an item promises."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot.questions.expectations import (
    Expectation,
    OutputMatch,
    compare,
    exception_name,
    names_match,
    normalize_output,
)
from bot.questions.schema import Practice

RUNTIME_TRACEBACK = """\
Traceback (most recent call last):
  File "<string>", line 5, in <module>
    z.backward()
  File "/venv/lib/python3.11/site-packages/torch/_tensor.py", line 623, in backward
    torch.autograd.backward(
RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
"""

# torch.compile's errors go on for many lines after the exception name.
DYNAMO_TRACEBACK = """\
Traceback (most recent call last):
  File "/tmp/c4.py", line 6, in <module>
    f(torch.ones(2))
  File "/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 1177, in wrapper
    raise e.with_traceback(
torch._dynamo.exc.Unsupported: Failed to trace builtin operator
  Explanation: Dynamo does not know how to trace builtin operator `print`
  Hint: Avoid calling builtin `print`.

from user code:
   File "/tmp/c4.py", line 4, in f
    print("hi")

Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace.
"""


def stdout_item(text: str) -> Expectation:
    return Expectation(expect_stdout=text)


def error_item(name: str) -> Expectation:
    return Expectation(expect_error=name)


# --- normalize_output -------------------------------------------------------------------------


def test_normalize_output_line_endings_trailing_spaces_and_blank_lines() -> None:
    assert normalize_output("a  \r\nb\t\rc\n\n  \n") == "a\nb\nc"


def test_normalize_output_keeps_leading_whitespace_and_inner_blank_lines() -> None:
    assert normalize_output("  a\n\nb\n") == "  a\n\nb"


# --- expect_stdout ----------------------------------------------------------------------------


def test_stdout_exact_match_is_ok() -> None:
    verdict = compare(stdout_item("6.0\n"), "6.0\n", "", 0)
    assert verdict == OutputMatch(True, "6.0", "6.0", "output matches")


def test_stdout_trailing_whitespace_and_line_endings_do_not_matter() -> None:
    verdict = compare(
        stdout_item("True False\n[2.0, 4.0]\n"), "True False  \r\n[2.0, 4.0]\r\n\n", "", 0
    )
    assert verdict.ok, verdict.reason


def test_stdout_mismatch_names_the_first_differing_line() -> None:
    verdict = compare(stdout_item("1\n2\n3\n"), "1\n5\n3\n", "", 0)
    assert not verdict.ok
    assert verdict.expected == "1\n2\n3"
    assert verdict.got == "1\n5\n3"
    assert "line 2" in verdict.reason


def test_stdout_leading_whitespace_counts() -> None:
    assert not compare(stdout_item("6.0\n"), " 6.0\n", "", 0).ok


def test_stdout_missing_and_extra_lines_are_mismatches() -> None:
    short = compare(stdout_item("a\nb\n"), "a\n", "", 0)
    long = compare(stdout_item("a\n"), "a\nb\n", "", 0)
    assert not short.ok
    assert not long.ok
    assert "line" in short.reason
    assert "line" in long.reason


def test_stdout_ignores_warnings_on_stderr() -> None:
    warning = "<string>:6: UserWarning: The .grad attribute of a Tensor that is not a leaf...\n"
    assert compare(stdout_item("None\n"), "None\n", warning, 0).ok


def test_stdout_right_but_run_failed_is_not_ok() -> None:
    verdict = compare(stdout_item("6.0\n"), "6.0\n", RUNTIME_TRACEBACK, 1)
    assert not verdict.ok
    assert "RuntimeError" in verdict.reason


def test_stdout_run_that_did_not_finish_is_not_ok() -> None:
    verdict = compare(stdout_item("6.0\n"), "6.0\n", "", None)
    assert not verdict.ok
    assert "did not finish" in verdict.reason


# --- expect_error -----------------------------------------------------------------------------


def test_expected_error_is_ok() -> None:
    verdict = compare(error_item("RuntimeError"), "", RUNTIME_TRACEBACK, 1)
    assert verdict == OutputMatch(
        True, "RuntimeError", "RuntimeError", "raised RuntimeError as expected"
    )


def test_different_error_is_not_ok() -> None:
    verdict = compare(error_item("TypeError"), "", RUNTIME_TRACEBACK, 1)
    assert not verdict.ok
    assert verdict.got == "RuntimeError"
    assert "TypeError" in verdict.reason


def test_no_error_is_not_ok() -> None:
    verdict = compare(error_item("RuntimeError"), "6.0\n", "", 0)
    assert not verdict.ok
    assert "succeeded" in verdict.reason


def test_failure_without_traceback_is_not_ok() -> None:
    verdict = compare(error_item("RuntimeError"), "", "Killed\n", 137)
    assert not verdict.ok
    assert "no traceback" in verdict.reason


def test_error_run_that_did_not_finish_is_not_ok() -> None:
    assert not compare(error_item("RuntimeError"), "", RUNTIME_TRACEBACK, None).ok


def test_a_subclass_does_not_satisfy_its_base_class() -> None:
    oom = RUNTIME_TRACEBACK.replace("RuntimeError:", "torch.OutOfMemoryError:")
    assert not compare(error_item("RuntimeError"), "", oom, 1).ok


@pytest.mark.parametrize(
    ("expected", "raised"),
    [
        ("torch.OutOfMemoryError", "OutOfMemoryError"),
        ("OutOfMemoryError", "torch.OutOfMemoryError"),
        ("Unsupported", "torch._dynamo.exc.Unsupported"),
        ("torch._dynamo.exc.Unsupported", "torch._dynamo.exc.Unsupported"),
    ],
)
def test_qualified_and_unqualified_names_match(expected: str, raised: str) -> None:
    stderr = RUNTIME_TRACEBACK.replace("RuntimeError:", f"{raised}:")
    assert compare(error_item(expected), "", stderr, 1).ok


@pytest.mark.parametrize(
    ("expected", "got"),
    [
        ("a.Error", "b.Error"),
        ("OutOfMemoryError", "MemoryError"),
        ("Error", "torch.OutOfMemoryError"),
        ("runtimeerror", "RuntimeError"),
    ],
)
def test_names_that_do_not_match(expected: str, got: str) -> None:
    assert not names_match(expected, got)


def test_compare_reads_schema_items() -> None:
    item = Practice(
        kind="practice",
        id="t-1",
        difficulty="easy",
        prompt="p",
        code="print(1)",
        expect_stdout="1\n",
        steps=("s",),
        answer="1",
        final_answer="1",
    )
    assert compare(item, "1\n", "", 0).ok
    assert not compare(item, "2\n", "", 0).ok


def test_expectation_needs_exactly_one_field() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Expectation()
    with pytest.raises(ValueError, match="exactly one"):
        Expectation(expect_stdout="1", expect_error="RuntimeError")


# --- exception_name ---------------------------------------------------------------------------


def test_exception_name_reads_the_last_traceback_line() -> None:
    assert exception_name(RUNTIME_TRACEBACK) == "RuntimeError"


def test_exception_name_survives_multi_line_messages() -> None:
    assert exception_name(DYNAMO_TRACEBACK) == "torch._dynamo.exc.Unsupported"


def test_exception_name_without_message() -> None:
    assert exception_name(
        'Traceback (most recent call last):\n  File "x"\nKeyboardInterrupt\n'
    ) == ("KeyboardInterrupt")


def test_exception_name_is_none_without_traceback() -> None:
    assert exception_name("") is None
    assert exception_name("<string>:1: UserWarning: something\n") is None


def _stderr_of(code: str) -> tuple[str, int]:
    run = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    return run.stderr, run.returncode


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("raise ValueError('a\\nb: c')", "ValueError"),
        ("try:\n    1/0\nexcept ZeroDivisionError:\n    raise KeyError('k')", "KeyError"),
        ("try:\n    1/0\nexcept ZeroDivisionError as e:\n    raise TypeError from e", "TypeError"),
        ("x = (", "SyntaxError"),
        ("def f():\n  return 1\n    x", "IndentationError"),
        ("import warnings\nwarnings.warn('w')\nraise OSError(2, 'gone')", "FileNotFoundError"),
        ("class Boom(Exception):\n    pass\nraise Boom('x')", "Boom"),
    ],
)
def test_exception_name_on_real_python_tracebacks(code: str, name: str) -> None:
    stderr, exit_code = _stderr_of(code)
    assert exit_code == 1
    assert exception_name(stderr) == name, stderr
    assert compare(error_item(name), "", stderr, exit_code).ok


def test_sys_exit_is_a_failure_without_an_exception() -> None:
    stderr, exit_code = _stderr_of("import sys\nsys.exit(3)")
    assert exit_code == 3
    assert exception_name(stderr) is None
