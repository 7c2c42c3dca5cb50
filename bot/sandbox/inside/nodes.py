"""What a result was built by, inside the jail: the node types of its autograd graph, and how
often a function handed to the member ran during backward.

Names say what a solution typed; the graph says what it built. ``F.silu(x)``, its alias, its C
binding and ``torch.ops.aten.silu`` all leave a ``SiluBackward0``; ``x * torch.sigmoid(x)``
leaves ``MulBackward0`` and ``SigmoidBackward0``; a hand-written ``MySiLU`` Function leaves one
``MySiLUBackward`` whatever its forward and backward compute inside. So the names are read from
the result's ``grad_fn`` and ``next_functions``, through descriptors taken before member code
ran (a member's Function class may shadow ``next_functions``; torch's C node types cannot be
changed), bounded, and sent back as plain strings; the host judges them.

Non-reentrant checkpointing leaves no node of its own, but it runs the checkpointed function
again during backward: :func:`counter` wraps a function the check hands to the member and
counts the calls made while autograd's engine runs a backward pass.
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["GraphReader", "counter"]

#: At most this many nodes are visited, and this many distinct names sent back.
MAX_NODES = 2_000
MAX_NAMES = 64
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made in Python (a member's Function's node)
# Read while member code may have patched builtins (``builtins.type = ...``): our own references.
_id, _type, _str, _vars, _sorted, _len, _tuple, _list, _isinstance = (
    id,
    type,
    str,
    vars,
    sorted,
    len,
    tuple,
    list,
    isinstance,
)

_COUNTER = """
def counted(*args, **kwargs):
    if "@in_backward"() != -1:
        "@tally"[0] += 1
    return "@function"(*args, **kwargs)
"""


class GraphReader:
    """Reads graphs with torch's own descriptors, taken when the jail warmed up."""

    def __init__(self, torch: Any) -> None:
        base = torch._C.TensorBase
        self._tensor = torch.Tensor
        self._grad_fn = _vars(base)["grad_fn"].__get__
        self._custom_next = _vars(torch._C._FunctionBase)["next_functions"].__get__

    def _next(self, node: Any) -> tuple[Any, ...]:
        kind = _type(node)
        if kind.__flags__ & _HEAP_TYPE:
            edges = self._custom_next(node)
        else:
            edges = _vars(kind)["next_functions"].__get__(node)
        return _tuple(edge[0] for edge in edges if _type(edge) is _tuple and edge)

    def names(self, result: Any) -> list[str] | bool | None:
        """The distinct node type names of the graph behind ``result`` (a tensor, or a list or
        tuple of them), sorted; None when no tensor in it has a graph, and False when the graph
        is too large to read whole (a node left unread could be the one that matters)."""
        roots = _list(result) if _type(result) in (_list, _tuple) else [result]
        stack = [self._grad_fn(t) for t in roots if _isinstance(t, self._tensor)]
        stack = [node for node in stack if node is not None]
        if not stack:
            return None
        seen: set[int] = set()
        names: set[str] = set()
        while stack:
            node = stack.pop()
            if node is None or _id(node) in seen:
                continue
            if _len(seen) >= MAX_NODES:
                return False
            seen.add(_id(node))
            names.add(_str(_type(node).__name__))
            stack.extend(self._next(node))
        return False if _len(names) > MAX_NAMES else _sorted(names)


def counter(
    in_backward: Callable[[], int], hide: Callable[[Any], None]
) -> Callable[[Callable[..., Any], list[int]], Any]:
    """``make(function, tally)``: ``function``, counting into ``tally[0]`` the calls made
    during a backward pass. The wrapper a member receives has no closure and globals of its
    own; what it holds sits among its code's constants, which ``hide`` keeps from being read
    (so the tally cannot be raised by hand, nor the harness reached through it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "'str' object is not callable": placeholders
        module = compile(_COUNTER, "<counted>", "exec", dont_inherit=True)
    (template,) = (c for c in module.co_consts if _type(c) is types.CodeType)

    def make(function: Callable[..., Any], tally: list[int]) -> Any:
        marks = {"@in_backward": in_backward, "@tally": tally, "@function": function}
        consts = _tuple(marks.get(c, c) if _type(c) is _str else c for c in template.co_consts)
        wrapper = types.FunctionType(
            template.replace(co_consts=consts), {"__builtins__": {}}, "counted"
        )
        hide(wrapper)
        return wrapper

    return make
