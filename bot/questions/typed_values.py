"""Typed answers that are values of code: the member types an expression, the jail evaluates
it, and the value is compared with what the item's own code gives, as exercises compare.

(Below the core, beside the judge, so that ``questions check`` evaluates an item's right and
wrong spellings exactly as a member's answer is evaluated.)

Both sides run through the exercise path of the sandbox, with /run's limits: the reference is
the item's ``code`` followed by ``answer()`` returning ``value.of``; the member's answer is
``answer()`` returning the expression typed. The member's code is built knowing the
reference's value, so that another *spelling* of the same value agrees: ``[3.0, 3.0]`` is
made a tensor of the reference's dtype when a tensor is expected, and ``12`` a float when a
float is. A tensor typed as a tensor keeps its own dtype: ``torch.tensor([3, 3])`` is int64
and does not pass for a float32 gradient. Dtype, shape and values then decide, with the
exercises' tolerances (:func:`bot.questions.judge.differs`).
"""

from __future__ import annotations

import ast

from bot.questions.judge import differs
from bot.sandbox.exercise import CheckJob, ExerciseJob, TensorValue, Value
from bot.sandbox.result import Outcome, RunResult

__all__ = [
    "VALUE_JOB",
    "VALUE_SECONDS",
    "expression_problem",
    "member_code",
    "reference_code",
    "value_differs",
    "value_of",
]

#: One call of ``answer()``: what the jail runs for either side.
VALUE_JOB = ExerciseJob(entry="answer", seed=0, checks=(CheckJob("value", "()"),))
#: How long one evaluation may take (a warm /run is milliseconds; the jail enforces it).
VALUE_SECONDS = 5.0

_TORCH_DTYPES = {
    "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "bool", "complex64", "complex128",
}  # fmt: skip


def expression_problem(text: str) -> str | None:
    """Why ``text`` is not one Python expression a member may type, or None."""
    if "\n" in text.strip():
        return "Type one expression on one line, such as [3.0, 3.0] or torch.tensor([3., 3.])."
    try:
        ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return (
            "That is not a Python expression; type one such as [3.0, 3.0], "
            "torch.tensor([3., 3.]) or None."
        )
    return None


def reference_code(setup: str, of: str) -> str:
    """The item's code, then ``answer()`` returning the expression ``of`` names."""
    return f"{setup.rstrip()}\n\n\ndef answer():\n    return ({of})\n"


def member_code(expression: str, want: Value) -> str:
    """``answer()`` returning the typed expression, made the expected kind of value when it is
    a plain spelling of one (a list or number where a tensor or a float is expected)."""
    cast = ""
    if isinstance(want, TensorValue) and want.dtype in _TORCH_DTYPES:
        cast = (
            "    if not isinstance(got, torch.Tensor) and got is not None:\n"
            f"        got = torch.as_tensor(got, dtype=torch.{want.dtype})\n"
        )
    elif isinstance(want, float):
        cast = (
            "    if isinstance(got, int) and not isinstance(got, bool):\n        got = float(got)\n"
        )
    return (
        f"import torch\n\n\ndef answer():\n    got = ({expression.strip()})\n{cast}    return got\n"
    )


def value_of(result: RunResult) -> Value | str:
    """The value a run of ``answer()`` returned, or why there is none, in a member's words."""
    if result.outcome is Outcome.TIMEOUT:
        return f"that expression did not finish within {VALUE_SECONDS:g} s"
    if result.outcome is Outcome.MEMORY_LIMIT:
        return "that expression needed more memory than a run may have"
    report = result.exercise
    if report is None or report.load_error or not report.results:
        last = result.stderr.strip().splitlines()[-1:] or [result.outcome.value]
        return f"that expression could not run: {last[0][:200]}"
    run = report.results[0]
    if run.raised is not None:
        return f"that expression raised {run.raised}"
    if run.too_large:
        return "that value is too large to compare"
    return run.result


def value_differs(got: Value, want: Value) -> str | None:
    """None when the typed value agrees with the expected one (dtype, shape, values)."""
    return differs(got, want)
