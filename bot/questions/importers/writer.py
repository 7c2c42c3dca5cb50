"""Write pack data as YAML a pack author can read and edit.

PyYAML's dumper knows no comments and picks quoted styles for multi-line text; authors edit
these files by hand, so this writer dumps one item at a time and puts comments between them
(where the item came from, what a human should check). Code and other multi-line text get
literal block scalars (``|``), long prose folded ones (``>-``), exactly as ``docs/PACKS.md``
recommends. The result is re-read and compared with the data; if a style choice would change
a value, the writer falls back to PyYAML's plain choices, so the output always loads back to
the same data.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

__all__ = ["dump_pack"]

_WIDTH = 88
_FOLD_AT = 64  # prose longer than this gets a folded block scalar


class _Dumper(yaml.SafeDumper):
    """Block styles for text; flow style for the short ``tags`` list."""

    styled = True

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # Indent lists under their key (``choices:\n  - text: ...``), as pack authors do.
        super().increase_indent(flow, False)


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style: str | None = None
    if getattr(dumper, "styled", False):
        if "\n" in value.rstrip("\n") or (value.endswith("\n") and value.strip()):
            style = "|"
        elif len(value) > _FOLD_AT and "  " not in value and not value.startswith(" "):
            style = ">"
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_tags(dumper: yaml.SafeDumper, value: _FlowList) -> yaml.SequenceNode:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", list(value), flow_style=True)


class _FlowList(list[Any]):
    """A list written inline: ``tags: [autograd, leaf]``."""


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(_FlowList, _represent_tags)


class _PlainDumper(_Dumper):
    styled = False


def _dump(value: Any, dumper: type[yaml.SafeDumper]) -> str:
    return yaml.dump(
        value,
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        width=_WIDTH,
        indent=2,
        default_flow_style=False,
    )


def _dump_checked(value: Any) -> str:
    """Dump with the readable styles, unless that would not load back to the same value."""
    text = _dump(value, _Dumper)
    if yaml.safe_load(text) == _plain(value):
        return text
    return _dump(value, _PlainDumper)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _with_flow_tags(item: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _FlowList(value) if key == "tags" else value for key, value in item.items()}


def _indent(text: str, prefix: str) -> list[str]:
    return [f"{prefix}{line}" if line else "" for line in text.rstrip("\n").split("\n")]


def dump_pack(
    pack: Mapping[str, Any],
    *,
    header: Sequence[str] = (),
    item_comments: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The pack as YAML text: ``header`` comment lines on top, comments above each item."""
    comments = item_comments or {}
    out = [f"# {line}" if line else "#" for line in header]
    if out:
        out.append("")
    head = {key: value for key, value in pack.items() if key != "items"}
    out.extend(_dump_checked(head).rstrip("\n").split("\n"))
    out.extend(["", "items:"])
    for index, item in enumerate(pack.get("items", [])):
        if index:
            out.append("")
        for comment in comments.get(str(item.get("id")), ()):
            wrapped = textwrap.wrap(comment, _WIDTH, subsequent_indent="  ") or [""]
            out.extend(f"  # {line}" for line in wrapped)
        block = _dump_checked([_with_flow_tags(item)])
        out.extend(_indent(block, "  "))
    return "\n".join(out) + "\n"
