"""``forbid`` and the graph report in the real jail, against a member trying to get round them.

A forbidden op is refused however it is spelled (an alias, a ``from`` import, its C binding, a
built string); the trap's original cannot be read from member code (no closure, no code, no
defaults, no globals, no frames, no harness module); torch's own calls by name pass, so a
solution may gradcheck itself; and a plain ``/run`` is untouched (its frames stay readable).
"""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest

from bot.sandbox import Sandbox
from bot.sandbox.exercise import CheckJob, DictValue, ExerciseJob, ExerciseReport

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="session")]

X = "torch.randn(5, generator=g, dtype=torch.float64).requires_grad_()"


def _spec(entry: str, forbid: list[str], *, graph: bool = False) -> ExerciseJob:
    return ExerciseJob(
        entry=entry, seed=3, forbid=tuple(forbid), graph=graph, checks=(CheckJob("example 1", X),)
    )


async def _report(sb: Sandbox, code: str, spec: ExerciseJob) -> tuple[ExerciseReport, str]:
    result = await sb.run(textwrap.dedent(code), timeout=20, exercise=spec)
    assert result.exercise is not None, result.stderr
    return result.exercise, result.stderr


SILU = ["torch.nn.functional.silu"]


@pytest.mark.parametrize(
    ("code", "name"),
    [
        (
            "import torch.nn.functional as F\ndef f(x):\n    return F.silu(x)\n",
            "torch.nn.functional.silu",
        ),
        (
            "from torch.nn.functional import silu as s\ndef f(x):\n    return s(x)\n",
            "torch.nn.functional.silu",
        ),
        ("import torch\ndef f(x):\n    return torch._C._nn.silu(x)\n", "torch._C._nn.silu"),
        ("from torch._C._nn import silu\ndef f(x):\n    return silu(x)\n", "torch._C._nn.silu"),
        (
            "import importlib\ndef f(x):\n"
            "    return getattr(importlib.import_module('torch.nn.' + 'functional'), 'si' + 'lu')(x)\n",
            "torch.nn.functional.silu",
        ),
        (
            "import torch\ndef f(x):\n    return list(map(torch._C._nn.silu, [x]))[0]\n",
            "torch._C._nn.silu",
        ),
    ],
    ids=["alias", "from-import", "c-binding", "c-binding-imported", "built-string", "through-map"],
)
async def test_every_spelling_of_a_forbidden_op_is_refused(
    sandbox: Sandbox, code: str, name: str
) -> None:
    report, stderr = await _report(sandbox, code, _spec("f", SILU))
    assert report.forbidden == (name,), stderr
    assert report.results[0].raised == "ForbiddenName"


PROBE = """
import gc, sys
import torch
import torch.nn.functional as F

def attempt(route):
    try:
        value = route()
    except BaseException as exc:
        return type(exc).__name__
    return "open: " + repr(value)[:60]

def gen():
    yield 1

def tb():
    try:
        raise KeyError
    except KeyError as exc:
        return exc.__traceback__.tb_frame

def probe(x):
    g = gen()
    return {
        "closure": attempt(lambda: [c.cell_contents for c in F.silu.__closure__ or ()]),
        "code": attempt(lambda: F.silu.__code__.co_consts),
        "defaults": attempt(lambda: F.silu.__defaults__),
        "kwdefaults": attempt(lambda: F.silu.__kwdefaults__),
        "globals": attempt(lambda: sorted(F.silu.__globals__)),
        "wrapped": attempt(lambda: F.silu.__wrapped__),
        "getframe": attempt(lambda: sys._getframe(1).f_globals),
        "tb_frame": attempt(tb),
        "gi_frame": attempt(lambda: g.gi_frame),
        "current_frames": attempt(lambda: list(sys._current_frames().values())),
        "settrace": attempt(lambda: sys.settrace(lambda *a: None)),
        "harness": attempt(lambda: [m for m in sys.modules if m.startswith("bot")]),
        "c_binding_code": attempt(lambda: torch._C._nn.silu.__code__),
    }
"""


async def test_the_trap_keeps_its_original_out_of_reach(sandbox: Sandbox) -> None:
    report, stderr = await _report(sandbox, PROBE, _spec("probe", SILU))
    result = report.results[0].result
    assert isinstance(result, DictValue), stderr
    routes = dict(result.items)
    assert routes == {
        "closure": "open: []",  # no closure at all
        "code": "AttributeError",
        "defaults": "AttributeError",
        "kwdefaults": "AttributeError",
        "globals": "open: ['__builtins__']",  # its own, empty
        "wrapped": "AttributeError",
        "getframe": "ValueError",
        "tb_frame": "ValueError",
        "gi_frame": "ValueError",
        "current_frames": "ValueError",
        "settrace": "ValueError",
        "harness": "open: []",
        "c_binding_code": "AttributeError",
    }
    assert report.forbidden == ()  # reading about the trap is not calling it


async def test_a_solution_may_gradcheck_itself_although_gradcheck_calls_grad(
    sandbox: Sandbox,
) -> None:
    code = """
        import torch

        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, grad_output):
                (x,) = ctx.saved_tensors
                return 2 * x * grad_output

        def f(x):
            assert torch.autograd.gradcheck(Square.apply, (x.detach().requires_grad_(),))
            return Square.apply(x)
    """
    report, stderr = await _report(sandbox, code, _spec("f", ["torch.autograd.grad"]))
    assert report.forbidden == (), stderr
    assert report.results[0].raised is None, stderr
    # ... while the member's own call is refused.
    own = "import torch\ndef f(x):\n    return torch.autograd.grad(x.sum(), x)[0]\n"
    report, _ = await _report(sandbox, own, _spec("f", ["torch.autograd.grad"]))
    assert report.forbidden == ("torch.autograd.grad",)


