"""Inside the jail, after a snippet: its figures and files, and the autograd graph it built.

Like ``worker.py`` this runs in the jailed interpreter (its source arrives on a descriptor) and
imports only the standard library at the top; torch and matplotlib are used only if the snippet
(or the zygote) already imported them.

- **Figures**: ``plt.show()`` saves every open figure as ``figure-N.png`` in the working
  directory and closes it, as a notebook shows it; figures still open at the end are saved too.
- **Files**: regular files in the run's fresh ``/tmp`` (top level; no hidden names, none starting
  with ``_``, never through a symlink: ``O_NOFOLLOW``) go back as bytes with declared sizes, at
  most ``max_files`` of at most ``max_bytes`` each; the rest are listed as skipped, with why.
- **Graph**: from the chosen tensor's ``grad_fn``, an iterative walk of ``next_functions`` (at
  most ``MAX_NODES`` nodes) gives nodes and edges in the gradient's direction, drawn as a layered
  picture with matplotlib, in the jail, because the labels are member input.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import stat
import sys
from typing import Any

__all__ = [
    "MAX_NODES",
    "collect_files",
    "draw_graph",
    "graph_tree",
    "install_show",
    "save_open_figures",
    "walk_graph",
]

MAX_NODES = 300
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_GRAPH_PICTURE = "autograd-graph.png"
_GRAPH_SVG = "autograd-graph.svg"


def preload(names: list[str]) -> None:
    """Import what snippets commonly use; matplotlib with the Agg backend (no screen here)."""
    for name in names:
        if name == "matplotlib":
            try:
                import matplotlib

                matplotlib.use("Agg")
                import matplotlib.pyplot

                # Its font cache and config went under $HOME, which is the run's /tmp: the
                # cache is in memory now, and the snippet must find /tmp empty.
                for made in (matplotlib.get_cachedir(), matplotlib.get_configdir()):
                    if made.startswith("/tmp/"):  # noqa: S108 - the jail's own tmpfs
                        shutil.rmtree(made.rsplit("/", 1)[0] if made.count("/") > 2 else made,
                                      ignore_errors=True)  # fmt: skip
            except ImportError:
                continue
        else:
            __import__(name)


def clean_name(name: str) -> str:
    """A file name made of ``[A-Za-z0-9._-]`` only, at most 100 characters, never hidden."""
    cleaned = _SAFE.sub("_", name)[:100].lstrip(".")
    return cleaned or "file"


def _pyplot() -> Any:
    return sys.modules.get("matplotlib.pyplot")


def save_open_figures(directory: str) -> None:
    """Save every open matplotlib figure as ``figure-N.png`` there, then close it."""
    plt = _pyplot()
    if plt is None:
        return
    for number in list(plt.get_fignums()):
        figure = plt.figure(number)
        n = 1
        while os.path.exists(name := os.path.join(directory, f"figure-{n}.png")):
            n += 1  # a figure shown earlier may have had the same number
        figure.savefig(name, dpi=100)
        plt.close(figure)


def install_show(directory: str) -> None:
    """Make ``plt.show()`` save the open figures (there is no screen in a jail)."""
    plt = _pyplot()
    if plt is None:
        return

    def show(*_args: object, **_kwargs: object) -> None:
        save_open_figures(directory)

    plt.show = show


def collect_files(
    directory: str, max_files: int, max_bytes: int
) -> tuple[list[tuple[str, bytes]], list[dict[str, object]]]:
    """(files to send as (clean name, bytes), skipped entries with name, size and reason)."""
    files: list[tuple[str, bytes]] = []
    skipped: list[dict[str, object]] = []
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return files, skipped
    taken: set[str] = set()
    for entry in entries:
        if entry.name.startswith((".", "_")):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            if stat.S_ISLNK(info.st_mode):
                skipped.append({"name": clean_name(entry.name), "size": 0, "reason": "symlink"})
            continue
        name = clean_name(entry.name)
        if len(files) >= max_files:
            skipped.append({"name": name, "size": info.st_size, "reason": "too many files"})
            continue
        if info.st_size > max_bytes:
            skipped.append({"name": name, "size": info.st_size, "reason": "too big"})
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            data = os.read(fd, max_bytes + 1)
        finally:
            os.close(fd)
        if len(data) > max_bytes:
            skipped.append({"name": name, "size": len(data), "reason": "too big"})
            continue
        while name in taken:
            name = "_" + name
        taken.add(name)
        files.append((name, data))
    return files, skipped


# --- the autograd graph -----------------------------------------------------------------------


def _tensor_type() -> Any:
    torch = sys.modules.get("torch")
    return None if torch is None else torch.Tensor


#: ``--inputs``: every result the snippet assigned that is not part of another one's graph.
ALL_OUTPUTS = "*"


def _reachable(fn: Any, limit: int = MAX_NODES) -> set[int]:
    seen: set[int] = set()
    stack = [fn]
    while stack and len(seen) < limit:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(n for n, _ in getattr(node, "next_functions", ()) or ())
    return seen


def _outputs(candidates: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The candidates that are nobody else's intermediate value (at most 4, in order)."""
    inside: set[int] = set()
    for _, value in candidates:
        inside |= _reachable(value.grad_fn) - {id(value.grad_fn)}
    return [(n, v) for n, v in candidates if id(v.grad_fn) not in inside][:4]


