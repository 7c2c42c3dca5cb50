"""A neutral :class:`~bot.core.messages.Message` drawn the Discord way: one embed, buttons, files.

Everything the bot sends goes through :func:`render`, so Discord's limits are enforced in one
place: a message that is too long is cut with a visible note instead of being rejected by the
API (a 400 there would lose the whole post). Sections become the embed's description, in order,
with headings as bold lines (fields would reorder them and cap each at 1024 characters), and
code as fenced ``py`` blocks that stay closed however they are cut.

Mentions are disabled on everything (``AllowedMentions.none()``): names, pack text and snippet
output are shown, never pinged. The one exception is a scheduled question's ``Message.mention``
(a role an admin chose): the adapter resolves it with :func:`mention_target` and allows exactly
that role (or user) to be pinged, in the message content, where Discord pings (not the embed).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import discord

from bot.adapters.discord.components import StudyButton
from bot.core.messages import (
    Button,
    ButtonStyle,
    Message,
    Section,
    Tone,
    defuse_fences,
    escape_markup,
)
from bot.core.uploads import DISCORD, fit_attachments
from bot.log import get_logger

__all__ = [
    "BUTTONS_PER_ROW",
    "BUTTON_LIMIT",
    "CONTENT_LIMIT",
    "DESCRIPTION_LIMIT",
    "EMBED_TOTAL_LIMIT",
    "FOOTER_LIMIT",
    "TITLE_LIMIT",
    "TRUNCATED_NOTE",
    "Rendered",
    "code_block",
    "fit_blocks",
    "mention_target",
    "render",
    "thread_name",
    "truncate",
]

log = get_logger(__name__)

# Discord's documented limits (https://discord.com/developers/docs/resources/message#embed-limits).
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FOOTER_LIMIT = 2048
EMBED_TOTAL_LIMIT = 6000
BUTTONS_PER_ROW = 5
BUTTON_LIMIT = 25  # five action rows of five
LABEL_LIMIT = 80
CONTENT_LIMIT = 2000  # message content

TRUNCATED_NOTE = "… (truncated: too long for Discord)"
_LANGUAGES = {"python": "py", "python3": "py", "text": "", "plain": ""}
_COLOURS = {
    Tone.QUESTION: discord.Colour.blurple(),
    Tone.INFO: discord.Colour.dark_grey(),
    Tone.SUCCESS: discord.Colour.green(),
    Tone.WARNING: discord.Colour.gold(),
    Tone.ERROR: discord.Colour.red(),
}
_STYLES = {
    ButtonStyle.PRIMARY: discord.ButtonStyle.primary,
    ButtonStyle.SECONDARY: discord.ButtonStyle.secondary,
    ButtonStyle.SUCCESS: discord.ButtonStyle.success,
    ButtonStyle.DANGER: discord.ButtonStyle.danger,
}


@dataclass(frozen=True, slots=True)
class _Block:
    """One piece of the description: prose, or code that must stay inside its fence."""

    text: str
    language: str | None = None  # set for code
    heading: bool = False  # a bold heading line: the next block follows on the next line

    def render(self) -> str:
        if self.language is None:
            return self.text
        return code_block(self.text, self.language)

    def cut(self, room: int) -> str | None:
        """This block cut to at most ``room`` characters, or None if nothing useful fits."""
        if room <= 0 or self.heading:
            return None  # a heading without its text says nothing
        if self.language is None:
            cut = self.text[:room].rstrip()
            return cut or None
        overhead = len(code_block("", self.language))
        if room - overhead < 8:
            return None
        return code_block(self.text[: room - overhead].rstrip("\n"), self.language)


@dataclass(slots=True)
class Rendered:
    """What a Discord send or edit needs; build a fresh one per call (files are streams)."""

    embed: discord.Embed | None
    view: discord.ui.View | None
    files: list[discord.File] = field(default_factory=list)
    ephemeral: bool = False
    content: str | None = None
    allowed_mentions: discord.AllowedMentions = field(default_factory=discord.AllowedMentions.none)

    def with_mention(self, target: tuple[str, discord.AllowedMentions] | None) -> Rendered:
        """Put a resolved mention in the content and allow exactly that ping."""
        if target is not None:
            self.content, self.allowed_mentions = target
        return self

    def send_kwargs(self) -> dict[str, Any]:
        """For ``channel.send``, ``response.send_message`` and ``followup.send``.

        ``view`` is left out when there are no buttons: discord.py wants MISSING, not None.
        """
        kwargs: dict[str, Any] = {"allowed_mentions": self.allowed_mentions}
        if self.content is not None:
            kwargs["content"] = self.content
        if self.embed is not None:
            kwargs["embed"] = self.embed
        if self.view is not None:
            kwargs["view"] = self.view
        if self.files:
            kwargs["files"] = self.files
        return kwargs

    def edit_kwargs(self) -> dict[str, Any]:
        """For ``message.edit`` / ``response.edit_message``: replaces everything, buttons too.

        ``view=None`` removes old buttons (a closed question must not look clickable), and
        ``attachments`` replaces the old files.
        """
        return {
            "content": self.content,
            "embed": self.embed,
            "view": self.view,
            "attachments": self.files,
            "allowed_mentions": self.allowed_mentions,
        }


def render(message: Message) -> Rendered:
    """The Discord form of ``message``; never raises for size, it truncates with a note, and
    files that Discord would refuse (and with them the whole reply) are left out and named."""
    message = fit_attachments(message, DISCORD)
    buttons = list(message.buttons)
    notes: list[str] = []
    if len(buttons) > BUTTON_LIMIT:
        hidden = len(buttons) - BUTTON_LIMIT
        log.warning("message for post %s has %d buttons; showing 25", message.post_id, len(buttons))
        notes.append(f"… {hidden} more button{'s' if hidden != 1 else ''} not shown")
        buttons = buttons[:BUTTON_LIMIT]
    title = truncate(message.title, TITLE_LIMIT) if message.title else None
    footer = truncate(message.footer, FOOTER_LIMIT) if message.footer else None
    room = EMBED_TOTAL_LIMIT - len(title or "") - len(footer or "")
    blocks = _blocks(message.sections)
    if message.byline is not None:  # a mention in an embed shows the member and never pings
        who = message.byline
        line = f"Suggested by <@{who.member}>" if who.member.isdigit() else escape_markup(who.text)
        blocks.append(_Block(f"✍️ {line}"))
    blocks.extend(_Block(note) for note in notes)
    description = fit_blocks(blocks, min(DESCRIPTION_LIMIT, room))
    embed: discord.Embed | None = None
    content: str | None = None
    if title or description or footer:
        embed = discord.Embed(
            title=title,
            description=description or None,
            colour=_COLOURS.get(message.tone, discord.Colour.dark_grey()),
        )
        if footer:
            embed.set_footer(text=footer)
    elif not message.attachments and not message.mention:
        content = "…"  # Discord refuses a message with nothing in it
    if message.mention:
        content = truncate(message.mention, CONTENT_LIMIT)  # shown; pings only once resolved
    files = [
        discord.File(io.BytesIO(a.content), filename=a.filename, description=a.description or None)
        for a in message.attachments
    ]
    picture = next((a for a in message.attachments if a.is_image), None)
    if embed is not None and picture is not None:
        embed.set_image(url=f"attachment://{picture.filename}")  # shown inside the embed
    return Rendered(
        embed=embed,
        view=_view(buttons) if buttons else None,
        files=files,
        ephemeral=message.ephemeral,
        content=content,
    )


_ROLE_MENTION = re.compile(r"<@&([0-9]{1,20})>")


def mention_target(
    text: str, roles: Iterable[tuple[int, str]], *, everyone_id: int | None = None
) -> tuple[str, discord.AllowedMentions] | None:
    """What ``Message.mention`` pings: a role, by mention, id or name (never a person).

    ``roles`` are the guild's ``(id, name)`` pairs, needed for a name or a bare id; a
    ``<@&id>`` mention (what ``/schedule add``'s role picker stores) is taken as it is, so a
    role created since the cache was filled still works. Returns the content to send and the
    allowed mentions that let exactly that role be pinged, or None when nothing
    matches (the text is then shown and pings nobody). ``@everyone`` never resolves.
    """
    wanted = text.strip()
    by_id = dict(roles)
    role_id: int | None
    if (role := _ROLE_MENTION.fullmatch(wanted)) is not None:
        role_id = int(role[1])
    elif wanted.isdigit():
        role_id = int(wanted) if int(wanted) in by_id else None
    else:
        name = wanted.removeprefix("@").casefold()
        role_id = next((i for i, n in by_id.items() if n.casefold() == name), None)
    if role_id is None or role_id == everyone_id:
        return None
    allowed = discord.AllowedMentions(everyone=False, users=False, roles=[discord.Object(role_id)])
    return f"<@&{role_id}>", allowed


THREAD_NAME_LIMIT = 100


def thread_name(message: Message) -> str:
    """``#12 · What does requires_grad=True do?``: the post and the start of its prompt."""
    prompt = next((s.body for s in message.sections if s.body), message.title or "Question")
    first_line = " ".join(prompt.replace("**", "").split())
    prefix = f"#{message.post_id} · " if message.post_id is not None else ""
    return truncate(prefix + first_line, THREAD_NAME_LIMIT)


def _blocks(sections: Sequence[Section]) -> list[_Block]:
    blocks: list[_Block] = []
    for section in sections:
        if section.heading:
            blocks.append(_Block(f"**{section.heading}**", heading=True))
        if section.body:
            blocks.append(_Block(section.body))
        if section.code is not None:
            blocks.append(_Block(section.code, _LANGUAGES.get(section.language, section.language)))
    return blocks


def fit_blocks(blocks: Sequence[_Block], limit: int) -> str:
    """Join blocks with blank lines; if they overflow ``limit``, cut and say so.

    A bold heading line is followed by a single newline, so it stays with its text. When the
    whole does not fit, the blocks are fitted into ``limit`` minus the note, the first block
    that overflows is cut (a code block is re-fenced, so an open fence cannot swallow the note),
    and the note ends the text.
    """
    rendered = [block.render() for block in blocks]
    whole = "".join(_separator(blocks, i) + text if i else text for i, text in enumerate(rendered))
    if len(whole) <= limit:
        return whole
    note = TRUNCATED_NOTE
    budget = limit - len(note) - 1  # the newline before the note
    parts: list[str] = []
    used = 0
    for index, (block, text) in enumerate(zip(blocks, rendered, strict=True)):
        sep = _separator(blocks, index) if parts else ""
        if used + len(sep) + len(text) <= budget:
            parts.append(sep + text)
            used += len(sep) + len(text)
            continue
        cut = block.cut(budget - used - len(sep))
        if cut is not None:
            parts.append(sep + cut)
        elif parts and blocks[index - 1].heading:
            parts.pop()  # a heading whose text did not fit says nothing
        break
    body = "".join(parts)
    return f"{body}\n{note}" if body else note[:limit]


def _separator(blocks: Sequence[_Block], index: int) -> str:
    return "\n" if blocks[index - 1].heading else "\n\n"


def code_block(code: str, language: str = "py") -> str:
    """A fenced block whose content cannot close the fence early."""
    safe = defuse_fences(code.rstrip("\n"))
    return f"```{language}\n{safe}\n```"


def truncate(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in "…" when something was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _view(buttons: Sequence[Button]) -> discord.ui.View:
    """A persistent view (no timeout): every button is a :class:`StudyButton`."""
    view = discord.ui.View(timeout=None)
    for index, button in enumerate(buttons):
        view.add_item(
            StudyButton(
                button.custom_id,
                label=truncate(button.label, LABEL_LIMIT),
                style=_STYLES.get(button.style, discord.ButtonStyle.secondary),
                row=index // BUTTONS_PER_ROW,
            )
        )
    return view
