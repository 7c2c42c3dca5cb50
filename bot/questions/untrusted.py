"""Parse untrusted YAML and JSON within fixed budgets, so no file can take the bot down.

Pack files and imports come from members: a chat upload is checked inside the bot process.
PyYAML follows every alias, so a 518-byte file of nested anchors expands exponentially; its
composer and the stdlib JSON decoder recurse once per nesting level, so a deep file ends in a
``RecursionError`` (or a C stack overflow); and Python refuses to convert integers of more than
4,300 digits. Every such input is refused here with one line that says what was over which
limit and where, before anything expands:

- anchors and aliases are refused outright (packs have no use for them);
- nesting is capped at :data:`MAX_DEPTH` levels and a document at :data:`MAX_NODES` nodes;
- numbers are capped at :data:`MAX_DIGITS` digits;
- files are capped in bytes by their callers (:data:`MAX_FILE_BYTES` on the command line).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

__all__ = [
    "MAX_DEPTH",
    "MAX_DIGITS",
    "MAX_FILE_BYTES",
    "MAX_ITEMS",
    "MAX_NODES",
    "InputRefused",
    "bounded_loader",
    "check_size",
    "json_loads",
    "yaml_compose",
    "yaml_load",
]

MAX_FILE_BYTES = 4 * 1024 * 1024
"""The largest pack or import file read from disk (the shipped packs are about 60 KiB)."""
MAX_ITEMS = 2000
"""The most items one pack file may hold on the command line (chat uploads: 500)."""
MAX_DEPTH = 50
"""Nesting levels in a YAML or JSON document; a pack needs about six."""
MAX_NODES = 200_000
"""Values in one YAML document: 2,000 items of a dozen fields each is about 50,000."""
MAX_DIGITS = 1000
"""Digits in one number; Python itself refuses to convert more than 4,300."""


class InputRefused(ValueError):
    """An input over one of the budgets; ``line`` is where it was noticed (1-based)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def check_size(size: int, name: str, limit: int = MAX_FILE_BYTES) -> None:
    """Refuse a file over ``limit`` bytes before reading or parsing it."""
    if size > limit:
        raise InputRefused(
            1, f"{name} is {size:,} bytes, over the {_mib(limit)} limit for one file"
        )


def _mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size >= 1024 * 1024 else f"{size // 1024} KiB"


class _BoundedLoader(yaml.SafeLoader):
    """A SafeLoader whose composer refuses aliases and anchors and counts depth and nodes.

    The checks run while composing, node by node, so an alias bomb is refused at its first
    anchor and a deep document at level :data:`MAX_DEPTH`, long before Python's recursion
    limit or any expansion.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            raise InputRefused(
                line,
                f"YAML aliases (*{event.anchor}) are not accepted (studybot files never "
                "need them); write the value out in full",
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise InputRefused(
                line,
                f"YAML anchors (&{anchor}) are not accepted (studybot files never need "
                "them); write the value out in full",
            )
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise InputRefused(line, f"more than {MAX_NODES:,} values in one YAML document")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise InputRefused(line, f"nested more than {MAX_DEPTH} levels deep")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        _check_digits(str(node.value), node.start_mark.line + 1)
        return super().construct_yaml_int(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


def _check_digits(text: str, line: int) -> None:
    digits = sum(ch.isdigit() for ch in text)
    if digits > MAX_DIGITS:
        raise InputRefused(
            line,
            f"a number with {digits:,} digits (at most {MAX_DIGITS:,}); "
            'quote it ("...") if it is meant as text',
        )


def bounded_loader(text: str) -> yaml.SafeLoader:
    """A loader for ``text`` with the budgets on; call ``dispose()`` when done."""
    return _BoundedLoader(text)


def yaml_compose(text: str) -> yaml.Node | None:
    """The node tree of a single-document YAML text, within the budgets."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def yaml_load(text: str) -> Any:
    """``yaml.safe_load`` within the budgets: raises :class:`InputRefused` or ``YAMLError``."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def json_loads(text: str) -> Any:
    """``json.loads`` within the budgets: raises :class:`InputRefused` or ``JSONDecodeError``.

    The stdlib decoder recurses once per ``[`` or ``{``, so the nesting is measured first by
    one linear pass over the text (strings skipped), and big numbers are reported by line.
    """
    _json_depth(text)
    try:
        return json.loads(text, parse_int=_json_int)
    except InputRefused as exc:
        raise InputRefused(_line_of_number(text, exc), exc.message) from None


def _json_int(text: str) -> int:
    _check_digits(text, 0)
    return int(text)


def _line_of_number(text: str, exc: InputRefused) -> int:
    """The line of the first number over the digit budget (the decoder gives no position)."""
    run = 0
    line = 1
    for ch in text:
        if ch == "\n":
            line += 1
            run = 0
        elif ch.isdigit():
            run += 1
            if run > MAX_DIGITS:
                return line
        else:
            run = 0
    return exc.line or 1


def _json_depth(text: str) -> None:
    depth = 0
    line = 1
    in_string = escaped = False
    for ch in text:
        if ch == "\n":
            line += 1
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputRefused(line, f"nested more than {MAX_DEPTH} levels deep")
        elif ch in "]}":
            depth -= 1