def pick_tensors(namespace: dict[str, Any], wanted: list[str]) -> tuple[list[tuple[str, Any]], str]:
    """The tensors to draw: those named, the last one assigned that has a ``grad_fn``, or
    (``wanted == ["*"]``, ``--inputs``) every result that is no other one's intermediate."""
    tensor = _tensor_type()
    if tensor is None:
        return [], "the snippet did not use torch"
    if wanted and wanted != [ALL_OUTPUTS]:
        found: list[tuple[str, Any]] = []
        for name in wanted:
            value = namespace.get(name)
            if not isinstance(value, tensor):
                kind = "not defined" if name not in namespace else type(value).__name__
                return [], f"`{name}` is not a tensor ({kind})"
            if value.grad_fn is None:
                return [], f"`{name}` has no grad_fn: no operation recorded for it"
            found.append((name, value))
        return found, ""
    last = [
        (name, value)
        for name, value in namespace.items()
        if isinstance(value, tensor) and not name.startswith("_") and value.grad_fn is not None
    ]
    if not last:
        return [], "the snippet assigned no tensor with a grad_fn (did anything require grad?)"
    if wanted == [ALL_OUTPUTS]:
        return _outputs(last), ""
    return [last[-1]], ""


def _shape(t: Any) -> str:
    return "(" + ", ".join(str(d) for d in t.shape) + ")"


def _saved(fn: Any) -> list[str]:
    """What torch exposes of the values a backward node saved (``_saved_*``)."""
    tensor = _tensor_type()
    notes = []
    for attr in sorted(a for a in dir(fn) if a.startswith("_saved_")):
        try:
            value = getattr(fn, attr)
        except Exception:  # noqa: S112 - freed buffers raise; nothing to show then
            continue
        name = attr.removeprefix("_saved_")
        if tensor is not None and isinstance(value, tensor):
            if value.numel() == 1 and value.dim() == 0:
                notes.append(f"{name}={value.item():.4g}")  # a scalar: `y * 3` shows 3
            else:
                notes.append(f"{name}: tensor{_shape(value)}")
        elif isinstance(value, (int, float, bool)):
            notes.append(f"{name}={value}")
        if len(notes) >= 3:
            break
    return notes


