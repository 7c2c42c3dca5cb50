"""The sandbox's contract for an exercise run: what the jail sends back, read strictly.

The report comes from the jail, where member code ran, so it is untrusted: every value is
checked against one small grammar (``None``, ``bool``, 64-bit ints, floats, short strings,
tensors as dtype + shape + numbers, lists, tuples, string-keyed dicts) and turned into frozen
values here. Anything else refuses the whole report (:class:`ExerciseReportInvalid`), and the
submission is answered as "the run's report could not be read". Comparing values is the
core's job (``bot.core.exercises``); nothing here imports torch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "FLOAT_DTYPES",
    "CheckJob",
    "CheckRun",
    "DictValue",
    "ExerciseJob",
    "ExerciseReport",
    "ExerciseReportInvalid",
    "SeqValue",
    "TensorValue",
    "Unsupported",
    "Value",
    "parse_exercise_report",
]


@dataclass(frozen=True, slots=True)
class CheckJob:
    """One call the jail makes of the member's entry: the arguments' expression (evaluated in
    the jail), what is reported for comparison, and whether a backward pass runs first.
    ``expect`` is an example's stated result, only for ``questions check``."""

    name: str
    args: str
    compare: tuple[str, ...] = ("result",)
    backward: bool = False
    expect: str | None = None


@dataclass(frozen=True, slots=True)
class ExerciseJob:
    """What the jail needs to run an exercise's checks against a solution, and nothing else
    (never the reference's code, nor what the host compares with): the one typed job that
    crosses the sandbox boundary, as JSON (:meth:`to_wire`, read back by :meth:`from_wire`)."""

    entry: str
    seed: int
    checks: tuple[CheckJob, ...]
    forbid: tuple[str, ...] = ()
    graph: bool = False

    def to_wire(self) -> dict[str, object]:
        checks: list[dict[str, object]] = []
        for check in self.checks:
            wired: dict[str, object] = {
                "name": check.name,
                "args": check.args,
                "compare": list(check.compare),
                "backward": check.backward,
            }
            if check.expect is not None:
                wired["expect"] = check.expect
            checks.append(wired)
        return {
            "entry": self.entry,
            "seed": self.seed,
            "forbid": list(self.forbid),
            "graph": self.graph,
            "checks": checks,
        }

    @classmethod
    def from_wire(cls, data: object) -> ExerciseJob:
        """A job sent over HTTP to a sandbox host, checked whole; ValueError says what is wrong."""
        if not isinstance(data, dict):
            raise ValueError("an exercise job is an object")
        entry, seed, checks = data.get("entry"), data.get("seed"), data.get("checks")
        if not isinstance(entry, str) or not entry.isidentifier():
            raise ValueError("the job's entry is not a name")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError("the job's seed is not a whole number")
        if not isinstance(checks, list) or not 0 < len(checks) <= _MAX_CHECKS:
            raise ValueError(f"the job has no checks, or more than {_MAX_CHECKS}")
        forbid, graph = data.get("forbid") or [], data.get("graph", False)
        if not isinstance(forbid, list) or not all(isinstance(f, str) for f in forbid):
            raise ValueError("the job's forbid is not a list of names")
        if not isinstance(graph, bool):
            raise ValueError("the job's graph is not true or false")
        return cls(entry, seed, tuple(_check_job(c) for c in checks), tuple(forbid), graph)


def _check_job(data: object) -> CheckJob:
    if not isinstance(data, dict):
        raise ValueError("a check is an object")
    name, args, compare = data.get("name"), data.get("args"), data.get("compare", ["result"])
    backward, expect = data.get("backward", False), data.get("expect")
    if not isinstance(name, str) or not isinstance(args, str):
        raise ValueError("a check needs a name and its arguments as text")
    if not isinstance(compare, list) or not all(isinstance(c, str) for c in compare):
        raise ValueError("a check's compare is not a list of names")
    if not isinstance(backward, bool) or not (expect is None or isinstance(expect, str)):
        raise ValueError("a check's backward or expect has the wrong type")
    return CheckJob(name, args, tuple(compare), backward, expect)


#: Floating dtypes, whose values are compared within a tolerance.
FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64"})
_DTYPES = FLOAT_DTYPES | {"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32"}
_SPECIAL = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
_MAX_NUMBERS = 100_000
_MAX_CHECKS = 40
_MAX_DEPTH = 8
_MAX_ITEMS = 1_000
_MAX_TEXT = 1_000
#: A graph report: at most this many distinct node type names, each a Python identifier.
MAX_GRAPH_NAMES = 64
_NODE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")
_MAX_CALLS = 10**9
_MAX_WARNINGS = 10


class ExerciseReportInvalid(ValueError):
    """The jail's exercise report does not follow the grammar."""


