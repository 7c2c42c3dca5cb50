"""Untrusted text made safe to keep and to show: one normaliser for every boundary.

Members type text (reasons, names, questions), and snippets print text and name files. Before
any of it is stored or shown it goes through :func:`clean_text` once, where it enters the bot:

- **Storable on every engine.** NUL is refused by PostgreSQL's ``text`` and a lone surrogate
  (``"\\ud800"``) cannot be encoded as UTF-8 by SQLite's driver: both become U+FFFD.
- **Inert when shown.** C0 and C1 control characters (ESC starts terminal sequences), DEL, and
  the bidi controls that make text display in another order than it is stored (the
  right-to-left override hides a file's real extension) become visible escapes such as
  ``\\x1b``. Tab and newline stay: they are how text is laid out.
- **Bounded.** A limit cuts the text, with ``…``, so a 100 kB value never reaches a reply.

Markup (Markdown links, mentions) is the renderer's business, per platform: see
``bot.core.messages.escape_markup`` and ``neutralise``.

Standard library only: the sandbox, which imports nothing of the bot's core, uses it too.
"""

from __future__ import annotations

import os
import re
import unicodedata

__all__ = [
    "clean_text",
    "clip",
    "id_problem",
    "short_echoes",
    "shown_path",
    "spreadsheet_cell",
    "without_pictographs",
]

# C0 but tab and newline, DEL and C1, bidi embeddings/overrides/isolates and the marks that
# flip the order text is displayed in (LRM/RLM, ALM).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NUL_OR_SURROGATE = re.compile("[\x00\ud800-\udfff]")


_NOT_IN_AN_ID = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def id_problem(value: str, what: str) -> str | None:
    """Why ``value`` cannot be a platform id (a member's, a channel's, a workspace's), in words
    naming ``what`` it is and the first bad character; ``None`` when it can be.

    Ids are compared and stored as they are, never cleaned (a cleaned id would be another
    member): so one with NUL (which PostgreSQL's ``text`` refuses), a lone surrogate (which
    SQLite's driver cannot encode) or any other control character is refused where it enters,
    instead of failing a later command with "something went wrong".
    """
    found = _NOT_IN_AN_ID.search(value)
    if found is None:
        return None
    code = ord(found[0])
    char = "NUL" if code == 0 else f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
    return (
        f"{what} holds a control character ({char} at position {found.start() + 1}); "
        "ids and names are plain text"
    )


def _escaped(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, ending in ``…`` when cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)] + "…"


def clean_text(text: str, limit: int | None = None, *, keep_controls: bool = False) -> str:
    """``text`` storable on every engine and inert on every screen, cut to ``limit``.

    NUL and lone surrogates become U+FFFD; other control and bidi characters become visible
    escapes (``keep_controls`` leaves them, for text that only ever lands in a file); a
    ``"\\r\\n"`` line ending becomes ``"\\n"``.
    """
    text = _NUL_OR_SURROGATE.sub("\ufffd", text)
    if not keep_controls:
        text = _UNSAFE.sub(_escaped, text.replace("\r\n", "\n"))
    return text if limit is None else clip(text, limit)


#: A quoted value or an unbroken run of characters longer than this is an echo, not prose.
ECHO_CHARS = 200
_LONG_SPAN = re.compile(rf"`[^`\n]{{{ECHO_CHARS + 1},}}`")
_LONG_RUN = re.compile(rf"[^\s`]{{{ECHO_CHARS + 1},}}")
_CLOSERS = "`'\")]"


def short_echoes(text: str, limit: int = 1500) -> str:
    """A refusal that quotes what a member typed, with the quote cut to a readable length.

    Every error message passes through here (``StudyError``, usage errors), so a 100 kB value
    is echoed as its first :data:`ECHO_CHARS` characters and ``…``, however the message quotes
    it: in a code span, as a ``repr``, or bare. No word of prose is that long.
    """
    text = _LONG_SPAN.sub(lambda m: m[0][: ECHO_CHARS - 1] + "…`", text)

    def cut(match: re.Match[str]) -> str:
        run = match[0]
        return run[: ECHO_CHARS - 1] + "…" + (run[-1] if run[-1] in _CLOSERS else "")

    return clip(_LONG_RUN.sub(cut, text), limit)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text, as OWASP's CSV-injection guidance says.

    Text that starts with ``= + - @``, a tab or a carriage return is run as a formula by
    Excel, LibreOffice and Google Sheets (``=HYPERLINK(...)`` in a display name); a leading
    ``'`` makes it plain text. Numbers are returned as they are, so the number columns stay
    numeric.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def without_pictographs(text: str) -> str:
    """``text`` without the chat's pictographs (``✅``, ``🗑️``): symbols of Unicode's "So"
    category and the emoji variation selector. Where a reply is read as text (the audit log,
    the web page) they are noise, and not every font has them."""
    return "".join(c for c in text if unicodedata.category(c) != "So" and c != "\ufe0f")


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a message shows it: relative to the current directory when it is inside it
    (``questions/x.yaml``, not the host's ``/home/...``), so every message names the user's own
    files as they would type them; a path elsewhere stays as it is."""
    text = os.fspath(path)
    try:
        absolute = os.path.abspath(text)
        here = os.getcwd()
    except OSError:  # the current directory was removed
        return text
    if os.path.commonpath([absolute, here]) != here:
        return text
    return os.path.relpath(absolute, here)