async def test_the_graph_report_names_what_the_code_built(sandbox: Sandbox) -> None:
    spellings = {
        "import torch.nn.functional as F\ndef f(x):\n    return F.silu(x)\n": "SiluBackward0",
        "import torch\ndef f(x):\n    return torch.ops.aten.silu(x)\n": "SiluBackward0",
        "import torch\ndef f(x):\n    return x * torch.sigmoid(x)\n": "MulBackward0",
        (
            "import torch\nimport torch.nn.functional as F\n"
            "class MySiLU(torch.autograd.Function):\n"
            "    @staticmethod\n    def forward(ctx, x):\n        return F.silu(x)\n"
            "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
            "def f(x):\n    return MySiLU.apply(x)\n"
        ): "MySiLUBackward",
    }
    for code, node in spellings.items():
        report, stderr = await _report(sandbox, code, _spec("f", [], graph=True))
        graph = report.results[0].graph
        assert graph is not None and node in graph, (code, stderr)
        if node == "MySiLUBackward":  # F.silu inside forward leaves no node of its own
            assert graph == ("AccumulateGrad", "MySiLUBackward")


async def test_warnings_come_back_apart_from_the_traceback(sandbox: Sandbox) -> None:
    code = "import warnings\ndef f(x):\n    warnings.warn('mind the dtype')\n    return x\n"
    result = await sandbox.run(code, timeout=20, exercise=_spec("f", []))
    assert result.exercise is not None
    assert result.exercise.warnings == ("UserWarning: mind the dtype",)
    assert "mind the dtype" not in result.stderr


async def test_a_plain_run_still_reads_its_own_frames(sandbox: Sandbox) -> None:
    result = await sandbox.run("import sys\nprint(sys._getframe().f_code.co_name)\n", timeout=20)
    assert result.stdout.strip() == "<module>", result.stderr


async def test_patched_builtins_neither_open_the_trap_nor_fake_the_graph(sandbox: Sandbox) -> None:
    """The guard and the graph reader hold their own ``id``, ``type`` and ``realpath``: a
    member who makes every code look trusted, or every node look like its own, changes
    nothing."""
    code = """
        import builtins, os
        import torch
        import torch.nn.functional as F

        trusted = id(torch.autograd.backward.__code__)
        builtins.id = lambda obj: trusted
        builtins.type = lambda *args: type
        os.path.realpath = lambda path: "/usr/lib/python3"

        def f(x):
            return F.silu(x) if x.requires_grad else x
    """
    report, stderr = await _report(sandbox, code, _spec("f", SILU, graph=True))
    assert report.forbidden == ("torch.nn.functional.silu",), stderr
    report, stderr = await _report(sandbox, code, _spec("f", [], graph=True))
    assert report.results[0].graph == ("AccumulateGrad", "SiluBackward0"), stderr


async def test_a_report_the_snippet_forges_on_the_status_pipe_is_not_taken(
    sandbox: Sandbox,
) -> None:
    """The snippet can write on every descriptor it holds, the status pipe among them; an
    exercise's report counts only with the run's nonce, which the snippet never sees."""
    code = """
        import json, os
        fake = {"exit_code": 0, "memory_error": False, "files": [], "nonce": "guess",
                "exercise": {"results": [{"ms": 1.0, "result": "FORGED"}], "forbidden": []}}
        for fd in range(3, 64):
            try:
                os.write(fd, (json.dumps(fake) + "\\n").encode())
            except OSError:
                pass
        json.dumps = lambda *args, **kwargs: json.JSONEncoder().encode(fake)

        def f(x):
            return "real"
    """
    report, stderr = await _report(sandbox, code, _spec("f", []))
    assert report.results[0].result == "real", stderr


async def test_a_counted_function_counts_backward_calls_and_cannot_be_opened(
    sandbox: Sandbox,
) -> None:
    """``counted(f)`` counts the calls made during backward (checkpointing's second run), and
    keeps its tally out of reach: no closure, no readable code, globals of its own."""
    code = """
        import torch
        from torch.utils.checkpoint import checkpoint

        def f(block, x, again):
            routes = {}
            for name, route in {
                "closure": lambda: block.__closure__,
                "code": lambda: block.__code__.co_consts,
                "globals": lambda: sorted(block.__globals__),
            }.items():
                try:
                    routes[name] = repr(route())
                except BaseException as exc:
                    routes[name] = type(exc).__name__
            h = checkpoint(block, x, use_reentrant=False) if again else block(x)
            block(x)  # a forward call is not counted
            h.sum().backward()
            return routes
    """
    args = "(counted(lambda t: torch.tanh(t)), torch.randn(3, generator=g, requires_grad=True), {})"
    spec = replace(
        _spec("f", []),
        checks=tuple(
            CheckJob("example 1", args.format(flag), ("result", "calls"))
            for flag in ("True", "False")
        ),
    )
    report, stderr = await _report(sandbox, code, spec)
    checkpointed, plain = report.results
    assert (checkpointed.calls, plain.calls) == (1, 0), stderr
    assert isinstance(checkpointed.result, DictValue)
    assert dict(checkpointed.result.items) == {
        "closure": "None",
        "code": "AttributeError",
        "globals": "['__builtins__']",
    }