@dataclass(frozen=True, slots=True)
class TensorValue:
    dtype: str
    shape: tuple[int, ...]
    data: tuple[float | int | bool, ...]


@dataclass(frozen=True, slots=True)
class SeqValue:
    kind: str  # "list" or "tuple"
    items: tuple[Value, ...]


@dataclass(frozen=True, slots=True)
class DictValue:
    items: tuple[tuple[str, Value], ...]


@dataclass(frozen=True, slots=True)
class Unsupported:
    """Something the function returned that is not a plain value (said in the jail's words)."""

    what: str


Value = None | bool | int | float | str | TensorValue | SeqValue | DictValue | Unsupported


@dataclass(frozen=True, slots=True)
class CheckRun:
    """What one check's call did: a result (and the arguments, gradients) or an exception."""

    result: Value = None
    args: Value = None
    grads: tuple[Value, ...] | None = None
    raised: str | None = None
    message: str = ""
    too_large: bool = False
    ms: float = 0.0
    has_result: bool = False
    expected: Value = None  # an example's stated result, evaluated (``questions check`` only)
    # The node type names of the result's autograd graph, sorted (None: no graph, or not asked).
    graph: tuple[str, ...] | None = None
    # How often the check's ``counted(...)`` functions ran during backward (if compared).
    calls: int | None = None
    graph_too_large: bool = False  # more nodes or node types than the jail reads


@dataclass(frozen=True, slots=True)
class ExerciseReport:
    results: tuple[CheckRun, ...]
    forbidden: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    load_error: bool = False
    no_entry: bool = False
    setup_error: str | None = None
    warnings: tuple[str, ...] = ()  # what the member's code warned, one line each


class _Counter:
    def __init__(self) -> None:
        self.left = _MAX_NUMBERS

    def take(self, count: int) -> None:
        self.left -= count
        if self.left < 0:
            raise ExerciseReportInvalid("more numbers than a report may carry")


def _text(raw: object, limit: int = _MAX_TEXT) -> str:
    if not isinstance(raw, str):
        raise ExerciseReportInvalid("expected text")
    return raw[:limit]


def _number(raw: object, counter: _Counter) -> float | int | bool:
    counter.take(1)
    if isinstance(raw, str) and raw in _SPECIAL:
        return _SPECIAL[raw]
    if isinstance(raw, bool | int | float):
        if isinstance(raw, int) and not isinstance(raw, bool) and abs(raw) >= 2**64:
            raise ExerciseReportInvalid("an int out of range")
        return raw
    raise ExerciseReportInvalid("expected a number")


def _tensor(raw: Mapping[str, Any], counter: _Counter) -> TensorValue:
    dtype, shape, data = raw.get("tensor"), raw.get("shape"), raw.get("data")
    if dtype not in _DTYPES or not isinstance(shape, list) or not isinstance(data, list):
        raise ExerciseReportInvalid("a malformed tensor")
    if len(shape) > 8 or not all(type(n) is int and 0 <= n <= _MAX_NUMBERS for n in shape):
        raise ExerciseReportInvalid("a malformed shape")
    if math.prod(shape) != len(data):
        raise ExerciseReportInvalid("a tensor's data does not fill its shape")
    return TensorValue(str(dtype), tuple(shape), tuple(_number(v, counter) for v in data))


def _value(raw: object, counter: _Counter, depth: int = 0) -> Value:
    if depth > _MAX_DEPTH:
        raise ExerciseReportInvalid("nested too deep")
    if raw is None or isinstance(raw, bool):
        return raw
    if isinstance(raw, int | float):
        return _number(raw, counter)
    if isinstance(raw, str):
        return _text(raw)
    if not isinstance(raw, dict) or len(raw) not in (1, 3):
        raise ExerciseReportInvalid("an unknown value")
    if "tensor" in raw:
        return _tensor(raw, counter)
    ((key, inner),) = raw.items()
    if key == "float" and isinstance(inner, str) and inner in _SPECIAL:
        return _SPECIAL[inner]
    if key in ("list", "tuple") and isinstance(inner, list) and len(inner) <= _MAX_ITEMS:
        return SeqValue(key, tuple(_value(v, counter, depth + 1) for v in inner))
    if key == "dict" and isinstance(inner, dict) and len(inner) <= _MAX_ITEMS:
        return DictValue(
            tuple((_text(k, 200), _value(v, counter, depth + 1)) for k, v in inner.items())
        )
    if key == "unsupported":
        return Unsupported(_text(inner, 200))
    raise ExerciseReportInvalid("an unknown value")


