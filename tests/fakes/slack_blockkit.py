"""A light Block Kit checker for the Slack fake.

Real Slack rejects malformed blocks with ``invalid_blocks`` (messages) or ``invalid_arguments``
(views). This module checks the limits that an adapter is most likely to hit (lengths, counts,
required fields, duplicate ids) so that a test against the fake fails the way production would.
It is deliberately not a full schema: unknown element types are accepted, unknown *block* types
are not (a typo in ``"type"`` is the common mistake).

Limits are from the Block Kit reference (docs.slack.dev/reference/block-kit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["BLOCK_TYPES", "MAX_BLOCKS_TEXT", "block_text_length", "check_blocks", "check_view"]

BLOCK_TYPES = frozenset(
    {
        "actions",
        "context",
        "context_actions",
        "divider",
        "file",
        "header",
        "image",
        "input",
        "markdown",
        "rich_text",
        "section",
        "table",
        "video",
    }
)

MAX_MESSAGE_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
#: Slack refuses a message whose blocks hold more text than this in all (``msg_blocks_too_long``),
#: though every block is within its own limit. The cut-off is undocumented: slackapi/bolt-js
#: #2509 puts it near 12,000 characters, and #2867 saw a refusal at 11,341. The fake uses the
#: higher figure; the bot keeps to 10,000 so that it is never near the edge.
MAX_BLOCKS_TEXT = 12_000


def block_text_length(blocks: Any) -> int:
    """Every ``text`` string in ``blocks``, at any depth, counted together: as Slack counts."""
    if isinstance(blocks, Mapping):
        own = blocks.get("text")
        total = len(own) if isinstance(own, str) else 0
        return total + sum(
            block_text_length(v) for k, v in blocks.items() if k != "text" or not isinstance(v, str)
        )
    if isinstance(blocks, Sequence) and not isinstance(blocks, str):
        return sum(block_text_length(item) for item in blocks)
    return 0


def _text_object(
    obj: Any, where: str, errors: list[str], *, max_len: int, plain_only: bool = False
) -> None:
    if not isinstance(obj, Mapping):
        errors.append(f"{where}: must be a text object")
        return
    kind = obj.get("type")
    allowed = ("plain_text",) if plain_only else ("plain_text", "mrkdwn")
    if kind not in allowed:
        errors.append(f"{where}.type: must be one of {', '.join(allowed)} (got {kind!r})")
    text = obj.get("text")
    if not isinstance(text, str) or not text:
        errors.append(f"{where}.text: must be a non-empty string")
    elif len(text) > max_len:
        errors.append(f"{where}.text: must be at most {max_len} characters (got {len(text)})")


def _element(el: Any, where: str, errors: list[str], action_ids: set[str]) -> None:
    if not isinstance(el, Mapping) or not isinstance(el.get("type"), str):
        errors.append(f"{where}: must be an element object with a type")
        return
    action_id = el.get("action_id")
    if action_id is not None:
        if not isinstance(action_id, str) or not 0 < len(action_id) <= 255:
            errors.append(f"{where}.action_id: must be 1..255 characters")
        elif action_id in action_ids:
            errors.append(f"{where}.action_id: duplicate action_id {action_id!r} in block")
        else:
            action_ids.add(action_id)
    if el["type"] == "button":
        _text_object(el.get("text"), f"{where}.text", errors, max_len=75, plain_only=True)
        value = el.get("value")
        if value is not None and (not isinstance(value, str) or len(value) > 2000):
            errors.append(f"{where}.value: must be a string of at most 2000 characters")
        if el.get("style") not in (None, "primary", "danger"):
            errors.append(f"{where}.style: must be primary or danger")


def _block(block: Any, where: str, errors: list[str]) -> None:
    if not isinstance(block, Mapping):
        errors.append(f"{where}: must be an object")
        return
    kind = block.get("type")
    if kind not in BLOCK_TYPES:
        errors.append(f"{where}.type: unknown block type {kind!r}")
        return
    action_ids: set[str] = set()
    if kind == "section":
        if "text" not in block and "fields" not in block:
            errors.append(f"{where}: a section needs text or fields")
        if "text" in block:
            _text_object(block["text"], f"{where}.text", errors, max_len=3000)
        fields = block.get("fields")
        if fields is not None:
            if not isinstance(fields, Sequence) or len(fields) > 10:
                errors.append(f"{where}.fields: at most 10 fields")
            else:
                for i, f in enumerate(fields):
                    _text_object(f, f"{where}.fields[{i}]", errors, max_len=2000)
        if "accessory" in block:
            _element(block["accessory"], f"{where}.accessory", errors, action_ids)
    elif kind == "header":
        _text_object(block.get("text"), f"{where}.text", errors, max_len=150, plain_only=True)
    elif kind in ("actions", "context"):
        limit = 25 if kind == "actions" else 10
        elements = block.get("elements")
        if not isinstance(elements, Sequence) or not 0 < len(elements) <= limit:
            errors.append(f"{where}.elements: must hold 1..{limit} elements")
        elif kind == "actions":
            for i, el in enumerate(elements):
                _element(el, f"{where}.elements[{i}]", errors, action_ids)
    elif kind == "input":
        _text_object(block.get("label"), f"{where}.label", errors, max_len=2000, plain_only=True)
        if "element" not in block:
            errors.append(f"{where}.element: an input block needs an element")
        else:
            _element(block["element"], f"{where}.element", errors, action_ids)
    elif kind == "image":
        if "image_url" not in block and "slack_file" not in block:
            errors.append(f"{where}: an image needs image_url or slack_file")
        if not isinstance(block.get("alt_text"), str):
            errors.append(f"{where}.alt_text: required")


def check_blocks(blocks: Any, *, max_blocks: int = MAX_MESSAGE_BLOCKS) -> list[str]:
    """Return human-readable problems with ``blocks`` (empty when they look valid)."""
    if not isinstance(blocks, Sequence) or isinstance(blocks, str):
        return ["blocks: must be an array"]
    errors: list[str] = []
    if len(blocks) > max_blocks:
        errors.append(f"blocks: at most {max_blocks} blocks (got {len(blocks)})")
    block_ids: set[str] = set()
    for i, block in enumerate(blocks):
        where = f"blocks[{i}]"
        _block(block, where, errors)
        block_id = block.get("block_id") if isinstance(block, Mapping) else None
        if block_id is not None:
            if not isinstance(block_id, str) or not 0 < len(block_id) <= 255:
                errors.append(f"{where}.block_id: must be 1..255 characters")
            elif block_id in block_ids:
                errors.append(f"{where}.block_id: duplicate block_id {block_id!r}")
            else:
                block_ids.add(block_id)
    return errors


def check_view(view: Any) -> list[str]:
    """Return problems with a modal or home view payload (empty when it looks valid)."""
    if not isinstance(view, Mapping):
        return ["view: must be an object"]
    errors: list[str] = []
    kind = view.get("type")
    if kind not in ("modal", "home"):
        errors.append(f"view.type: must be modal or home (got {kind!r})")
    blocks = view.get("blocks")
    if blocks is None:
        errors.append("view.blocks: required")
    else:
        errors.extend(f"view.{e}" for e in check_blocks(blocks, max_blocks=MAX_VIEW_BLOCKS))
        if (total := block_text_length(blocks)) > MAX_BLOCKS_TEXT:
            errors.append(
                f"view.blocks: at most {MAX_BLOCKS_TEXT} characters of text (got {total})"
            )
    if kind == "modal":
        _text_object(view.get("title"), "view.title", errors, max_len=24, plain_only=True)
        for key in ("submit", "close"):
            if key in view:
                _text_object(view[key], f"view.{key}", errors, max_len=24, plain_only=True)
        has_input = isinstance(blocks, Sequence) and any(
            isinstance(b, Mapping) and b.get("type") == "input" for b in blocks
        )
        if has_input and "submit" not in view:
            errors.append("view.submit: required when the view has input blocks")
    metadata = view.get("private_metadata")
    if metadata is not None and (not isinstance(metadata, str) or len(metadata) > 3000):
        errors.append("view.private_metadata: must be a string of at most 3000 characters")
    callback_id = view.get("callback_id")
    if callback_id is not None and (not isinstance(callback_id, str) or len(callback_id) > 255):
        errors.append("view.callback_id: must be a string of at most 255 characters")
    return errors
