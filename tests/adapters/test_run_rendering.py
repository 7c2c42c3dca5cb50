"""What came from a run is shown inside code, or escaped, on Discord, Slack and the console
(issue 27, finding 7).

A forged run result carries masked links, mention text and control characters in every field
a snippet can reach (its output, its graph's labels, the jail's reason for no graph). Each
platform's renderer must keep them out of prose, and no control character may survive.
"""

from __future__ import annotations

import re

import pytest

from bot.adapters.discord.render import render as discord_render
from bot.adapters.slack.render import render_blocks as slack_blocks
from bot.core.graphs import graph_message
from bot.core.snippets import RunLimits, result_message
from bot.sandbox.graph import parse_graph
from bot.sandbox.result import Outcome, RunFile, RunResult

HOSTILE = (
    "[Free Nitro](https://evil.example) <https://evil.example|click> @everyone <!channel> "
    "<@&1> \x1b]0;owned\x07 \u202egnp.exe"
)
_FENCED = re.compile(r"```.*?```", re.DOTALL)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _result(**extra: object) -> RunResult:
    base = RunResult(Outcome.OK, 0, None, HOSTILE + "\n", HOSTILE, False, 12.0)
    return RunResult(**{**{f: getattr(base, f) for f in base.__slots__}, **extra})  # type: ignore[arg-type]


GRAPH = parse_graph(
    {
        "nodes": [
            {"id": 0, "kind": "output", "graph": 0, "label": HOSTILE, "shape": [2],
             "dtype": "float32"},
            {"id": 1, "kind": "op", "graph": 0, "label": HOSTILE, "saved": [HOSTILE],
             "name": HOSTILE},
        ],
        "edges": [[0, 1]],
        "truncated": True,
        "max_nodes": HOSTILE,
    }
)  # fmt: skip

CASES = {
    "run": lambda: result_message(
        _result(files=(RunFile("notes.txt", HOSTILE.encode(), "text/plain"),)), RunLimits(), "a"
    ),
    "graph": lambda: graph_message(_result(graph=GRAPH), RunLimits(), "a"),
    "no graph": lambda: graph_message(_result(graph_error=HOSTILE), RunLimits(), "a"),
}


def _assert_inert(whole: str, prose: str) -> None:
    assert not _CONTROLS.search(whole), repr(_CONTROLS.search(whole))
    for bad in ("](https://evil", "<https://evil", "@everyone", "<!channel>", "<@&1>"):
        assert bad not in prose, (bad, prose)


@pytest.mark.parametrize("case", list(CASES))
def test_discord_shows_run_text_only_inside_code(case: str) -> None:
    rendered = discord_render(CASES[case]())
    assert rendered.embed is not None
    description = rendered.embed.description or ""
    _assert_inert(description, _FENCED.sub("", description))


@pytest.mark.parametrize("case", list(CASES))
def test_slack_shows_run_text_only_inside_code(case: str) -> None:
    blocks = slack_blocks(CASES[case]())
    texts = [b["text"]["text"] for b in blocks if isinstance(b.get("text"), dict)]
    whole = "\n".join(texts)
    _assert_inert(whole, _FENCED.sub("", whole))


@pytest.mark.parametrize("case", list(CASES))
def test_the_console_shows_no_control_character(case: str) -> None:
    text = CASES[case]().plain_text()
    assert not _CONTROLS.search(text)
    assert "\\x1b]0;owned\\x07" in text  # shown, as an escape
