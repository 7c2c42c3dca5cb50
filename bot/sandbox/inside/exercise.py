"""An exercise's checks, inside the jail: build each check's arguments, call the member's
function on them, and send back what it computed, serialised.

Nothing here judges. The host compares these values with the reference solution's, computed
in a jail of its own on the same inputs (``bot.core.exercises``), where member code cannot
reach: printing "all checks passed", exiting early, patching ``torch.allclose`` or returning an
object whose ``__eq__`` always says yes changes no verdict. What comes back is plain data
(tensors as dtype, shape and numbers; exact built-in types only), bounded in size, and checked
again at the host's boundary.

``forbid`` (a name a solution must not use, e.g. ``torch.autograd.grad``) is held by a trap put
wherever that object is bound, before the member's code runs: a call made while any frame of
code that did not exist when the jail warmed up is on the stack (the member's code, or
anything it compiled) is refused and recorded, however the name was reached (``getattr``,
``importlib``, ``eval``, a built string). Calls from torch itself and from this harness pass.
A member who digs the original object out of the interpreter (``gc``, ``ctypes``) can get
past the trap; the values are still compared, so the trap decides only whether a correct
answer was reached by the way the exercise asks.

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
import threading
import time
import types
from collections.abc import Callable
from typing import Any

__all__ = ["ForbiddenName", "prepare", "run"]

#: At most this many numbers come back from one run (all checks together).
MAX_NUMBERS = 100_000
_MAX_DEPTH = 6
_MAX_ITEMS = 1_000
_MAX_TEXT = 1_000
_MESSAGE = 300

_type = type
_isinstance = isinstance
_trusted_ids: set[int] = set()
_trusted_codes: list[types.CodeType] = []  # held, so that no id in the set is ever reused
_pristine: dict[str, Any] = {}


class ForbiddenName(BaseException):
    """A forbidden name was called; a BaseException, so ``except Exception`` keeps it going."""

    __module__ = "builtins"  # a member reads "ForbiddenName: ...", not the harness's path


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
    stack.extend(_code_of(f) for f in (run, _trap_for, _member_on_stack))
    while stack:
        code = stack.pop()
        if id(code) in _trusted_ids:
            continue
        _trusted_ids.add(id(code))
        _trusted_codes.append(code)
        stack.extend(c for c in code.co_consts if _type(c) is types.CodeType)


def _code_of(function: Callable[..., Any]) -> types.CodeType:
    code = getattr(function, "__code__", None)
    assert _type(code) is types.CodeType
    return code


def _member_on_stack(frame: types.FrameType | None) -> bool:
    while frame is not None:
        if id(frame.f_code) not in _trusted_ids:
            return True
        frame = frame.f_back
    return False


def _trap_for(name: str, original: Any, used: list[str]) -> Callable[..., Any]:
    def trap(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1)
        if threading.current_thread() is threading.main_thread() and not _member_on_stack(caller):
            return original(*args, **kwargs)
        used.append(name)
        raise ForbiddenName(f"{name} is not allowed in this exercise")

    return trap


def _resolve(name: str) -> tuple[Any, str, Any]:
    """``torch.autograd.grad`` -> (its owner, ``"grad"``, the object); ``torch.Tensor.backward``
    too (the owner is then the class)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:-1]:
            owner = getattr(owner, part)
        return owner, parts[-1], getattr(owner, parts[-1])
    raise LookupError(name)


def _install_traps(names: list[str], used: list[str]) -> list[str]:
    """Put a trap wherever each forbidden object is bound; the names that do not exist."""
    missing: list[str] = []
    for name in names:
        try:
            owner, attr, original = _resolve(name)
        except (LookupError, AttributeError):
            missing.append(name)
            continue
        trap = _trap_for(name, original, used)
        for module in list(sys.modules.values()):
            namespace: Any = getattr(module, "__dict__", None)
            if not _isinstance(namespace, dict):
                continue
            for key, value in list(namespace.items()):
                if value is original:
                    namespace[key] = trap
        setattr(owner, attr, trap)
    return missing


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


def _build_args(check: dict[str, Any], seed: int, index: int) -> tuple[Any, ...]:
    torch = _pristine["torch"]
    names = {"torch": torch, "g": _generator(seed, index), "__builtins__": __builtins__}
    value = eval(compile(str(check["args"]), "<check>", "eval"), names)  # noqa: S307 - the pack's
    return value if _type(value) is tuple else (value,)


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
    seed: int,
    index: int,
    budget: _Budget,
    show: Callable[[BaseException, str], None],
    label: str,
) -> dict[str, Any]:
    compared = list(check.get("compare") or ["result"])
    started = time.perf_counter()
    try:
        result = entry(*args)
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
    used: list[str] = []
    report: dict[str, Any] = {"results": [], "forbidden": used}
    try:
        arguments = [_build_args(check, seed, index) for index, check in enumerate(checks)]
    except BaseException as exc:  # the pack's own expression failed: not the member's fault
        report["setup_error"] = f"{_type(exc).__name__}: {exc}"[:_MESSAGE]
        return 0, False, report
    report["missing"] = _install_traps([str(n) for n in spec.get("forbid") or []], used)
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

    for index, (check, args) in enumerate(zip(checks, arguments, strict=True)):
        label = str(check.get("name") or f"check {index + 1}")
        report["results"].append(
            _one_check(entry, check, args, seed, index, budget, show_once, label)
        )
    report["forbidden"] = list(dict.fromkeys(used))
    return 0, False, report
