"""The services' words, said as a web page says them.

A service answers chat and the page alike, and its words name chat's commands and options
(``/schedule add 09:00 …``, ``--cron``, ```pack enable X``` turns it back on). On the page the
same fact sits next to the field or the button that acts on it, so the chat's example is
dropped and an option or a placeholder is named by its field's label.
"""

from __future__ import annotations

import re

from bot.core.errors import BadInput, StudyError

__all__ = ["FIELD_LABELS", "pack_switched", "web_error"]

#: The schedule form's labels, by the option or placeholder chat uses for each field.
FIELD_LABELS = {
    "time": "Time",
    "timezone": "Timezone",
    "tz": "Timezone",
    "days": "Days",
    "cron": "Cron",
    "pack": "Pack",
    "difficulty": "Difficulty",
    "tag": "Tags",
    "tags": "Tags",
    "kinds": "Kinds",
    "window": "Answer window",
    "mention": "Notify",
}
_OPTION = re.compile(r"(?:\ban? )?(?<![\w-])--([a-z]+)\b(?: expression)?")
_PLACEHOLDER = re.compile(r"\b(TIME|TZ|DAYS|PACK)\b")
_EXAMPLE = re.compile(r"\s*\(example: [^)]*\)\s*$")


def _field(name: str) -> str:
    label = FIELD_LABELS.get(name.lower())
    return f"the {label} field" if label else name


def web_error(exc: StudyError) -> str:
    """An error for a form: without chat's example command, options named by their field."""
    text = _EXAMPLE.sub("", str(exc))
    if isinstance(exc, BadInput) and exc.field and text.startswith(f"{exc.field}: "):
        text = text[len(exc.field) + 2 :]  # the form shows it beside that field already
    text = _OPTION.sub(lambda m: _field(m[1]), text)
    text = _PLACEHOLDER.sub(lambda m: _field(m[1]), text)
    return text[:1].upper() + text[1:]


_COMMAND = re.compile(r"`/[^`]+`")
_QUIZ = "`/quiz`"


def pack_switched(text: str) -> str:
    """A pack switch's reply for the page: "quizzes" for chat's `/quiz`, and without the
    clause that names the chat command undoing it (the page's button beside it does that)."""
    kept = []
    for said in text.splitlines():
        line = said.replace(_QUIZ, "quizzes")
        clauses = [c for c in re.split(r"(?<=[.;])\s+", line) if not _COMMAND.search(c)]
        if clauses:
            kept.append(
                " ".join(clauses).rstrip(";").rstrip() + ("" if clauses[-1].endswith(".") else ".")
            )
    return "\n".join(kept)
