"""Platform-neutral outbound messages: what the core says, not how a platform draws it.

A :class:`Message` is a title, a few sections (prose or code), buttons and attachments, and an
``ephemeral`` flag for private replies. Adapters render it as a Discord embed with components,
as Slack Block Kit, or as console text. Prose uses a tiny markup both platforms understand:
``**bold**`` and ``code`` spans; adapters convert ``**`` for Slack's ``*``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field, replace

from bot.text import clean_text

__all__ = [
    "BOLD",
    "Action",
    "Attachment",
    "Button",
    "ButtonStyle",
    "Byline",
    "Message",
    "Section",
    "Tone",
    "defuse_fences",
    "escape_markup",
    "neutralise",
    "parse_action",
    "terminal_safe",
    "unescape_markup",
]


class Tone(enum.StrEnum):
    """Lets adapters pick a colour or an icon; it never changes meaning."""

    QUESTION = "question"
    INFO = "info"
    SUCCESS = "success"
    WARNING = "warning"
    ERROR = "error"


class ButtonStyle(enum.StrEnum):
    PRIMARY = "primary"
    SECONDARY = "secondary"
    SUCCESS = "success"
    DANGER = "danger"


class Action(enum.StrEnum):
    """What a button does; adapters route a click back to the matching service call."""

    ANSWER = "answer"  # value: a choice letter, or knew/forgot
    SHOW = "show"  # reveal a flashcard's back (privately) before self-grading
    HINT = "hint"  # value: the index of the next hint
    # A private /review: the "post" slot carries the question's id (0: none), the value is
    # ``<what>-<reviewed in this session>-<the card's review count>`` (see bot.core.replies).
    REVIEW = "review"
    # An exercise's "Solve it": opens the editor (a modal; the console's /solve #ID).
    SOLVE = "solve"
    # "Try it": the question's snippet (value ``code``) or a choice's code (its letter) in an
    # editable /run; offered once the member answered or the question closed.
    TRY = "try"
    # A typed question's "Answer": opens a text box (a modal; the console's /answer #ID TEXT).
    TYPE = "type"


@dataclass(frozen=True, slots=True)
class Button:
    action: Action
    post_id: int
    value: str
    label: str
    style: ButtonStyle = ButtonStyle.SECONDARY

    @property
    def custom_id(self) -> str:
        """``answer:12:B``: everything a click needs, so buttons keep working after a restart."""
        return f"{self.action.value}:{self.post_id}:{self.value}"


#: The shape of :attr:`Button.custom_id`, named groups included: adapters build their own
#: routing patterns from it (Discord prefixes it, Slack uses it as the action id).
ACTION_ID_PATTERN = (
    r"(?P<action>answer|show|hint|review|solve|try|type)"
    r":(?P<post>[0-9]{1,18}):(?P<value>[A-Za-z0-9_-]{1,16})"
)
_ACTION_ID = re.compile(rf"^{ACTION_ID_PATTERN}$")


def parse_action(custom_id: str) -> tuple[Action, int, str] | None:
    """The inverse of :attr:`Button.custom_id`; ``None`` for anything that is not ours."""
    match = _ACTION_ID.match(custom_id)
    if match is None:
        return None
    return Action(match["action"]), int(match["post"]), match["value"]


@dataclass(frozen=True, slots=True)
class Section:
    """A block of prose (``body``), optionally headed, or a code block when ``code`` is set."""

    body: str = ""
    heading: str | None = None
    code: str | None = None
    language: str = "python"


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file to send. ``is_image`` lets a platform show it inline; it is set only for
    pictures the bot drew or the sandbox's manager decoded, never from a name."""

    filename: str
    content: bytes
    description: str = ""
    is_image: bool = False


@dataclass(frozen=True, slots=True)
class Byline:
    """Who a post credits: "Suggested by <member>" on a question a member suggested.

    ``member`` is the platform id, so Discord shows a live mention (in an embed, which never
    pings); ``name`` is what the console and Slack show (a Slack mention would notify the
    author on every post of their question)."""

    member: str
    name: str

    @property
    def text(self) -> str:
        """The byline in plain text: ``Suggested by @name`` (the name neutralised)."""
        return f"Suggested by @{neutralise(self.name)}"


