"""What comes back besides text: files, figures, and the autograd graph (issue 16).

Every test runs the real jail (fork server, torch, matplotlib) and checks what a member would
get: the files, the pictures (decoded with Pillow), the graph's nodes and edges.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from bot.sandbox import Sandbox
from bot.sandbox.result import Outcome, RunResult
from tests.sandbox.sandbox_helpers import run

session_loop = pytest.mark.asyncio(loop_scope="session")

ROOT = Path(__file__).resolve().parents[2]


async def graph_of(sb: Sandbox, code: str, *names: str) -> RunResult:
    import textwrap

    return await sb.run(textwrap.dedent(code), graph=names)


def labels(result: RunResult) -> list[str]:
    assert result.graph is not None
    return [n.label for n in result.graph.nodes]


def picture(result: RunResult, name: str) -> Image.Image:
    [data] = [f.data for f in result.files if f.name == name]
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


@session_loop
async def test_x_times_two_is_mul_backward_into_the_leaf(sandbox: Sandbox) -> None:
    r = await graph_of(
        sandbox,
        """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert r.graph is not None
    nodes = {n.id: n for n in r.graph.nodes}
    assert [(nodes[a].label, nodes[b].label) for a, b in r.graph.edges] == [
        ("y", "MulBackward0"),
        ("MulBackward0", "x"),
    ]
    leaf = next(n for n in nodes.values() if n.kind == "leaf")
    assert (leaf.shape, leaf.dtype, leaf.requires_grad) == ((2,), "float32", True)
    assert "other=2" in next(n for n in nodes.values() if n.kind == "op").saved
    assert r.graph.truncated is False
    image = picture(r, "autograd-graph.png")
    assert image.format == "PNG"
    assert 200 <= image.width <= 5000 and 200 <= image.height <= 5000


