"""``/graph``: the autograd graph a snippet built, as a picture and as a text tree.

The sandbox walks the graph and draws it inside the jail (``bot/sandbox/inside/pictures.py``); this
module only shows the result: the picture attached, the text tree beside it (the only view in a
plain terminal, and a readable one in chat), and a clear sentence when there was no graph.
Labels come from member code, so every one goes through :func:`neutralise`.
"""

from __future__ import annotations

from bot.core.messages import Message, Section, Tone, escape_markup, neutralise
from bot.core.snippets import RunLimits, file_attachments, result_message
from bot.sandbox.graph import MAX_NODES, graph_tree
from bot.sandbox.result import Outcome, RunResult

__all__ = ["graph_message", "graph_tree"]


def graph_message(result: RunResult, limits: RunLimits, author: str) -> Message:
    """The reply to ``/graph``: the picture and tree, or the run's result and why no graph.

    The graph was validated where the run's report was read (``bot.sandbox.graph``); its
    labels and the jail's reason for no graph are still the snippet's text, so they are shown
    only inside code: a tensor's name in a code span when it is a Python identifier, the tree
    and any reason in a code block.
    """
    graph = result.graph
    if result.outcome is not Outcome.OK or graph is None:
        plain = result_message(result, limits, author)
        reason = result.graph_error or "no graph came back"
        note = (
            Section(body="No autograd graph to draw:"),
            Section(code=neutralise(reason), language="text"),
        )
        return Message(
            title=plain.title,
            sections=(*plain.sections, *note),
            tone=plain.tone if result.outcome is not Outcome.OK else Tone.WARNING,
            attachments=plain.attachments,
        )
    count = f"{len(graph.nodes)} node{'s' if len(graph.nodes) != 1 else ''}"
    names = [f"`{o}`" for o in graph.outputs if o.isidentifier()]
    of = f" of {', '.join(names)}" if names else ""
    sections = [
        Section(body=f"Autograd graph{of}: {count}; gradients flow from the top down."),
        Section(heading="Graph", code=neutralise(graph_tree(graph)), language="text"),
    ]
    if graph.truncated:
        sections.append(Section(body=f"Only the first {MAX_NODES} nodes are shown."))
    if result.stdout.strip():
        shown = result.stdout.strip()[-800:]
        sections.append(Section(heading="Output", code=neutralise(shown), language="text"))
    return Message(
        title=f"Autograd graph from {escape_markup(neutralise(author))}",
        sections=tuple(sections),
        tone=Tone.SUCCESS,
        attachments=file_attachments(result),
    )
