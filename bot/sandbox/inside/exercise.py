"""An exercise's checks, inside the jail: build each check's arguments, call the member's
function on them, and send back what it computed, serialised.

Nothing here judges. The host compares these values with the reference solution's, computed
in a jail of its own on the same inputs (``bot.core.exercises``), where member code cannot
reach: printing "all checks passed", exiting early, patching ``torch.allclose`` or returning an
object whose ``__eq__`` always says yes changes no verdict. What comes back is plain data
(tensors as dtype, shape and numbers; exact built-in types only), bounded in size, and checked
again at the host's boundary.

``forbid`` (a name a solution must not use, e.g. ``torch.autograd.grad``) is held by traps
(``traps.py``) that give an early, friendly refusal; the values and, where the pack asks, the
node types of the result's autograd graph (``nodes.py``) decide. A check may hand the member a
``counted(...)`` function and compare how often it ran during backward: the trace that
non-reentrant checkpointing leaves, where the graph shows nothing. Warnings the member's code
emits come back as a list, not mixed into the traceback. The report line is written by
:func:`sealed` (not the ``json`` module, which member code may replace) and carries the run's
nonce, so a line the member writes on the status pipe itself is not taken for it.

Like ``worker.py`` this file is handed to the jailed interpreter; it may use the standard
library, and torch when the jail preloaded it.
"""

from __future__ import annotations

import gc
import importlib
import math
import os
import shutil
import sys
import tempfile
import time
import types
import warnings
from collections.abc import Callable
from typing import Any

from bot.sandbox.inside import nodes, traps
from bot.sandbox.inside.traps import ForbiddenName

__all__ = ["ForbiddenName", "prepare", "run", "sealed"]

#: At most this many numbers come back from one run (all checks together).
MAX_NUMBERS = 100_000
_MAX_DEPTH = 6
_MAX_ITEMS = 1_000
_MAX_TEXT = 1_000
_MESSAGE = 300
_WARNINGS = 10

_type = type
_isinstance = isinstance
_list, _dict = list, dict  # what decides the report's forbidden names, kept from patching
_int_text, _float_text, _isfinite, _join = int.__repr__, float.__repr__, math.isfinite, ", ".join
try:
    from _json import encode_basestring_ascii as _quote
except ImportError:  # pragma: no cover - CPython always has _json
    from json.encoder import py_encode_basestring_ascii as _quote
_trusted_ids: set[int] = set()
_trusted_codes: list[types.CodeType] = []  # held, so that no id in the set is ever reused
_pristine: dict[str, Any] = {}


class _TooLarge(Exception):
    pass


