"""``forbid`` inside the jail: traps member code cannot open, and frames it cannot read.

A forbidden object (``torch.autograd.grad``, ``torch.nn.functional.silu``) is replaced by a
trap wherever it is bound (every module's namespace, and its owner), and so is the C function
beneath a Python wrapper (``torch._C._nn.silu`` under ``F.silu``): an alias, a
``from ... import`` or the C binding all reach the trap. A call is the member's own, and is
refused, when the trap's direct caller is member code (code that did not exist when the jail
warmed up), or when member code is anywhere on the stack and the direct caller does not name
the object itself; torch's internals that call it by name pass, so a solution may run
``torch.autograd.gradcheck`` on itself although gradcheck calls ``torch.autograd.grad``.

Why the original cannot be dug out without ``gc``/``ctypes``: a trap is a function with no
closure, no defaults and its own empty globals; what it holds (the original, the decision)
sits among its code object's constants, and ``__code__``/``__defaults__`` of a trap are refused
by an audit hook that member code cannot remove. The same hook refuses frames while member code
runs (``sys._getframe``, ``tb_frame``, ``gi_frame``, tracing and profiling), unless an import
is nearer on the stack than member code (torch's lazy imports read frames): from a frame,
``f_back.f_globals`` would reach the harness's own state. A refused frame raises ``ValueError``
(what ``sys._getframe`` raises for a frame that does not exist), so the standard library's
optional uses of frames (``collections.namedtuple``) go on without one.

Known ways round it, for the record (the values and the graph still decide): a fresh copy of
the function (``importlib.reload`` of its module, or its source through ``exec``), a C object
that cannot be rebound (``Variable._execution_engine.run_backward`` beneath
``torch.autograd.grad``), an op with no Python name (``torch.ops.aten.silu``), a torch helper
that calls the name itself (``torch.autograd.functional.vjp`` calls ``torch.autograd.grad``:
forbid it too), C callbacks that hand out frames (signal handlers, torch's eval-frame hook),
and ``gc``/``ctypes``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
import types
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["ForbiddenName", "Guard"]

_FRAME_EVENTS = frozenset(
    {"sys._getframe", "sys._current_frames", "sys.settrace", "sys.setprofile"}
)
_FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_HIDDEN_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
_IMPORTING = "<frozen importlib._bootstrap>"
_LOADING = "<frozen importlib._bootstrap_external>"
# What runs while member code may have patched builtins or os (``builtins.id = ...``) holds
# its own references, taken at import.
_id, _type, _str, _realpath, _CodeType = id, type, str, os.path.realpath, types.CodeType
_TEMPLATE = """
def trap(*args, **kwargs):
    if "@allow"("@attr"):
        return "@original"(*args, **kwargs)
    raise "@refuse"("@name")
"""


class ForbiddenName(BaseException):
    """A forbidden name was called; a BaseException, so ``except Exception`` keeps it going."""

    __module__ = "builtins"  # a member reads "ForbiddenName: ...", not the harness's path


def _trap_code() -> types.CodeType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "'str' object is not callable": placeholders
        module = compile(_TEMPLATE, "<forbid>", "exec", dont_inherit=True)
    (code,) = (c for c in module.co_consts if isinstance(c, types.CodeType))
    return code


def _beneath(function: Any) -> list[tuple[Any, str, Any]]:
    """The C functions a Python wrapper calls by a dotted name spelled like itself:
    ``F.silu`` calls ``torch._C._nn.silu`` (and ``silu_``); (owner, attribute, object)."""
    code = getattr(function, "__code__", None)
    name = getattr(function, "__name__", "")
    namespace = getattr(function, "__globals__", None)
    if not isinstance(code, types.CodeType) or not name or not isinstance(namespace, dict):
        return []
    import dis

    found: list[tuple[Any, str, Any]] = []
    chain: list[str] = []

    def close() -> None:
        if len(chain) > 1 and chain[-1].rstrip("_") == name.rstrip("_"):
            owner: Any = namespace.get(chain[0])
            try:
                for part in chain[1:-1]:
                    owner = getattr(owner, part)
                target = getattr(owner, chain[-1])
            except AttributeError:
                return
            if isinstance(target, types.BuiltinFunctionType):
                found.append((owner, chain[-1], target))

    for ins in dis.get_instructions(code):
        if ins.opname == "LOAD_GLOBAL":
            close()
            chain[:] = [str(ins.argval)]
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and chain:
            chain.append(str(ins.argval))
        else:
            close()
            chain.clear()
    return found


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


def _on_stack(trusted: set[int]) -> Callable[[types.FrameType | None], bool]:
    def member_on_stack(frame: types.FrameType | None) -> bool:
        while frame is not None:
            if _id(frame.f_code) not in trusted:
                return True
            frame = frame.f_back
        return False

    return member_on_stack


def _allow(trusted: set[int], busy: set[int]) -> Callable[[str], bool]:
    main, current, ident, getframe = (
        threading.main_thread(),
        threading.current_thread,
        threading.get_ident,
        sys._getframe,
    )
    member_on_stack = _on_stack(trusted)

    def allow(attr: str) -> bool:
        """The trap's question: is this call torch's, or the member's own?"""
        busy.add(ident())
        try:
            if current() is not main:
                return False
            caller = getframe(2)
            code = caller.f_code
            if _id(code) not in trusted:
                return False
            return attr in code.co_names or not member_on_stack(caller)
        finally:
            busy.discard(ident())

    return allow


