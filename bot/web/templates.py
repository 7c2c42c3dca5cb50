"""The Jinja2 environment: every value is escaped (autoescape on), so nothing members wrote
(names, question text, report reasons) can become markup or script."""

from __future__ import annotations

import re
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape
from starlette.responses import HTMLResponse

from bot.core.messages import Message
from bot.services.workspace_settings import shown_value
from bot.text import without_pictographs

__all__ = ["environment", "render", "text_of"]


def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("bot.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["text_of"] = text_of
    env.filters["plain"] = plain
    env.filters["prose"] = prose
    env.filters["setting_value"] = shown_value
    return env


_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def prose(text: str) -> Markup:
    """A chat text for a page: escaped, its pictographs dropped, and its `code` spans and
    **bold** shown as code and bold rather than as raw Markdown."""
    parts = _CODE_SPAN.split(plain(text))  # text, code, text, code, ..., text
    return Markup("").join(
        Markup("<code>{}</code>").format(part) if index % 2 else _bold(part)
        for index, part in enumerate(parts)
    )


def _bold(text: str) -> Markup:
    parts = _BOLD.split(text)  # text, bold, text, ...
    return Markup("").join(
        Markup("<strong>{}</strong>").format(part) if index % 2 else escape(part)
        for index, part in enumerate(parts)
    )


def plain(text: str) -> str:
    """A reply's text without the chat's pictographs (``✅``), which not every font has."""
    return without_pictographs(text).strip()


def text_of(message: Message) -> str:
    """A service's reply as plain text (shown escaped, line breaks kept by the stylesheet)."""
    return message.plain_text()


def render(env: Environment, name: str, status: int = 200, **values: Any) -> HTMLResponse:
    return HTMLResponse(env.get_template(name).render(**values), status_code=status)
