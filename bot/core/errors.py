"""Domain errors whose message is safe, and meant, to be shown to the member who caused them.

Adapters catch :class:`StudyError` in one central handler and answer privately with
``str(error)``; anything else is unexpected: logged with context and answered with an apology.
"""

from __future__ import annotations

from bot.text import clean_text, short_echoes

__all__ = [
    "AlreadyAnswered",
    "BadInput",
    "Forbidden",
    "NotFound",
    "PostClosed",
    "RateLimited",
    "StudyError",
    "Unavailable",
    "UsageError",
]

APOLOGY = "Sorry, something went wrong on our side. It has been logged; please try again."


class StudyError(Exception):
    """Base class: the message is written for members, in plain words."""

    def __init__(self, message: str) -> None:
        # Messages quote what members typed: inert, and never a 100 kB echo.
        message = short_echoes(clean_text(message))
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class BadInput(StudyError):
    """The request does not parse or names something that makes no sense here.

    ``field`` names the form field that is wrong when one is (a schedule's ``time``,
    ``timezone``...), so a form can show the message beside it.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class UsageError(BadInput):
    """How to type a command: its usage line, and what was wrong with what was typed.

    The one usage error of every platform (the console, Slack's text commands, the core's
    own checks): it carries its parts, so no code tells a usage error by its text. Shown as
    ``usage: LINE: REASON`` (``usage: LINE`` alone, or the reason alone, when one is missing).
    An empty ``line`` lets the front door fill in the command's own usage.
    """

    def __init__(self, line: str = "", *, reason: str = "") -> None:
        self.line = short_echoes(line)
        self.reason = short_echoes(reason)
        super().__init__(self.shown(self.line))

    def shown(self, fallback: str) -> str:
        """The message, with ``fallback`` as the usage line when this error names none."""
        line = self.line or fallback
        if line and self.reason:
            return f"usage: {line}: {self.reason}"
        return f"usage: {line}" if line else self.reason


class NotFound(StudyError):
    """The post, pack, member or schedule named does not exist (in this workspace)."""


class Forbidden(StudyError):
    """The member may not do this (admin-only commands)."""


class PostClosed(StudyError):
    """The question's answer window has closed."""


class AlreadyAnswered(StudyError):
    """One answer per member per question; the first one counts."""


class RateLimited(StudyError):
    """Too many requests of this kind; the message says when to try again."""


class Unavailable(StudyError):
    """A feature the host cannot provide right now (e.g. no sandbox isolation)."""