def walk_graph(roots: list[tuple[str, Any]], namespace: dict[str, Any]) -> dict[str, Any]:
    """Nodes and edges behind each root tensor; edges point the way gradients flow."""
    tensor = _tensor_type()
    tensors = [(k, v) for k, v in namespace.items() if tensor is not None and isinstance(v, tensor)]
    names = {id(v): k for k, v in tensors}
    # Which variable each op produced: `y = x * 3` labels that MulBackward0 "y".
    producers = {id(v.grad_fn): k for k, v in tensors if v.grad_fn is not None}
    nodes: list[dict[str, Any]] = []
    edges: list[list[int]] = []
    ids: dict[int, int] = {}
    truncated = False

    def node_for(fn: Any, graph: int) -> int:
        key = id(fn)
        if key in ids:
            return ids[key]
        index = len(nodes)
        ids[key] = index
        kind = type(fn).__name__
        if kind == "AccumulateGrad" and hasattr(fn, "variable"):
            var = fn.variable
            nodes.append({
                "id": index, "kind": "leaf", "graph": graph,
                "label": names.get(id(var), ""),
                "shape": list(var.shape), "dtype": str(var.dtype).removeprefix("torch."),
                "requires_grad": bool(var.requires_grad),
            })  # fmt: skip
        else:
            nodes.append({
                "id": index, "kind": "op", "graph": graph, "label": kind, "saved": _saved(fn),
                "name": producers.get(key),
            })  # fmt: skip
        return index

    for graph, (name, root) in enumerate(roots):
        top = len(nodes)
        nodes.append({
            "id": top, "kind": "output", "graph": graph, "label": name,
            "shape": list(root.shape), "dtype": str(root.dtype).removeprefix("torch."),
        })  # fmt: skip
        queue: collections.deque[tuple[Any, int]] = collections.deque([(root.grad_fn, top)])
        seen: set[int] = set()
        while queue:
            fn, parent = queue.popleft()
            if len(nodes) >= MAX_NODES and id(fn) not in ids:
                truncated = True
                break
            index = node_for(fn, graph)
            edges.append([parent, index])
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for next_fn, _ in getattr(fn, "next_functions", ()) or ():
                if next_fn is not None:
                    queue.append((next_fn, index))
        if truncated:
            break
    return {"nodes": nodes, "edges": edges, "truncated": truncated, "max_nodes": MAX_NODES}


def _describe(node: dict[str, Any]) -> str:
    label = str(node.get("label", "?"))
    shape = node.get("shape")
    dims = "(" + ", ".join(str(d) for d in shape) + ")" if isinstance(shape, list) else ""
    if node.get("kind") == "leaf":
        grad = "requires_grad" if node.get("requires_grad") else "no grad"
        return f"leaf {label + ' ' if label else ''}{dims} {node.get('dtype', '')}, {grad}"
    if node.get("kind") == "output":
        return f"{label} {dims} {node.get('dtype', '')}".rstrip()
    saved = node.get("saved") or []
    name = f" -> {node['name']}" if node.get("name") else ""
    return label + name + (f" [{', '.join(str(s) for s in saved)}]" if saved else "")


def graph_tree(graph: dict[str, Any], max_lines: int = 60) -> str:
    """The graph as an indented tree from each output down to the leaves (shared nodes once)."""
    nodes = {n["id"]: n for n in graph.get("nodes", []) if isinstance(n, dict) and "id" in n}
    children: dict[int, list[int]] = collections.defaultdict(list)
    for edge in graph.get("edges", []):
        if isinstance(edge, list) and len(edge) == 2 and edge[1] not in children[edge[0]]:
            children[edge[0]].append(edge[1])
    lines: list[str] = []
    shown: set[int] = set()
    for root in (n for n in nodes.values() if n.get("kind") == "output"):
        stack: list[tuple[int, int]] = [(root["id"], 0)]
        while stack and len(lines) < max_lines:
            node_id, depth = stack.pop()
            node = nodes.get(node_id)
            if node is None:
                continue
            again = node_id in shown and node.get("kind") != "output"
            lines.append("  " * depth + ("└─ " if depth else "") + _describe(node)
                         + (" (see above)" if again else ""))  # fmt: skip
            if again:
                continue
            shown.add(node_id)
            stack.extend((c, depth + 1) for c in reversed(children[node_id]))
    if len(lines) >= max_lines:
        lines.append(f"… (the tree goes on; {len(nodes)} nodes in all)")
    if graph.get("truncated"):
        lines.append(f"(the walk stopped at {graph.get('max_nodes')} nodes)")
    return "\n".join(lines)


def _label(node: dict[str, Any]) -> str:
    if node["kind"] == "leaf":
        grad = "requires_grad" if node.get("requires_grad") else "no grad"
        shape = "(" + ", ".join(str(d) for d in node["shape"]) + ")"
        return f"{node['label'] or 'leaf'}\n{shape} {node['dtype']}\n{grad}"
    if node["kind"] == "output":
        shape = "(" + ", ".join(str(d) for d in node["shape"]) + ")"
        return f"{node['label']}\n{shape} {node['dtype']}"
    saved = node.get("saved") or []
    head = f"{node['label']} -> {node['name']}" if node.get("name") else node["label"]
    return "\n".join([head, *saved])


