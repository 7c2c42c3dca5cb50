"""The autograd graph a run reports, validated at the boundary into typed values.

The walk happens inside the jail (``pictures.walk_graph``), so what comes back is the
snippet's to forge: a snippet can replace the walk, or print its own report line. Everything
here is therefore checked once, where the manager reads the report, and past this module
code trusts the type: node ids are the list's own indexes, edges join nodes that exist,
every text is bounded and free of control characters, and the node limit shown to members
is ours, never the report's. A report that does not fit is refused whole
(:class:`GraphReportInvalid`); callers then say "the graph could not be drawn" and show
nothing of it.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.text import clean_text

__all__ = [
    "GRAPH_PICTURE",
    "GRAPH_UNREADABLE",
    "MAX_NODES",
    "AutogradGraph",
    "GraphNode",
    "GraphReportInvalid",
    "graph_tree",
    "parse_graph",
]

#: The walk's node limit (``pictures.MAX_NODES`` inside the jail says the same).
MAX_NODES = 300
#: The one name the in-jail drawing may give its picture.
GRAPH_PICTURE = "autograd-graph.png"
#: What a member is told when a graph report does not validate (and nothing of it is shown).
GRAPH_UNREADABLE = "the graph could not be drawn"

_MAX_ROOTS = 4
_MAX_DIMS = 16
_LABEL_CHARS = 120
_SAVED_CHARS = 80
_DTYPE = re.compile(r"[a-z][a-z0-9_]{0,31}")
NodeKind = Literal["output", "op", "leaf"]
_KINDS: frozenset[str] = frozenset({"output", "op", "leaf"})


class GraphReportInvalid(ValueError):
    """The graph part of a run's report is not what the in-jail walk writes."""


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One node: an output tensor, a backward op, or a leaf (``AccumulateGrad``'s tensor)."""

    id: int
    kind: NodeKind
    graph: int
    label: str
    shape: tuple[int, ...] = ()
    dtype: str = ""
    requires_grad: bool = False
    saved: tuple[str, ...] = ()
    name: str | None = None


@dataclass(frozen=True, slots=True)
class AutogradGraph:
    """Nodes and edges in the gradient's direction; ``truncated`` when the walk hit
    :data:`MAX_NODES`; ``picture`` is :data:`GRAPH_PICTURE` when the jail drew one."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[int, int], ...]
    truncated: bool = False
    picture: str | None = None

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(n.label for n in self.nodes if n.kind == "output")

    def as_dict(self) -> dict[str, Any]:
        """The wire and JSON form, which :func:`parse_graph` reads back."""
        nodes: list[dict[str, Any]] = []
        for n in self.nodes:
            node: dict[str, Any] = {"id": n.id, "kind": n.kind, "graph": n.graph, "label": n.label}
            if n.kind in ("output", "leaf"):
                node |= {"shape": list(n.shape), "dtype": n.dtype}
            if n.kind == "leaf":
                node["requires_grad"] = n.requires_grad
            if n.kind == "op":
                node |= {"saved": list(n.saved), "name": n.name}
            nodes.append(node)
        return {
            "nodes": nodes,
            "edges": [list(e) for e in self.edges],
            "truncated": self.truncated,
            "max_nodes": MAX_NODES,
            "picture": self.picture,
        }


def _int(value: object, low: int, high: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise GraphReportInvalid(f"{what} is not a whole number from {low} to {high}")
    return value


def _str(value: object, limit: int, what: str) -> str:
    if not isinstance(value, str):
        raise GraphReportInvalid(f"{what} is not text")
    return clean_text(value, limit)


def _node(raw: object, index: int) -> GraphNode:
    if not isinstance(raw, dict):
        raise GraphReportInvalid(f"node {index} is not an object")
    if raw.get("id") != index or isinstance(raw.get("id"), bool):
        raise GraphReportInvalid(f"node {index} has another id")
    kind = raw.get("kind")
    if kind not in _KINDS:
        raise GraphReportInvalid(f"node {index} has an unknown kind")
    graph = _int(raw.get("graph"), 0, _MAX_ROOTS - 1, f"node {index}'s graph")
    label = _str(raw.get("label", ""), _LABEL_CHARS, f"node {index}'s label")
    if kind == "op":
        saved = raw.get("saved") or []
        if not isinstance(saved, list) or len(saved) > 3:
            raise GraphReportInvalid(f"node {index}'s saved values are not a short list")
        name = raw.get("name")
        return GraphNode(
            index,
            "op",
            graph,
            label,
            saved=tuple(_str(s, _SAVED_CHARS, "a saved value") for s in saved),
            name=None if name is None else _str(name, _LABEL_CHARS, f"node {index}'s name"),
        )
    shape = raw.get("shape")
    if not isinstance(shape, list) or len(shape) > _MAX_DIMS:
        raise GraphReportInvalid(f"node {index}'s shape is not a short list")
    dtype = raw.get("dtype")
    if not isinstance(dtype, str) or not _DTYPE.fullmatch(dtype):
        raise GraphReportInvalid(f"node {index}'s dtype is not a dtype name")
    requires_grad = raw.get("requires_grad", False)
    if not isinstance(requires_grad, bool):
        raise GraphReportInvalid(f"node {index}'s requires_grad is not true or false")
    return GraphNode(
        index,
        "output" if kind == "output" else "leaf",
        graph,
        label,
        shape=tuple(_int(d, 0, 2**62, "a dimension") for d in shape),
        dtype=dtype,
        requires_grad=requires_grad,
    )


def parse_graph(raw: object) -> AutogradGraph:
    """The typed graph, or :class:`GraphReportInvalid` if anything in ``raw`` does not fit."""
    if not isinstance(raw, dict):
        raise GraphReportInvalid("the graph is not an object")
    nodes_raw, edges_raw = raw.get("nodes"), raw.get("edges")
    if not isinstance(nodes_raw, list) or not 0 < len(nodes_raw) <= MAX_NODES + _MAX_ROOTS:
        raise GraphReportInvalid("the graph's nodes are not a list within the node limit")
    nodes = tuple(_node(n, i) for i, n in enumerate(nodes_raw))
    if not any(n.kind == "output" for n in nodes):
        raise GraphReportInvalid("the graph has no output")
    if not isinstance(edges_raw, list) or len(edges_raw) > 8 * len(nodes):
        raise GraphReportInvalid("the graph's edges are not a list of a plausible length")
    last = len(nodes) - 1
    edges: list[tuple[int, int]] = []
    for edge in edges_raw:
        if not isinstance(edge, list) or len(edge) != 2:
            raise GraphReportInvalid("an edge is not a pair")
        edges.append((_int(edge[0], 0, last, "an edge's end"), _int(edge[1], 0, last, "an edge")))
    truncated = raw.get("truncated", False)
    if not isinstance(truncated, bool):
        raise GraphReportInvalid("truncated is not true or false")
    picture = raw.get("picture")
    return AutogradGraph(
        nodes, tuple(edges), truncated, GRAPH_PICTURE if picture == GRAPH_PICTURE else None
    )


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _describe(node: GraphNode) -> str:
    if node.kind == "leaf":
        grad = "requires_grad" if node.requires_grad else "no grad"
        name = f"{node.label} " if node.label else ""
        return f"leaf {name}{_shape(node.shape)} {node.dtype}, {grad}"
    if node.kind == "output":
        return f"{node.label} {_shape(node.shape)} {node.dtype}".rstrip()
    name = f" -> {node.name}" if node.name else ""
    return node.label + name + (f" [{', '.join(node.saved)}]" if node.saved else "")


def graph_tree(graph: AutogradGraph, max_lines: int = 60) -> str:
    """The graph as an indented tree from each output down to the leaves (shared nodes once)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for a, b in graph.edges:
        if b not in children[a]:
            children[a].append(b)
    lines: list[str] = []
    shown: set[int] = set()
    for root in (n for n in graph.nodes if n.kind == "output"):
        stack: list[tuple[int, int]] = [(root.id, 0)]
        while stack and len(lines) < max_lines:
            node_id, depth = stack.pop()
            node = graph.nodes[node_id]
            again = node_id in shown and node.kind != "output"
            lines.append("  " * depth + ("└─ " if depth else "") + _describe(node)
                         + (" (see above)" if again else ""))  # fmt: skip
            if again or node_id in shown:
                continue
            shown.add(node_id)
            stack.extend((c, depth + 1) for c in reversed(children[node_id]))
    if len(lines) >= max_lines:
        lines.append(f"… (the tree goes on; {len(graph.nodes)} nodes in all)")
    if graph.truncated:
        lines.append(f"(the walk stopped at {MAX_NODES} nodes)")
    return "\n".join(lines)