@session_loop
async def test_a_saved_tensor_reads_as_a_shape_not_a_value(sandbox: Sandbox) -> None:
    """Issue 29, friction 8: ``[other: tensor(3)]`` read like the value 3; it is a saved
    tensor of shape (3,). A saved scalar still shows its value."""
    r = await graph_of(
        sandbox,
        """
        import torch
        x = torch.ones(3, requires_grad=True)
        w = torch.arange(3.0)
        y = (x * w) * 2
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert r.graph is not None
    saved = [s for n in r.graph.nodes if n.kind == "op" for s in n.saved]
    assert "other: saved tensor, shape (3,)" in saved, saved
    assert "other=2" in saved, saved
    assert not any("tensor(" in s for s in saved), saved
    from bot.sandbox.graph import graph_tree

    assert "saved tensor, shape (3,)" in graph_tree(r.graph)


@session_loop
async def test_the_branch_taken_shows_in_the_graph(sandbox: Sandbox) -> None:
    """The dynamic graph made visible: two inputs, two branches, two different graphs."""
    r = await graph_of(
        sandbox,
        """
        import torch
        def f(x):
            y = (x * x).sum()
            if y.item() > 1.5:
                return y * 3
            return (y * 4).exp()
        small = f(torch.tensor([0.5, 0.5], requires_grad=True))
        large = f(torch.tensor([1.0, 2.0], requires_grad=True))
        """,
        "small",
        "large",
    )
    assert r.outcome is Outcome.OK, r
    assert r.graph is not None
    by_graph: dict[int, set[str]] = {0: set(), 1: set()}
    for node in r.graph.nodes:
        by_graph[node.graph].add(node.label + str(list(node.saved) if node.kind == "op" else ""))
    assert "ExpBackward0" + str(next(
        list(n.saved) for n in r.graph.nodes if n.label == "ExpBackward0"
    )) in by_graph[0]  # fmt: skip
    assert not any(label.startswith("ExpBackward0") for label in by_graph[1])
    assert any("other=4" in label for label in by_graph[0])
    assert any("other=3" in label for label in by_graph[1])
    assert by_graph[0] != by_graph[1]
    image = picture(r, "autograd-graph.png")
    assert image.width > image.height / 3  # two graphs side by side


@session_loop
async def test_inputs_draws_each_result_but_not_the_intermediates(sandbox: Sandbox) -> None:
    """``--inputs``: one function on two inputs gives two graphs; ``h`` is inside ``out_b``."""
    r = await graph_of(
        sandbox,
        """
        import torch
        def f(x):
            return (x * 2).sum() if x.sum() > 0 else (x * x).mean()
        a = torch.ones(3, requires_grad=True)
        b = -torch.ones(3, requires_grad=True)
        out_a = f(a)
        h = b * 5
        out_b = f(h)
        """,
        "*",
    )
    assert r.outcome is Outcome.OK, r
    assert r.graph is not None
    outputs = [n.label for n in r.graph.nodes if n.kind == "output"]
    assert outputs == ["out_a", "out_b"]
    ops = [{n.label for n in r.graph.nodes if n.graph == g} for g in (0, 1)]
    assert "SumBackward0" in ops[0] and "MeanBackward0" in ops[1]


@session_loop
async def test_the_node_cap_is_hit_and_said(sandbox: Sandbox) -> None:
    r = await graph_of(
        sandbox,
        """
        import torch
        x = torch.ones(1, requires_grad=True)
        y = x
        for _ in range(5000):
            y = y + 1
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert r.graph is not None
    assert r.graph.truncated is True
    assert len(r.graph.nodes) == 300
    picture(r, "autograd-graph.png")


@session_loop
async def test_a_custom_function_is_a_node_of_its_own(sandbox: Sandbox) -> None:
    r = await graph_of(
        sandbox,
        """
        import torch
        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x
            @staticmethod
            def backward(ctx, grad):
                (x,) = ctx.saved_tensors
                return 2 * x * grad
        w = torch.ones(3, requires_grad=True)
        out = Square.apply(w).sum()
        """,
    )
    assert r.outcome is Outcome.OK, r
    assert "SquareBackward" in labels(r)
    assert "w" in labels(r)


@pytest.mark.parametrize(
    ("code", "names", "reason"),
    [
        ("x = 3\n", ("x",), "`x` is not a tensor (int)"),
        ("import torch\nx = torch.ones(2)\n", ("x",), "`x` has no grad_fn"),
        ("import torch\nx = torch.ones(2)\n", ("nope",), "`nope` is not a tensor (not defined)"),
        ("import torch\nx = torch.ones(2) * 2\n", (), "assigned no tensor with a grad_fn"),
        ("print('no torch here')\n", (), "assigned no tensor with a grad_fn"),
    ],
    ids=["int", "no-grad-fn", "undefined", "nothing-requires-grad", "no-tensor"],
)
@session_loop
async def test_no_graph_gets_a_clear_reason(
    sandbox: Sandbox, code: str, names: tuple[str, ...], reason: str
) -> None:
    r = await sandbox.run(code, graph=names)
    assert r.outcome is Outcome.OK, r
    assert r.graph is None and r.graph_error is not None
    assert reason in r.graph_error


@session_loop
async def test_a_snippet_that_raises_before_the_graph(sandbox: Sandbox) -> None:
    r = await sandbox.run("import torch\nx = torch.ones(2, requires_grad=True)\n1 / 0\n", graph=())
    assert r.outcome is Outcome.ERROR
    assert "ZeroDivisionError" in r.stderr
    assert r.graph is None and r.graph_error is not None
    assert "ended with an error" in r.graph_error


@session_loop
async def test_figures_come_back_as_pngs(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import matplotlib.pyplot as plt
        plt.plot([1, 2, 3], [1, 4, 9])
        plt.show()
        plt.figure()
        plt.bar(['a', 'b'], [3, 5])   # left open: saved at the end, as a notebook shows it
        print('plotted')
        """,
    )
    assert (r.outcome, r.stdout) == (Outcome.OK, "plotted\n"), r
    assert sorted(f.name for f in r.files) == ["figure-1.png", "figure-2.png"]
    for f in r.files:
        assert f.mime == "image/png"
        image = picture(r, f.name)
        assert (image.width, image.height) == (640, 480)


@session_loop
async def test_files_are_capped_cleaned_and_never_followed(sandbox: Sandbox) -> None:
    r = await run(
        sandbox,
        """
        import os
        for i in range(11):
            open(f'out{i:02d}.txt', 'w').write(str(i))
        open('.hidden', 'w').write('secret')
        open('_private', 'w').write('secret')
        open('big.bin', 'wb').write(b'x' * (9 * 2**20))
        open('we ird;$(name)\\n.txt', 'w').write('odd')
        os.symlink('/etc/passwd', 'passwd-link')
        os.mkdir('sub'); open('sub/inner.txt', 'w').write('nested')
        """,
    )
    assert r.outcome is Outcome.OK, r
    names = [f.name for f in r.files]
    assert len(names) == 10
    assert all(set(n) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
               for n in names)  # fmt: skip
    assert ".hidden" not in names and "_private" not in names and "sub/inner.txt" not in names
    skipped = {s.name: s.reason for s in r.skipped_files}
    assert skipped["big.bin"] == "too big"
    assert skipped["passwd-link"] == "symlink"
    # out10, the odd name and sub/inner.txt: counted, not named one by one
    assert dict(r.skipped_counts) == {"too many files": 3, "too big": 1, "symlink": 1}
    assert not any(b"root:" in f.data for f in r.files)


def test_cli_graph_json_and_out(tmp_path: Path) -> None:
    snippet = tmp_path / "g.py"
    snippet.write_text(
        "import torch\nx = torch.ones(2, requires_grad=True)\nloss = (x * 3).sum()\n"
    )
    out = tmp_path / "pictures"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "snippet",
            "graph",
            str(snippet),
            "--json",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert set(payload) >= {"outcome", "nodes", "edges", "truncated", "files"}
    assert payload["outcome"] == "ok" and payload["truncated"] is False
    assert [n["label"] for n in payload["nodes"]] == ["loss", "SumBackward0", "MulBackward0", "x"]
    assert [(f["name"], f["mime"]) for f in payload["files"]] == [
        ("autograd-graph.png", "image/png"),
        ("autograd-graph.svg", "text/plain"),  # an SVG is text: never shown as a picture
    ]
    assert (out / "autograd-graph.png").read_bytes().startswith(b"\x89PNG")
    svg = (out / "autograd-graph.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_cli_run_lists_files_and_writes_them(tmp_path: Path) -> None:
    snippet = tmp_path / "f.py"
    snippet.write_text("open('result.csv', 'w').write('a,b\\n1,2\\n')\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "snippet", "run", str(snippet), "--json", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["files"] == [{"name": "result.csv", "size": 8, "mime": "text/plain"}]
    assert (out / "result.csv").read_text() == "a,b\n1,2\n"
