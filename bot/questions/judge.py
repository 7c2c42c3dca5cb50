"""Judging an exercise: the member's values against the reference's, on the same inputs.

(Below the core, so that ``questions check`` judges a starter exactly as a member is judged.)

This is where a verdict is decided, in the bot's process, on plain values the sandbox checked
at its boundary (``bot.sandbox.exercise``). The member's code never runs here, and the
reference's results come from a jail of their own, so nothing the member's code does inside
its jail (printing, exiting, patching torch) can make a wrong answer pass: every check compares
values, with a tolerance per dtype, after the dtype and the shape agree exactly.

Hidden checks are reported without values ("hidden check 3 of 8 failed: wrong gradient");
examples show their arguments, the expected result and what came back.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from bot.questions.schema import Example, Exercise, ExerciseCheck, GraphRule
from bot.sandbox.exercise import (
    FLOAT_DTYPES,
    CheckJob,
    CheckRun,
    DictValue,
    ExerciseJob,
    ExerciseReport,
    SeqValue,
    TensorValue,
    Unsupported,
    Value,
)

__all__ = [
    "CheckVerdict",
    "ExerciseBroken",
    "Verdict",
    "check_names",
    "describe",
    "differs",
    "exercise_spec",
    "graph_differs",
    "judge",
    "member_seed",
    "share_points",
]

#: (rtol, atol) per dtype: torch.testing's defaults, so a correct float32 solution that adds in
#: another order still passes.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
}
_PLAIN_FLOAT = (1.3e-6, 1e-5)  # a Python float (often a float32 tensor's .item())
_SHOWN = 160


class ExerciseBroken(RuntimeError):
    """The reference did not give a value for a check: the exercise, not the member, is at
    fault (``questions check`` catches this before a pack ships)."""


@dataclass(frozen=True, slots=True)
class CheckVerdict:
    number: int  # 1-based among its kind (example 2, hidden check 3)
    hidden: bool
    passed: bool
    reason: str | None = None  # without values: safe to say of a hidden check
    args: str | None = None  # examples only
    expected: str | None = None
    got: str | None = None

    @property
    def label(self) -> str:
        return f"hidden check {self.number}" if self.hidden else f"example {self.number}"


@dataclass(frozen=True, slots=True)
class Verdict:
    checks: tuple[CheckVerdict, ...]
    forbidden: tuple[str, ...] = ()
    problem: str | None = None  # the run as a whole failed (no value at all)

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def total(self) -> int:
        return len(self.checks)

    @property
    def solved(self) -> bool:
        return self.problem is None and not self.forbidden and self.passed == self.total > 0

    @property
    def share(self) -> float:
        """The share of checks passed, for partial credit (0 with a forbidden name)."""
        if self.forbidden or self.problem is not None or not self.checks:
            return 0.0
        return self.passed / self.total


def member_seed(workspace: int, member: int, item_id: str) -> int:
    """The seed of a member's hidden inputs: two members' differ, the same member's repeat."""
    digest = hashlib.sha256(f"exercise:{workspace}:{member}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:7], "big")


def check_names(item: Exercise) -> list[str]:
    examples = [f"example {n}" for n in range(1, len(item.examples) + 1)]
    return examples + [f"hidden check {n}" for n in range(1, len(item.checks) + 1)]


def exercise_spec(item: Exercise, seed: int) -> ExerciseJob:
    """What the jail needs to run ``item``'s checks against a solution (never the reference's
    code, nor anything the host compares with), as the typed job the sandbox takes."""
    names = check_names(item)
    return ExerciseJob(
        entry=item.entry,
        seed=seed,
        forbid=tuple(item.forbid),
        graph=item.graph is not None,
        checks=tuple(
            CheckJob(name, c.args, tuple(c.compare), c.backward)
            for name, c in zip(names, item.all_checks, strict=True)
        ),
    )


def share_points(points: int, share: float) -> int:
    """Partial credit: the share of the question's points, rounded down (a full pass is the
    whole)."""
    return points if share >= 1.0 else math.floor(points * share)


# --- comparing values ---------------------------------------------------------------------


def _kind(value: Value) -> str:
    if isinstance(value, TensorValue):
        return "a tensor"
    if isinstance(value, SeqValue):
        return f"a {value.kind}"
    if isinstance(value, DictValue):
        return "a dict"
    if isinstance(value, Unsupported):
        return value.what
    if value is None:
        return "None"
    return f"a {type(value).__name__}"


def _close(got: float, want: float, rtol: float, atol: float) -> bool:
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= atol + rtol * abs(want)


def _tensor_differs(
    got: TensorValue, want: TensorValue, rtol: float | None, atol: float | None
) -> str | None:
    if got.dtype != want.dtype:
        return "wrong dtype"
    if got.shape != want.shape:
        return "wrong shape"
    if want.dtype in FLOAT_DTYPES:
        r, a = TOLERANCES[want.dtype]
        r, a = (rtol if rtol is not None else r), (atol if atol is not None else a)
        same = all(
            _close(float(g), float(w), r, a) for g, w in zip(got.data, want.data, strict=True)
        )
    else:
        same = got.data == want.data
    return None if same else "wrong value"


def differs(
    got: Value, want: Value, rtol: float | None = None, atol: float | None = None
) -> str | None:
    """None when ``got`` agrees with ``want``; else why, in words that show no value."""
    if isinstance(got, Unsupported):
        return f"returned {got.what}: return a tensor or a plain value"
    if isinstance(want, TensorValue):
        if not isinstance(got, TensorValue):
            return f"wrong type: {_kind(got)}, expected a tensor"
        return _tensor_differs(got, want, rtol, atol)
    if isinstance(want, SeqValue):
        if not isinstance(got, SeqValue):
            return f"wrong type: {_kind(got)}, expected {_kind(want)}"
        if len(got.items) != len(want.items):
            return "wrong length"
        for g, w in zip(got.items, want.items, strict=True):
            if (why := differs(g, w, rtol, atol)) is not None:
                return why
        return None
    if isinstance(want, DictValue):
        if not isinstance(got, DictValue):
            return f"wrong type: {_kind(got)}, expected a dict"
        if sorted(k for k, _ in got.items) != sorted(k for k, _ in want.items):
            return "wrong keys"
        mine = dict(got.items)
        for key, w in want.items:
            if (why := differs(mine[key], w, rtol, atol)) is not None:
                return why
        return None
    if type(got) is not type(want):
        return f"wrong type: {_kind(got)}, expected {_kind(want)}"
    if isinstance(want, float) and isinstance(got, float):
        r, a = _PLAIN_FLOAT
        ok = _close(got, want, rtol if rtol is not None else r, atol if atol is not None else a)
        return None if ok else "wrong value"
    return None if got == want else "wrong value"


def _all_zero(value: Value) -> bool:
    return isinstance(value, TensorValue) and all(v == 0 for v in value.data)


def _grads_differ(
    got: tuple[Value, ...] | None, want: tuple[Value, ...] | None, check: ExerciseCheck
) -> str | None:
    if got is None or want is None or len(got) != len(want):
        return "wrong gradients"
    for g, w in zip(got, want, strict=True):
        if check.grad_none_is_zero and (
            (g is None and _all_zero(w)) or (w is None and _all_zero(g))
        ):
            continue
        if w is None and g is not None:
            return "a gradient where there should be none"
        if w is not None and g is None:
            return "missing gradient"
        if (why := differs(g, w, check.rtol, check.atol)) is not None:
            return f"{why.replace('wrong ', 'wrong gradient ', 1)}"
    return None


def graph_differs(rule: GraphRule | None, mine: CheckRun, ref: CheckRun) -> str | None:
    """Why the result's graph breaks the exercise's rule, or None. Judged where the reference's
    result has a graph (an input that requires grad), in node type names only."""
    if rule is None or ref.graph is None:
        return None
    if mine.graph_too_large:
        return "the result's autograd graph is too large to read"
    if mine.graph is None:
        return f"the result has no autograd graph ({rule.why})"
    held = set(mine.graph)
    missing = [name for name in rule.require if name not in held]
    refused = [name for name in rule.refuse if name in held]
    said = ([f"has no {', '.join(missing)} node"] if missing else []) + (
        [f"holds {', '.join(refused)}"] if refused else []
    )
    return f"the result's graph {' and '.join(said)} ({rule.why})" if said else None


def _one(check: ExerciseCheck, mine: CheckRun, ref: CheckRun) -> str | None:
    """Why the member's run of one check fails against the reference's, or None."""
    if check.error is not None:
        if ref.raised != check.error:
            raise ExerciseBroken(f"the reference did not raise {check.error}")
        if mine.raised == check.error:
            return None
        return (
            f"raised {mine.raised}, expected {check.error}"
            if mine.raised
            else (f"expected {check.error} to be raised")
        )
    if ref.raised is not None or ref.too_large:
        raise ExerciseBroken(f"the reference raised {ref.raised}: {ref.message}")
    if mine.raised is not None:
        return f"raised {mine.raised}"
    if mine.too_large:
        return "the result is too large to compare (at most 100,000 numbers)"
    if "result" in check.compare and (
        why := differs(mine.result, ref.result, check.rtol, check.atol)
    ):
        return why
    if "args" in check.compare and differs(mine.args, ref.args, check.rtol, check.atol):
        return "wrong arguments after the call (an in-place update missing, or unwanted)"
    if "grads" in check.compare and (why := _grads_differ(mine.grads, ref.grads, check)):
        return why
    if "calls" in check.compare and mine.calls != ref.calls:
        return (
            f"the function passed in ran {mine.calls or 0} time(s) during backward, "
            f"expected {ref.calls}"
        )
    return None


def judge(
    item: Exercise, mine: ExerciseReport | None, ref: ExerciseReport, problem: str | None = None
) -> Verdict:
    """The verdict on a member's run (``mine``: None if it ended before reporting, and then
    ``problem`` says why) against the reference's run on the same inputs."""
    checks = item.all_checks
    if len(ref.results) != len(checks) or ref.setup_error or ref.load_error or ref.no_entry:
        raise ExerciseBroken(ref.setup_error or "the reference did not run every check")
    if mine is None or mine.load_error or mine.no_entry or len(mine.results) != len(checks):
        if mine is not None and mine.no_entry:
            problem = f"your code defines no function `{item.entry}`"
        elif mine is not None and mine.load_error:
            problem = "your code failed before the checks could run (see the traceback)"
        elif problem is None:
            problem = "the run ended before every check had run"
        return Verdict(tuple(_failed(item, problem)), mine.forbidden if mine else (), problem)
    verdicts: list[CheckVerdict] = []
    for index, (check, got, want) in enumerate(zip(checks, mine.results, ref.results, strict=True)):
        why = _one(check, got, want)
        if why is None and check.error is None:
            why = graph_differs(item.graph, got, want)
        hidden = index >= len(item.examples)
        number = index + 1 - (len(item.examples) if hidden else 0)
        if hidden:
            verdicts.append(CheckVerdict(number, True, why is None, why))
            continue
        assert isinstance(check, Example)
        shown_got = f"raised {got.raised}" if got.raised else describe(got.result)
        verdicts.append(
            CheckVerdict(
                number,
                False,
                why is None,
                why,
                args=check.args,
                expected=check.expect or f"raises {check.error}",
                got=shown_got,
            )
        )
    return Verdict(tuple(verdicts), mine.forbidden)


def _failed(item: Exercise, why: str) -> list[CheckVerdict]:
    out = [
        CheckVerdict(n, False, False, why, args=e.args, expected=e.expect or f"raises {e.error}")
        for n, e in enumerate(item.examples, 1)
    ]
    out += [CheckVerdict(n, True, False, why) for n in range(1, len(item.checks) + 1)]
    return out


# --- showing values -----------------------------------------------------------------------


def _number(value: float | int | bool, dtype: str) -> str:
    if isinstance(value, bool) or dtype == "bool":
        return str(bool(value))
    if dtype in FLOAT_DTYPES:
        return f"{float(value):.4f}" if math.isfinite(value) else str(value)
    return str(int(value))


def _nested(data: Sequence[float | int | bool], shape: tuple[int, ...], dtype: str) -> str:
    if not shape:
        return _number(data[0], dtype)
    step = len(data) // shape[0] if shape[0] else 0
    parts = [_nested(data[i * step : (i + 1) * step], shape[1:], dtype) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def describe(value: Value) -> str:
    """A value as a member reads it, like torch prints it (4 decimals), cut to a line."""
    if isinstance(value, TensorValue):
        if len(value.data) > 24:
            text = f"tensor of shape {tuple(value.shape)}, {value.dtype}"
        else:
            inner = _nested(value.data, value.shape, value.dtype)
            suffix = "" if value.dtype in ("float32", "int64", "bool") else f", dtype={value.dtype}"
            text = f"tensor({inner}{suffix})"
    elif isinstance(value, SeqValue):
        inner = ", ".join(describe(v) for v in value.items)
        text = (
            f"({inner}{',' if len(value.items) == 1 else ''})"
            if value.kind == "tuple"
            else f"[{inner}]"
        )
    elif isinstance(value, DictValue):
        text = "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in value.items) + "}"
    elif isinstance(value, Unsupported):
        text = value.what
    elif isinstance(value, float):
        text = f"{value:.4f}" if math.isfinite(value) else str(value)
    else:
        text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
