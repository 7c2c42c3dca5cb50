"""Import plain study notes: ``Q:``/``A:`` pairs, and ``term - definition`` lines.

These are what most people have: notes typed while reading, not a spreadsheet or a cheat
sheet. Before this importer they failed with "cannot tell the format", and ``--format
cheatsheet`` made each question a prompt whose hint was the next question.

- ``Q: ...`` (or ``Question:``) starts a card and ``A: ...`` (or ``Answer:``) gives its answer;
  lines after either continue it, until a blank line or the next ``Q:``. Case does not matter.
- A file whose lines are ``term - definition`` (a spaced hyphen, en dash or em dash, or a
  colon) gives one flashcard per line.

Every card is a medium flashcard (the notes say nothing about levels); a question without an
answer, or an answer without a question, is reported at its line and not imported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.questions.importers.base import ImportResult, PackBuilder, clean_field

__all__ = ["import_notes", "looks_like_notes"]

_Q = re.compile(r"^\s*(?:q|question)\s*[:.)]\s*(.*)$", re.IGNORECASE)
_A = re.compile(r"^\s*(?:a|answer)\s*[:.)]\s*(.*)$", re.IGNORECASE)
_TERM = re.compile(r"^\s*(?P<term>[^:\s][^:]{0,200}?)\s+[-\u2013\u2014]\s+(?P<definition>\S.*)$")
_TERM_SHARE = 0.8  # of non-blank lines, for a file to count as term-definition lines
_LEVEL = "medium"


def looks_like_notes(lines: Sequence[str]) -> str | None:
    """Why these lines are study notes, or ``None``."""
    questions = sum(1 for line in lines if _Q.match(line))
    answers = sum(1 for line in lines if _A.match(line))
    if questions and answers:
        return f"{questions} `Q:` and {answers} `A:` lines"
    filled = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    terms = sum(1 for line in filled if _TERM.match(line))
    if len(filled) >= 2 and terms >= _TERM_SHARE * len(filled):
        return f"{terms} of {len(filled)} lines are `term - definition`"
    return None


def import_notes(text: str, result: ImportResult) -> None:
    """Parse notes into flashcards in ``result``."""
    builder = PackBuilder(result)
    lines = text.splitlines()
    if any(_Q.match(line) for line in lines):
        count = _question_answer_pairs(builder, lines)
    else:
        count = _term_lines(builder, lines)
    if count:
        builder.warn(1, "difficulty", f"notes have no levels; {count} card(s) imported as {_LEVEL}")


def _question_answer_pairs(builder: PackBuilder, lines: Sequence[str]) -> int:
    count = 0
    question: list[str] = []
    answer: list[str] = []
    start = 0
    field: list[str] | None = None

    def flush() -> None:
        nonlocal count
        if not question:
            return
        if not answer:
            builder.problem(start, "answer", "this question has no `A:` line; it was not imported")
        elif _card(builder, start, " ".join(question), " ".join(answer)):
            count += 1

    for number, line in enumerate(lines, start=1):
        if q := _Q.match(line):
            flush()
            question, answer, start = [q[1].strip()], [], number
            field = question
        elif a := _A.match(line):
            if not question:
                builder.problem(number, "question", "an `A:` line with no `Q:` before it")
                field = None
                continue
            answer = [a[1].strip()]
            field = answer
        elif not line.strip():
            field = None  # a blank line ends the question or answer being continued
        elif field is not None:
            field.append(line.strip())
    flush()
    return count


def _term_lines(builder: PackBuilder, lines: Sequence[str]) -> int:
    count = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _TERM.match(line)
        if match is None:
            builder.problem(number, "", "not a `term - definition` line; it was not imported")
            continue
        if _card(builder, number, match["term"], match["definition"]):
            count += 1
    return count


def _card(builder: PackBuilder, line: int, prompt: str, answer: str) -> bool:
    draft = builder.draft("flashcard", line)
    return draft.commit(
        {"difficulty": _LEVEL, "prompt": clean_field(prompt), "answer": clean_field(answer)}
    )
