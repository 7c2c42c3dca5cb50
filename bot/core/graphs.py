"""``/graph``: the autograd graph a snippet built, as a picture and as a text tree.

The sandbox walks the graph and draws it inside the jail (``bot/sandbox/pictures.py``); this
module only shows the result: the picture attached, the text tree beside it (the only view in a
plain terminal, and a readable one in chat), and a clear sentence when there was no graph.
Labels come from member code, so every one goes through :func:`neutralise`.
"""

from __future__ import annotations

from bot.core.messages import Message, Section, Tone, escape_markup, neutralise
from bot.core.snippets import RunLimits, file_attachments, result_message
from bot.sandbox.pictures import graph_tree
from bot.sandbox.result import Outcome, RunResult

__all__ = ["graph_message", "graph_tree"]


def graph_message(result: RunResult, limits: RunLimits, author: str) -> Message:
    """The reply to ``/graph``: the picture and tree, or the run's result and why no graph."""
    graph = result.graph or {}
    nodes = graph.get("nodes")
    if result.outcome is not Outcome.OK or not isinstance(nodes, list) or not nodes:
        reason = graph.get("error") or graph.get("graph_error") or "no graph came back"
        plain = result_message(result, limits, author)
        note = Section(body=f"No autograd graph to draw: {escape_markup(neutralise(str(reason)))}.")
        return Message(
            title=plain.title,
            sections=(*plain.sections, note),
            tone=plain.tone if result.outcome is not Outcome.OK else Tone.WARNING,
            attachments=plain.attachments,
        )
    outputs = [str(n.get("label")) for n in nodes if n.get("kind") == "output"]
    count = f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}"
    heading = ", ".join(f"`{escape_markup(neutralise(o))}`" for o in outputs)
    sections = [
        Section(body=f"Autograd graph of {heading}: {count}; gradients flow from the top down."),
        Section(heading="Graph", code=neutralise(graph_tree(graph)), language="text"),
    ]
    if graph.get("truncated"):
        sections.append(Section(body=f"Only the first {graph.get('max_nodes')} nodes are shown."))
    if result.stdout.strip():
        shown = result.stdout.strip()[-800:]
        sections.append(Section(heading="Output", code=neutralise(shown), language="text"))
    return Message(
        title=f"Autograd graph from {escape_markup(neutralise(author))}",
        sections=tuple(sections),
        tone=Tone.SUCCESS,
        attachments=file_attachments(result),
    )