def _layers(graph: dict[str, Any]) -> dict[int, int]:
    """Longest distance from the output for each node: a layered (Sugiyama-like) drawing."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    indegree: dict[int, int] = collections.Counter()
    for a, b in graph["edges"]:
        if b not in children[a]:
            children[a].append(b)
            indegree[b] += 1
    depth = {n["id"]: 0 for n in graph["nodes"]}
    ready = collections.deque(n["id"] for n in graph["nodes"] if indegree[n["id"]] == 0)
    while ready:
        a = ready.popleft()
        for b in children[a]:
            depth[b] = max(depth[b], depth[a] + 1)
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return depth


def draw_graph(
    graph: dict[str, Any], directory: str, titles: list[str], *, svg: bool = False
) -> str | None:
    """Draw the graph(s) side by side as ``autograd-graph.png`` (and ``.svg`` if asked); the
    PNG's name, or None."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import FancyBboxPatch
    except Exception:
        return None
    depth = _layers(graph)
    by_graph: dict[int, dict[int, list[dict[str, Any]]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for node in graph["nodes"]:
        by_graph[node["graph"]][depth[node["id"]]].append(node)
    colours = {"output": "#cfe8ff", "op": "#f2f2f2", "leaf": "#d9f2d0"}
    pos: dict[int, tuple[float, float]] = {}
    x0 = 0.0
    spans = []
    for g in sorted(by_graph):
        layers = by_graph[g]
        width = max(len(v) for v in layers.values())
        for level, members in layers.items():
            for i, node in enumerate(members):
                pos[node["id"]] = (x0 + (i - (len(members) - 1) / 2) * 3.2 + (width - 1) * 1.6,
                                   -level * 1.6)  # fmt: skip
        spans.append((x0, x0 + (width - 1) * 3.2))
        x0 += width * 3.2 + 1.5
    levels = max(depth.values()) + 1 if depth else 1
    fig_w = min(40.0, max(4.0, x0 * 0.75))
    fig_h = min(40.0, max(3.0, levels * 1.25))
    fig, ax = plt.subplots(figsize=(fig_w, fig_h))
    for a, b in {(a, b) for a, b in graph["edges"]}:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        ax.annotate("", xy=(xb, yb + 0.45), xytext=(xa, ya - 0.45),
                    arrowprops={"arrowstyle": "-|>", "color": "#555", "lw": 1.0})  # fmt: skip
    for node in graph["nodes"]:
        x, y = pos[node["id"]]
        ax.add_patch(FancyBboxPatch((x - 1.4, y - 0.45), 2.8, 0.9,
                                    boxstyle="round,pad=0.02", fc=colours[node["kind"]],
                                    ec="#333", lw=0.8))  # fmt: skip
        ax.text(x, y, _label(node), ha="center", va="center", fontsize=7, family="monospace")
    for (left, right), title in zip(spans, titles, strict=False):
        ax.text((left + right) / 2 + 0.0, 0.9, title, ha="center", fontsize=9, weight="bold")
    note = "gradients flow downwards, from the output to the leaves"
    if graph["truncated"]:
        note += f"; cut at {graph['max_nodes']} nodes"
    ax.set_title(note, fontsize=8, color="#555")
    ax.set_xlim(-1.8, max(x0 - 1.5, 1.8))
    ax.set_ylim(-(levels - 1) * 1.6 - 0.8, 1.4)
    ax.axis("off")
    fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=1 - 0.5 / fig_h)
    path = os.path.join(directory, _GRAPH_PICTURE)
    # At most about 2,500 pixels a side: a chat shows nothing more, and PNG encoding is most
    # of the drawing's time.
    fig.savefig(path, dpi=min(110.0, 2500 / max(fig_w, fig_h)))
    if svg:  # sharp at any size, for whoever can show it (the CLI's --out, a browser)
        fig.savefig(os.path.join(directory, _GRAPH_SVG), format="svg")
    plt.close(fig)
    return _GRAPH_PICTURE