def _asked_by_member(trusted: set[int]) -> Callable[[types.FrameType | None], bool]:
    """Whether a frame is being handed to member code: member code is on the stack, nearer
    than any import. Torch's lazy imports read frames (``torch.jit`` resolves names through
    them) while a member's call is what set the import off; the module being imported is
    torch's, so they pass. A member's own module is member code, nearer still."""

    def asked(frame: types.FrameType | None) -> bool:
        while frame is not None:
            code = frame.f_code
            if _id(code) not in trusted:
                return True
            if code.co_filename == _IMPORTING:
                return False
            frame = frame.f_back
        return False

    return asked


def _imported(trusted: set[int], keep: list[Any]) -> Callable[[Any, Any], None]:
    """Trust a module torch (or Python) imports lazily, after the jail warmed up: its code is
    read by the import system's own file loaders from the interpreter's installation, where
    member code cannot write. Its frames are then torch's, not the member's."""
    from importlib.machinery import SourceFileLoader, SourcelessFileLoader

    loaders = (SourceFileLoader, SourcelessFileLoader)
    roots = tuple(
        os.path.join(os.path.realpath(p), "")
        for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    )

    def trust(code: Any, frame: types.FrameType | None) -> None:
        runner = frame.f_back if frame is not None else None
        if runner is None or runner.f_code.co_filename != _LOADING:
            return
        loader: Any = runner.f_locals.get("self")
        if _type(loader) not in loaders or _id(runner.f_code) not in trusted:
            return
        if not _realpath(_str(loader.path)).startswith(roots):
            return
        stack = [code]
        while stack:
            one = stack.pop()
            if _type(one) is _CodeType and _id(one) not in trusted:
                trusted.add(_id(one))
                keep.append(one)
                stack.extend(one.co_consts)

    return trust


def _hook(
    trusted: set[int], busy: set[int], hidden: set[int], armed: list[bool]
) -> Callable[[str, tuple[Any, ...]], None]:
    ident, getframe = threading.get_ident, sys._getframe
    member_on_stack = _asked_by_member(trusted)
    trust = _imported(trusted, [])

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not armed[0] or (busy and ident() in busy):
            return
        if event == "exec":
            busy.add(ident())
            try:
                trust(args[0], getframe(1))
            finally:
                busy.discard(ident())
            return
        if event == "object.__getattr__":
            target, attr = args[0], args[1]
            if attr in _HIDDEN_ATTRS and _id(target) in hidden:
                raise AttributeError(f"a forbidden name's trap has no readable {attr}")
            if attr not in _FRAME_ATTRS:
                return
        elif event not in _FRAME_EVENTS:
            return
        busy.add(ident())
        try:
            if member_on_stack(getframe(1)):
                raise ValueError("frames are not available to code in an exercise")
        finally:
            busy.discard(ident())

    return hook


class Guard:
    """The traps of one run and the audit hook that keeps them shut.

    Built once, before any member code (``prepare``), with the ids of the code objects that
    existed then; the hook stays inert until :meth:`install` arms it for an exercise's run (a
    plain ``/run`` may read its own frames). It is reached only from the harness's own frames,
    which member code cannot read once armed.
    """

    def __init__(self, trusted: set[int]) -> None:
        self.used: list[str] = []
        self._trusted = trusted
        busy: set[int] = set()  # threads inside the guard's own code: the hook lets them be
        self._hidden: set[int] = set()
        self._armed = [False]
        self._allow = _allow(trusted, busy)
        self._template = _trap_code()
        self._keep: list[Any] = [self._template]  # held, so that no trusted id is reused
        trusted.add(id(self._template))
        sys.addaudithook(_hook(trusted, busy, self._hidden, self._armed))

    def _refuse(self, name: str) -> ForbiddenName:
        self.used.append(name)
        return ForbiddenName(f"{name} is not allowed in this exercise")

    def _make(self, name: str, attr: str, original: Any) -> Any:
        marks = {
            "@allow": self._allow,
            "@attr": attr,
            "@original": original,
            "@refuse": self._refuse,
            "@name": name,
        }
        consts = tuple(
            marks.get(c, c) if isinstance(c, str) else c for c in self._template.co_consts
        )
        code = self._template.replace(co_consts=consts)
        trap = types.FunctionType(code, {"__builtins__": {}}, attr)
        trap.__qualname__ = getattr(original, "__qualname__", attr)
        trap.__doc__ = getattr(original, "__doc__", None)
        self._trusted.add(id(code))
        self._hidden.add(id(trap))
        self._keep += [code, trap]
        return trap

    def hide(self, function: Any) -> None:
        """Keep a function's code and defaults from being read by member code (what the
        harness hands the member, holding among its constants what must stay out of reach)."""
        self._hidden.add(_id(function))
        self._keep.append(function)

    def install(self, names: list[str]) -> list[str]:
        """Arm the hook, and put a trap wherever each forbidden object (and the C function
        beneath a Python wrapper) is bound; the names that do not exist."""
        self._armed[0] = True
        missing: list[str] = []
        for name in names:
            try:
                owner, attr, original = _resolve(name)
            except (LookupError, AttributeError):
                missing.append(name)
                continue
            for where, below, function in _beneath(original):
                spelled = f"{getattr(where, '__name__', name.rpartition('.')[0])}.{below}"
                _rebind(where, below, function, self._make(spelled, below, function))
            _rebind(owner, attr, original, self._make(name, attr, original))
        return missing


def _rebind(owner: Any, attr: str, original: Any, trap: Any) -> None:
    for module in list(sys.modules.values()):
        namespace: Any = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for key, value in list(namespace.items()):
            if value is original:
                namespace[key] = trap
    with contextlib.suppress(AttributeError, TypeError):  # an immutable owner: the namespaces
        setattr(owner, attr, trap)  # above hold the trap