def _graph(raw: object) -> tuple[str, ...] | None:
    """A graph report: node type names, exactly (a name is compared, never cut)."""
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) > MAX_GRAPH_NAMES:
        raise ExerciseReportInvalid("a graph is not a short list of names")
    if not all(isinstance(n, str) and _NODE_NAME.fullmatch(n) for n in raw):
        raise ExerciseReportInvalid("a graph holds something other than a node type name")
    if len(set(raw)) != len(raw):
        raise ExerciseReportInvalid("a graph names a node type twice")
    return tuple(sorted(raw))


def _calls(raw: object) -> int | None:
    if raw is None:
        return None
    if type(raw) is not int or not 0 <= raw <= _MAX_CALLS:
        raise ExerciseReportInvalid("calls is not a count")
    return raw


def _check_run(raw: object, counter: _Counter) -> CheckRun:
    if not isinstance(raw, dict):
        raise ExerciseReportInvalid("a check's result is not an object")
    ms = raw.get("ms", 0.0)
    ms = float(ms) if isinstance(ms, int | float) and not isinstance(ms, bool) else 0.0
    if "raised" in raw:
        return CheckRun(
            raised=_text(raw["raised"], 100), message=_text(raw.get("message", ""), 300), ms=ms
        )
    if raw.get("too_large") is True:
        return CheckRun(too_large=True, ms=ms)
    grads = raw.get("grads")
    if grads is not None and not isinstance(grads, list):
        raise ExerciseReportInvalid("grads is not a list")
    return CheckRun(
        result=_value(raw.get("result"), counter),
        args=_value(raw.get("args"), counter),
        grads=None if grads is None else tuple(_value(g, counter) for g in grads),
        ms=ms,
        has_result="result" in raw,
        expected=_value(raw.get("expected"), counter),
        graph=_graph(raw.get("graph")),
        graph_too_large=raw.get("graph_too_large") is True,
        calls=_calls(raw.get("calls")),
    )


def _names(raw: object, most: int = 20, limit: int = 200) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > most:
        raise ExerciseReportInvalid("expected a short list of names")
    return tuple(_text(n, limit) for n in raw)


def parse_exercise_report(raw: object) -> ExerciseReport:
    """The jail's ``exercise`` report, checked whole (raises :class:`ExerciseReportInvalid`)."""
    if not isinstance(raw, dict):
        raise ExerciseReportInvalid("the report is not an object")
    results = raw.get("results", [])
    if not isinstance(results, list) or len(results) > _MAX_CHECKS:
        raise ExerciseReportInvalid("results is not a short list")
    counter = _Counter()
    setup = raw.get("setup_error")
    return ExerciseReport(
        results=tuple(_check_run(r, counter) for r in results),
        forbidden=_names(raw.get("forbidden")),
        missing=_names(raw.get("missing")),
        load_error=raw.get("load_error") is True,
        no_entry=raw.get("no_entry") is True,
        setup_error=None if setup is None else _text(setup, 300),
        warnings=_names(raw.get("warnings"), _MAX_WARNINGS, 300),
    )


def report_to_wire(report: ExerciseReport | None) -> object:
    """The report as the manager sends it to the bot (read back by :func:`from_wire`)."""
    if report is None:
        return None
    return {
        "results": [_run_to_wire(r) for r in report.results],
        "forbidden": list(report.forbidden),
        "missing": list(report.missing),
        "load_error": report.load_error,
        "no_entry": report.no_entry,
        "setup_error": report.setup_error,
        "warnings": list(report.warnings),
    }


def _run_to_wire(run: CheckRun) -> dict[str, object]:
    if run.raised is not None:
        return {"raised": run.raised, "message": run.message, "ms": run.ms}
    if run.too_large:
        return {"too_large": True, "ms": run.ms}
    out: dict[str, object] = {"ms": run.ms, "args": _to_wire(run.args)}
    if run.expected is not None:
        out["expected"] = _to_wire(run.expected)
    if run.has_result:
        out["result"] = _to_wire(run.result)
    if run.grads is not None:
        out["grads"] = [_to_wire(g) for g in run.grads]
    if run.graph is not None:
        out["graph"] = list(run.graph)
    if run.calls is not None:
        out["calls"] = run.calls
    if run.graph_too_large:
        out["graph_too_large"] = True
    return out


def _special(value: float) -> object:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _to_wire(value: Value) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": _special(value)}
    if isinstance(value, TensorValue):
        data = [_special(v) if isinstance(v, float) else v for v in value.data]
        return {"tensor": value.dtype, "shape": list(value.shape), "data": data}
    if isinstance(value, SeqValue):
        return {value.kind: [_to_wire(v) for v in value.items]}
    if isinstance(value, DictValue):
        return {"dict": {k: _to_wire(v) for k, v in value.items}}
    if isinstance(value, Unsupported):
        return {"unsupported": value.what}
    return value
