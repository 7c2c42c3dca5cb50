"""Input checks done before anything is sent to a jail (cheap, and the same for every caller)."""

from __future__ import annotations

from bot.sandbox.errors import SnippetRejected

__all__ = ["Snippet", "validate_snippet"]


class Snippet(str):
    """Text that :func:`validate_snippet` accepted: validated once, where it entered.

    A caller that validated a member's code (the bot's ``/run``, with its own message for a
    refusal) passes the :class:`Snippet` on, and the sandbox client takes it as it is instead
    of checking it a second time; any other ``str`` is checked on the way in.
    """

    __slots__ = ()


def validate_snippet(code: str | bytes, max_bytes: int) -> Snippet:
    """Return the snippet as text, or raise :class:`SnippetRejected` with a one-line reason.

    The limit is on the UTF-8 encoding, since that is what crosses the pipes and what a chat
    platform counts. NUL bytes are refused because ``compile()`` refuses them with a confusing
    message and because they are a common way to smuggle past log and display filters.
    """
    if isinstance(code, bytes):
        raw = code
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnippetRejected(f"snippet is not valid UTF-8 (byte {exc.start})") from None
    else:
        text = code
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise SnippetRejected(f"snippet is not valid UTF-8 (character {exc.start})") from None
    if len(raw) > max_bytes:
        raise SnippetRejected(f"snippet is {len(raw)} bytes; the limit is {max_bytes}")
    if "\x00" in text:
        raise SnippetRejected("snippet contains NUL bytes")
    return Snippet(text)
