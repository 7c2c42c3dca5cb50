"""Discord's documented size limits for messages and modals, as the fake enforces them.

Real Discord refuses a whole message (``50035 Invalid Form Body``) when any one of these is
broken, so a renderer that passes the fake here would be refused in production too. Limits are
from the API reference (Message, Embed Limits, Components, Interactions > Modal).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["message_problems", "modal_problems"]

MAX_CONTENT = 2000
MAX_EMBEDS = 10
MAX_EMBED_TOTAL = 6000  # title, description, field names and values, footer, author: all embeds
MAX_TITLE = 256
MAX_DESCRIPTION = 4096
MAX_FIELDS = 25
MAX_FIELD_NAME = 256
MAX_FIELD_VALUE = 1024
MAX_FOOTER = 2048
MAX_AUTHOR = 256
MAX_ROWS = 5
MAX_ROW_BUTTONS = 5
MAX_LABEL = 80
MAX_CUSTOM_ID = 100
MAX_SELECT_OPTIONS = 25
MAX_MODAL_TITLE = 45
MAX_INPUT_LABEL = 45
MAX_INPUT_VALUE = 4000
MAX_PLACEHOLDER = 100


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _length(where: str, value: Any, limit: int, problems: list[str]) -> int:
    text = _text(value)
    if len(text) > limit:
        problems.append(f"{where}: must be {limit} or fewer in length (got {len(text)})")
    return len(text)


def _embeds(embeds: Any, problems: list[str]) -> None:
    if not isinstance(embeds, Sequence):
        return
    if len(embeds) > MAX_EMBEDS:
        problems.append(f"embeds: at most {MAX_EMBEDS} embeds (got {len(embeds)})")
    total = 0
    for i, embed in enumerate(embeds):
        if not isinstance(embed, Mapping):
            continue
        where = f"embeds.{i}"
        total += _length(f"{where}.title", embed.get("title"), MAX_TITLE, problems)
        total += _length(
            f"{where}.description", embed.get("description"), MAX_DESCRIPTION, problems
        )
        footer = embed.get("footer") or {}
        author = embed.get("author") or {}
        total += _length(f"{where}.footer.text", footer.get("text"), MAX_FOOTER, problems)
        total += _length(f"{where}.author.name", author.get("name"), MAX_AUTHOR, problems)
        fields = embed.get("fields") or []
        if len(fields) > MAX_FIELDS:
            problems.append(f"{where}.fields: at most {MAX_FIELDS} fields (got {len(fields)})")
        for j, item in enumerate(fields):
            total += _length(f"{where}.fields.{j}.name", item.get("name"), MAX_FIELD_NAME, problems)
            total += _length(
                f"{where}.fields.{j}.value", item.get("value"), MAX_FIELD_VALUE, problems
            )
    if total > MAX_EMBED_TOTAL:
        problems.append(f"embeds: at most {MAX_EMBED_TOTAL} characters in all (got {total})")


def _component(item: Any, where: str, problems: list[str]) -> None:
    if not isinstance(item, Mapping):
        return
    _length(f"{where}.custom_id", item.get("custom_id"), MAX_CUSTOM_ID, problems)
    _length(f"{where}.label", item.get("label"), MAX_LABEL, problems)
    _length(f"{where}.placeholder", item.get("placeholder"), 150, problems)
    options = item.get("options") or []
    if len(options) > MAX_SELECT_OPTIONS:
        problems.append(f"{where}.options: at most {MAX_SELECT_OPTIONS} options")
    for k, option in enumerate(options):
        _length(f"{where}.options.{k}.label", option.get("label"), 100, problems)
        _length(f"{where}.options.{k}.value", option.get("value"), 100, problems)
        _length(f"{where}.options.{k}.description", option.get("description"), 100, problems)


def _components(rows: Any, problems: list[str]) -> None:
    if not isinstance(rows, Sequence):
        return
    if len(rows) > MAX_ROWS:
        problems.append(f"components: at most {MAX_ROWS} action rows (got {len(rows)})")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or row.get("type") != 1:
            continue
        items = row.get("components") or []
        if len(items) > MAX_ROW_BUTTONS:
            problems.append(f"components.{i}: at most {MAX_ROW_BUTTONS} components in a row")
        for j, item in enumerate(items):
            _component(item, f"components.{i}.components.{j}", problems)


def message_problems(body: Any) -> list[str]:
    """What Discord would refuse in a message body (create, edit, follow-up, callback data)."""
    if not isinstance(body, Mapping):
        return []
    problems: list[str] = []
    _length("content", body.get("content"), MAX_CONTENT, problems)
    _embeds(body.get("embeds"), problems)
    _components(body.get("components"), problems)
    return problems


def modal_problems(data: Any) -> list[str]:
    """What Discord would refuse in a modal (interaction callback type 9)."""
    if not isinstance(data, Mapping):
        return []
    problems: list[str] = []
    _length("title", data.get("title"), MAX_MODAL_TITLE, problems)
    _length("custom_id", data.get("custom_id"), MAX_CUSTOM_ID, problems)
    rows = data.get("components") or []
    if len(rows) > MAX_ROWS:
        problems.append(f"components: at most {MAX_ROWS} components in a modal")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            continue
        if row.get("type") == 18:  # a Label wraps one component
            _length(f"components.{i}.label", row.get("label"), MAX_INPUT_LABEL, problems)
            inner = [row.get("component")]
        else:
            inner = list(row.get("components") or [])
        for j, item in enumerate(inner):
            if not isinstance(item, Mapping):
                continue
            where = f"components.{i}.components.{j}"
            _length(f"{where}.label", item.get("label"), MAX_INPUT_LABEL, problems)
            _length(f"{where}.value", item.get("value"), MAX_INPUT_VALUE, problems)
            _length(f"{where}.placeholder", item.get("placeholder"), MAX_PLACEHOLDER, problems)
            _length(f"{where}.custom_id", item.get("custom_id"), MAX_CUSTOM_ID, problems)
            max_length = item.get("max_length")
            if isinstance(max_length, int) and max_length > MAX_INPUT_VALUE:
                problems.append(f"{where}.max_length: at most {MAX_INPUT_VALUE}")
    return problems