@dataclass(frozen=True, slots=True)
class Message:
    title: str | None = None
    sections: tuple[Section, ...] = ()
    buttons: tuple[Button, ...] = ()
    ephemeral: bool = False
    attachments: tuple[Attachment, ...] = ()
    tone: Tone = Tone.INFO
    footer: str | None = None
    post_id: int | None = None
    question_id: str | None = None
    choices: tuple[str, ...] = field(default=())  # answer labels, for the console's JSON lines
    # A role or user group to notify, as the admin typed it (``@study-group``, ``<@&123>``,
    # ``<!subteam^S123>``): adapters resolve it and put it where their platform pings (outside
    # an embed on Discord, in the text on Slack); plain text shows it first.
    mention: str | None = None
    byline: Byline | None = None  # the author a suggested question credits

    def private(self) -> Message:
        return replace(self, ephemeral=True)

    @classmethod
    def note(cls, text: str, *, tone: Tone = Tone.INFO) -> Message:
        """A short private reply: one section of prose that only the caller sees."""
        return cls(sections=(Section(body=text),), ephemeral=True, tone=tone)

    def plain_text(self) -> str:
        """The whole message as plain text (markup removed): console, notifications, tests."""
        parts: list[str] = []
        if self.mention:
            parts.append(self.mention)
        if self.title:
            parts.append(self.title)
        for section in self.sections:
            block: list[str] = []
            if section.heading:
                block.append(f"{section.heading}:")
            if section.body:
                block.append(unescape_markup(BOLD.sub(r"\1", section.body)))
            if section.code is not None:
                block.append(_indent(section.code))
            parts.append("\n".join(block))
        if self.byline:
            parts.append(self.byline.text)
        if self.buttons:
            parts.append("  ".join(f"[{b.label}]" for b in self.buttons))
        if self.footer:
            parts.append(self.footer)
        return "\n\n".join(part for part in parts if part)


#: ``**bold**`` as Markdown reads it: the stars hug non-space text (``x ** 2`` is not bold).
BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_MARKUP_CHARS = re.compile(r"([\\*_~|`\[\]])")
_ESCAPED = re.compile(r"\\([\\*_~|`\[\]])")


def escape_markup(text: str) -> str:
    """Backslash-escape Markdown in text members wrote (display names): on Discord a name like
    ``[Free Nitro](https://…)`` would otherwise become a link, and ``**`` break the layout."""
    return _MARKUP_CHARS.sub(r"\\\1", text)


def unescape_markup(text: str) -> str:
    """Undo :func:`escape_markup` where there is no Markdown to protect (plain text, Slack)."""
    return _ESCAPED.sub(r"\1", text)


def _indent(code: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in code.rstrip("\n").split("\n"))


# No word boundary after the name: Discord reads `@everyone_3` and `@here3` as mentions too.
_MENTION = re.compile(r"@(everyone|here|channel)|<(@[!&]?|#|!)([^>]*)>", re.IGNORECASE)
_BACKTICK_RUN = re.compile(r"``+")
ZERO_WIDTH_SPACE = "\u200b"


def neutralise(text: str) -> str:
    """Make untrusted text (snippet output, names) unable to ping anyone or break a code block.

    ``@everyone`` / ``@here`` / ``@channel`` get a zero-width space after the ``@``; Discord
    ``<@123>``/``<@&role>``/``<#chan>`` and Slack ``<!channel>``/``<@U123>`` lose their
    brackets' meaning; a triple backtick can no longer close the surrounding fence.
    Control and bidi characters become visible escapes, NUL and lone surrogates U+FFFD
    (:func:`bot.text.clean_text`). Adapters still disable mentions at the API level too.
    """

    def _defuse(match: re.Match[str]) -> str:
        if match[1] is not None:
            return "@" + ZERO_WIDTH_SPACE + match[1]
        return "<" + ZERO_WIDTH_SPACE + match[2] + match[3] + ">"

    return defuse_fences(_MENTION.sub(_defuse, clean_text(text)))


def defuse_fences(text: str) -> str:
    """Text that cannot close (or open) a ``` code fence: no two backticks stay adjacent.

    Every run of two or more gets a zero-width space between each pair, so no run of any
    length (5, 8, 11...) leaves three behind, and none can join a fence the renderer adds.
    """
    return _BACKTICK_RUN.sub(lambda run: ZERO_WIDTH_SPACE.join(run[0]), text)


# C0 controls but tab and newline, DEL and C1 (ESC, CSI, OSC start sequences), and the bidi
# overrides that make a terminal show text in another order than it is.
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Text to print on an operator's terminal: control characters shown escaped (``\\x1b``).

    Members' text (snippet output, names, packs) reaches the console and CLI, and an ESC or
    OSC sequence there could retitle, recolour or rewrite the operator's terminal.
    """
    return _TERMINAL_UNSAFE.sub(_escaped_char, text)


def _escaped_char(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