def prepare() -> None:
    """Before any member code: import what the harness uses, keep pristine references to the
    torch calls it makes, and remember every code object that exists now.

    Run in the zygote (and the single-use worker) right after the preload, so a fork server's
    children inherit it for free (about 60 ms once, over ~27,000 code objects, and about 1 s
    of torch's lazy first calls).
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return
    for name in ("torch.autograd", "torch.autograd.gradcheck", "torch.func", "torch.nn"):
        importlib.import_module(name)
    importlib.import_module("torch.utils.checkpoint")
    # First calls that initialise lazily (~270 ms for a backward with explicit weights, ~750 ms
    # for torch.func): tiny single-threaded ops, paid once here rather than in every run.
    # They must leave nothing a snippet could see: torch.func's first call sets
    # TORCHINDUCTOR_CACHE_DIR and makes /tmp/torchinductor_<user>, and a run's environment
    # and /tmp start empty.
    before, temp = dict(os.environ), tempfile.gettempdir()
    existing = set(os.listdir(temp))
    leaf = torch.ones(2, requires_grad=True)
    torch.autograd.backward(leaf * 2, torch.ones(2))
    torch.func.vmap(torch.func.grad(lambda v: (v * v).sum()))(torch.ones(2, 2))
    os.environ.clear()
    os.environ.update(before)
    for name in set(os.listdir(temp)) - existing:
        shutil.rmtree(os.path.join(temp, name), ignore_errors=True)
    tensor = torch.Tensor
    _pristine.update(
        torch=torch,
        Tensor=tensor,
        Parameter=torch.nn.Parameter,
        Generator=torch.Generator,
        randn=torch.randn,
        backward=torch.autograd.backward,
        detach=tensor.detach,
        reshape=tensor.reshape,
        tolist=tensor.tolist,
        numel=tensor.numel,
        strided=torch.strided,
    )
    stack = [f.__code__ for f in gc.get_objects() if _type(f) is types.FunctionType]
    stack.append(_code_of(run))
    while stack:
        code = stack.pop()
        if id(code) in _trusted_ids:
            continue
        _trusted_ids.add(id(code))
        _trusted_codes.append(code)
        stack.extend(c for c in code.co_consts if _type(c) is types.CodeType)
    # Last: the guard's audit hook sees every event from here on (inert until a run arms it).
    guard = traps.Guard(_trusted_ids)
    _pristine.update(
        graph=nodes.GraphReader(torch),
        counter=nodes.counter(torch._C._current_graph_task_id, guard.hide),
        guard=guard,
    )


def _code_of(function: Callable[..., Any]) -> types.CodeType:
    code = getattr(function, "__code__", None)
    assert _type(code) is types.CodeType
    return code


def _generator(seed: int, *salt: int) -> Any:
    mixed = seed
    for value in salt:
        mixed = (mixed * 1_000_003 + value + 1) % (2**62)
    return _pristine["Generator"]().manual_seed(mixed)


class _Budget:
    def __init__(self, numbers: int) -> None:
        self.numbers = numbers

    def take(self, count: int) -> None:
        if count > self.numbers:
            raise _TooLarge
        self.numbers -= count


def _encode(value: Any, budget: _Budget, depth: int = 0) -> Any:
    """Plain data for ``value``, or ``{"unsupported": what}``: exact built-in types only, so
    no subclass, proxy or object with its own ``__eq__`` reaches the host as a value."""
    kind = _type(value)
    if value is None or kind is bool or (kind is str and len(value) <= _MAX_TEXT):
        return value
    if kind is int:
        return value if -(2**63) <= value < 2**63 else {"unsupported": "an int beyond 64 bits"}
    if kind is float:
        budget.take(1)
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is _pristine["Tensor"] or kind is _pristine["Parameter"]:
        return _encode_tensor(value, budget)
    if kind in (list, tuple) and depth < _MAX_DEPTH:
        if len(value) > _MAX_ITEMS:
            return {"unsupported": f"a {kind.__name__} of {len(value):,} items"}
        return {kind.__name__: [_encode(v, budget, depth + 1) for v in value]}
    if kind is dict and depth < _MAX_DEPTH and all(_type(k) is str for k in value):
        if len(value) > _MAX_ITEMS:
            return {"unsupported": f"a dict of {len(value):,} items"}
        return {"dict": {k: _encode(v, budget, depth + 1) for k, v in value.items()}}
    if _isinstance(value, _pristine["Tensor"]):
        return {"unsupported": f"a Tensor subclass ({kind.__name__})"}
    if kind is str:
        return {"unsupported": f"a string of {len(value):,} characters"}
    return {"unsupported": f"a {kind.__module__}.{kind.__qualname__}"[:200]}


def _encode_tensor(tensor: Any, budget: _Budget) -> Any:
    if tensor.layout is not _pristine["strided"] or tensor.device.type != "cpu":
        return {"unsupported": f"a {tensor.layout} tensor on {tensor.device}"}
    dtype = str(tensor.dtype).removeprefix("torch.")
    if tensor.is_complex() or dtype.startswith(("qu", "qi", "float8")):
        return {"unsupported": f"a {dtype} tensor"}
    numel = int(_pristine["numel"](tensor))
    budget.take(numel)
    flat = _pristine["tolist"](_pristine["reshape"](_pristine["detach"](tensor), (-1,)))
    data = [v if _type(v) is not float or math.isfinite(v) else repr(v) for v in flat]
    return {"tensor": dtype, "shape": list(tensor.shape), "data": data}


def _tensors_in(args: tuple[Any, ...]) -> list[Any]:
    """The tensor arguments, and those in a list or tuple argument (a list of parameters)."""
    found: list[Any] = []
    for arg in args:
        items = arg if _type(arg) in (list, tuple) else (arg,)
        found.extend(a for a in items if _isinstance(a, _pristine["Tensor"]))
    return found


def _error(exc: BaseException) -> dict[str, str]:
    return {"raised": _type(exc).__name__, "message": str(exc)[:_MESSAGE]}


def _build_args(check: dict[str, Any], seed: int, index: int) -> tuple[tuple[Any, ...], list[int]]:
    """A check's arguments, and the tally of its ``counted(...)`` functions' backward calls."""
    torch = _pristine["torch"]
    tally = [0]
    make = _pristine["counter"]
    names = {
        "torch": torch,
        "g": _generator(seed, index),
        "counted": lambda function: make(function, tally),
        "__builtins__": __builtins__,
    }
    value = eval(compile(str(check["args"]), "<check>", "eval"), names)  # noqa: S307 - the pack's
    return (value if _type(value) is tuple else (value,)), tally


def _stated(expression: str) -> Any:
    names = {"torch": _pristine["torch"], "__builtins__": __builtins__}
    try:
        return eval(compile(expression, "<expect>", "eval"), names)  # noqa: S307 - the pack's
    except BaseException as exc:
        return {"unsupported": f"`expect` failed: {_type(exc).__name__}: {exc}"[:_MESSAGE]}


def _one_check(
    entry: Callable[..., Any],
    check: dict[str, Any],
    args: tuple[Any, ...],
    tally: list[int],
    seed: int,
    index: int,
    budget: _Budget,
    show: Callable[[BaseException, str], None],
    label: str,
    graph: bool,
) -> dict[str, Any]:
    compared = list(check.get("compare") or ["result"])
    started = time.perf_counter()
    names: list[str] | bool | None = None
    try:
        result = entry(*args)
        if graph:  # read before backward, from the result as the member returned it
            names = _pristine["graph"].names(result)
        if check.get("backward"):
            if not _isinstance(result, _pristine["Tensor"]) or result.grad_fn is None:
                return {"raised": "NoGraph", "message": "the result has no autograd graph"}
            weights = _pristine["randn"](
                tuple(result.shape), generator=_generator(seed, index, 1), dtype=result.dtype
            )
            _pristine["backward"](result, weights)
    except BaseException as exc:
        show(exc, label)
        return {**_error(exc), "ms": (time.perf_counter() - started) * 1000}
    took = (time.perf_counter() - started) * 1000
    out: dict[str, Any] = {"ms": took}
    if graph and names is False:
        out["graph_too_large"] = True
    elif graph:
        out["graph"] = names
    if "calls" in compared:
        out["calls"] = tally[0]
    try:
        if "expect" in check:  # `questions check` only: the example's stated result
            stated = _stated(str(check["expect"]))
            failed = _type(stated) is dict and "unsupported" in stated
            out["expected"] = stated if failed else _encode(stated, budget)
        if "result" in compared:
            out["result"] = _encode(result, budget)
        if "args" in compared:
            out["args"] = _encode(list(args), budget)
        if "grads" in compared:
            out["grads"] = [_encode(t.grad, budget) for t in _tensors_in(args)]
    except _TooLarge:
        return {"too_large": True, "ms": took}
    return out


def run(
    spec: dict[str, Any],
    code: bytes,
    module: types.ModuleType,
    run_code: Callable[[bytes, types.ModuleType], tuple[int, bool]],
    show: Callable[[BaseException, str], None],
) -> tuple[int, bool, dict[str, Any]]:
    """Run the solution ``code`` as ``__main__``, then every check; (exit code, whether it ran
    out of memory, the report's ``exercise`` part)."""
    checks = list(spec.get("checks") or [])
    seed = int(spec.get("seed", 0))
    guard = _pristine["guard"]
    report: dict[str, Any] = {"results": [], "forbidden": [], "warnings": []}
    try:
        arguments = [_build_args(check, seed, index) for index, check in enumerate(checks)]
    except BaseException as exc:  # the pack's own expression failed: not the member's fault
        report["setup_error"] = f"{_type(exc).__name__}: {exc}"[:_MESSAGE]
        return 0, False, report
    report["missing"] = guard.install([str(n) for n in spec.get("forbid") or []])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        outcome = _run_checks(spec, code, module, run_code, show, checks, arguments, report)
    seen = _dict.fromkeys(f"{w.category.__name__}: {w.message}"[:_MESSAGE] for w in caught)
    report["warnings"] = _list(seen)[:_WARNINGS]
    report["forbidden"] = _list(_dict.fromkeys(guard.used))
    return outcome


def sealed(report: dict[str, Any]) -> str:
    """The report line as JSON, written by this module's own hand: member code may have
    replaced ``json.dumps`` (or the encoder's class) and would then see, and could rewrite,
    the line that carries the run's nonce."""
    out: list[str] = []
    _emit(report, out, 0)
    return "".join(out)


def _emit(value: Any, out: list[str], depth: int) -> None:
    kind = _type(value)
    if depth > 40:
        raise ValueError("nested too deep")
    if value is None or kind is bool:
        out.append("null" if value is None else "true" if value else "false")
    elif kind is int:
        out.append(_int_text(value))
    elif kind is float:
        special = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
        out.append(_float_text(value) if _isfinite(value) else special[_float_text(value)])
    elif kind is str:
        out.append(_quote(value))
    elif kind is list or kind is tuple:
        parts: list[str] = []
        for item in value:
            inner: list[str] = []
            _emit(item, inner, depth + 1)
            parts.append("".join(inner))
        out.append("[" + _join(parts) + "]")
    elif kind is dict:
        pairs: list[str] = []
        for key, item in value.items():
            inner = []
            _emit(item, inner, depth + 1)
            pairs.append(_quote(key) + ": " + "".join(inner))
        out.append("{" + _join(pairs) + "}")
    else:
        raise TypeError(f"not plain data: {kind!r}")


def _run_checks(
    spec: dict[str, Any],
    code: bytes,
    module: types.ModuleType,
    run_code: Callable[[bytes, types.ModuleType], tuple[int, bool]],
    show: Callable[[BaseException, str], None],
    checks: list[Any],
    arguments: list[tuple[tuple[Any, ...], list[int]]],
    report: dict[str, Any],
) -> tuple[int, bool, dict[str, Any]]:
    seed = int(spec.get("seed", 0))
    exit_code, memory = run_code(code, module)
    if exit_code != 0:
        report["load_error"] = True
        return exit_code, memory, report
    entry = module.__dict__.get(str(spec["entry"]))
    if not callable(entry):
        report["no_entry"] = True
        return 0, False, report
    budget = _Budget(MAX_NUMBERS)
    shown = [False]

    def show_once(exc: BaseException, label: str) -> None:
        if not shown[0]:
            shown[0] = True
            show(exc, label)

    graph = spec.get("graph") is True
    for index, (check, (args, tally)) in enumerate(zip(checks, arguments, strict=True)):
        label = str(check.get("name") or f"check {index + 1}")
        report["results"].append(
            _one_check(entry, check, args, tally, seed, index, budget, show_once, label, graph)
        )
    return 0, False, report
