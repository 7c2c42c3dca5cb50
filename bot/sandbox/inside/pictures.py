"""Inside the jail, after a snippet: its figures and files, and the autograd graph it built.

Like ``worker.py`` this runs in the jailed interpreter (its source arrives on a descriptor) and
imports only the standard library at the top; torch and matplotlib are used only if the snippet
(or the zygote) already imported them.

- **Figures**: ``plt.show()`` saves every open figure as ``figure-N.png`` in the working
  directory and closes it, as a notebook shows it; figures still open at the end are saved too.
- **Files**: regular files in the run's fresh ``/tmp`` and its sub-folders (no hidden names,
  none starting with ``_``, never through a symlink: ``O_NOFOLLOW``) go back as bytes with
  declared sizes, at most ``max_files`` of at most ``max_bytes`` each; the rest are counted by
  reason, and the first few named (:func:`collect_files`).
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


#: How deep sub-folders of the run's directory are collected (``plots/fig.png`` is depth 1).
MAX_DEPTH = 3
#: Entries looked at in all; a run that made more is told "at least".
MAX_SCANNED = 50_000
#: Left-out entries named one by one in the report (the rest are only counted, by reason).
MAX_NAMED = 20
#: ``torch.compile``'s cache, which torch writes under the temporary directory by itself.
_CACHES = ("torchinductor_",)
_KINDS = (
    (stat.S_ISLNK, "symlink"),
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "device"),
    (stat.S_ISBLK, "device"),
)


def _listing(path: str, room: int) -> tuple[list[os.DirEntry[str]], bool]:
    """At most ``room`` entries of a folder, sorted by name; whether there were more."""
    entries: list[os.DirEntry[str]] = []
    try:
        with os.scandir(path) as it:
            for entry in it:
                if len(entries) >= room:
                    return sorted(entries, key=lambda e: e.name), True
                entries.append(entry)
    except OSError:
        return [], False
    return sorted(entries, key=lambda e: e.name), False


def _read(path: str, size: int, max_bytes: int) -> bytes | tuple[int, str]:
    """A regular file's bytes, or (its size, why not), never through a link."""
    if size > max_bytes:
        return size, "too big"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            data = os.read(fd, max_bytes + 1)
        finally:
            os.close(fd)
    except OSError:
        return size, "unreadable"
    return (len(data), "too big") if len(data) > max_bytes else data


def collect_files(
    directory: str, max_files: int, max_bytes: int
) -> tuple[list[tuple[str, bytes]], list[dict[str, object]], dict[str, int]]:
    """The files to send back, the left-out entries named, and every left-out entry counted.

    Regular files in ``directory`` and its sub-folders (at most :data:`MAX_DEPTH` deep), top
    level first, each at most ``max_bytes``, at most ``max_files`` in all; names are paths of
    cleaned parts (``plots/fig.png``). Hidden names (``.x``, ``_x``) and torch's compile cache
    are not the snippet's output and are not looked at. Everything else that does not come
    back is counted by reason (``too many files``, ``too big``, ``symlink``, ``fifo``,
    ``socket``, ``device``, ``too deep``, ``unreadable``, ``not looked at``), and the first
    :data:`MAX_NAMED` of them other than ``too many files`` are named: whatever the snippet
    wrote, the report stays a few kilobytes.
    """
    files: list[tuple[str, bytes]] = []
    named: list[dict[str, object]] = []
    counts: collections.Counter[str] = collections.Counter()
    taken: set[str] = set()
    scanned = 0
    folders: collections.deque[tuple[str, str, int]] = collections.deque([("", directory, 0)])

    def leave_out(name: str, size: int, reason: str) -> None:
        counts[reason] += 1
        if reason != "too many files" and len(named) < MAX_NAMED:
            named.append({"name": name, "size": size, "reason": reason})

    while folders:
        prefix, path, depth = folders.popleft()
        entries, more = _listing(path, MAX_SCANNED - scanned + 1)
        if more or scanned + len(entries) > MAX_SCANNED:
            counts["not looked at"] += 1  # at least one: the count is a floor from here on
            entries = entries[: MAX_SCANNED - scanned]
        for entry in entries:
            if entry.name.startswith((".", "_")) or (depth == 0 and entry.name.startswith(_CACHES)):
                continue
            scanned += 1
            name = prefix + clean_name(entry.name)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                leave_out(name, 0, "unreadable")
                continue
            if stat.S_ISDIR(info.st_mode):
                if depth + 1 > MAX_DEPTH:
                    leave_out(name + "/", 0, "too deep")
                else:
                    folders.append((name + "/", entry.path, depth + 1))
                continue
            kind = next((why for test, why in _KINDS if test(info.st_mode)), None)
            if kind is not None or not stat.S_ISREG(info.st_mode):
                leave_out(name, 0, kind or "device")
                continue
            if len(files) >= max_files:
                leave_out(name, info.st_size, "too many files")
                continue
            data = _read(entry.path, info.st_size, max_bytes)
            if isinstance(data, tuple):
                leave_out(name, *data)
                continue
            while name in taken:
                name = "_" + name
            taken.add(name)
            files.append((name, data))
    return files, named, dict(counts)


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
                # Not `tensor(3)`: that is how torch prints the value 3, and this is a shape.
                notes.append(f"{name}: saved tensor, shape {tuple(value.shape)}")
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
