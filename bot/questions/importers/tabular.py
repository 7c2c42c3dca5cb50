"""Import CSV/TSV: Quizlet exports and spreadsheets.

Two row shapes, told apart per row by how many cells are filled in:

* ``term, definition`` -> a flashcard (Quizlet's export is exactly this, tab-separated);
* ``question, choice1, ..., choiceN, correct`` -> a multiple-choice item, where ``correct``
  is a letter (``B``), a 1-based index (``2``) or the text of one of the choices;
* with a header naming an ``accept`` column: ``question, accept[, wrong]`` -> a typed item,
  the accepted answers (and wrong examples) separated by ``|``; all one number, a number key.

The delimiter is sniffed (tab, comma, semicolon or pipe) unless the format forces one. When
no delimiter splits (nearly) every row, the one that splits the most rows is used, and every
row it does not split is reported. A header row is optional; it is recognised by its column
names (``term``/``question``/``front``, ``definition``/``answer``/``back``,
``choice1``/``option_a``/..., ``correct``) and may add ``difficulty``, ``tags`` and
``explanation`` columns. Rows that fit neither shape are reported with their line number,
and so is a quote that is never closed (it would swallow the lines after it into one cell).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from bot.questions.importers.base import (
    DIFFICULTY_WORDS,
    Draft,
    ImportResult,
    PackBuilder,
    clean_field,
    tag_slug,
)
from bot.questions.schema import CHOICE_LETTERS, MAX_CHOICES, Difficulty
from bot.questions.typed import parse_number

__all__ = ["import_tabular", "sniff_delimiter"]

DEFAULT_DIFFICULTY = Difficulty.MEDIUM
_DELIMITERS = "\t;,|"  # in order of preference
_MIN_SPLIT = 0.8
_PROMPT_NAMES = {"term", "question", "prompt", "front", "word", "q"}
_ANSWER_NAMES = {"definition", "answer", "back", "meaning", "a"}
_CORRECT_NAMES = {"correct", "correct_answer", "correct answer", "right", "key", "solution"}
_CHOICE_NAME = re.compile(r"^(?:choice|option|answer|alternative)[\s_]*(?:[1-5]|[a-e])$", re.I)
_EXTRA_NAMES = {"difficulty", "level", "tags", "tag", "explanation", "why", "category"}
_ACCEPT_NAMES = {"accept", "accepted", "typed", "typed answer", "typed_answer", "type in"}
_WRONG_NAMES = {"wrong", "wrong answers", "wrong_answers", "not"}


def sniff_delimiter(text: str, prefer: str | None = None) -> str | None:
    """The delimiter of a table, or ``None`` when the text does not look like one.

    A delimiter qualifies when it splits at least 4 in 5 of the first rows into two or more
    filled cells (exports have the odd bad row, and those are reported, not a reason to give
    up); among those, the one that splits the most rows wins, then the most regular one,
    then ``prefer`` (a comma for a .csv file), then tab, semicolon, comma, pipe in that order
    (a TSV's definitions often hold commas).
    """
    sample = "\n".join(text.splitlines()[:50])
    best: tuple[float, float, bool, int] | None = None
    chosen: str | None = None
    for priority, delimiter in enumerate(reversed(_DELIMITERS)):
        rows = [
            len([cell for cell in row if cell.strip()])
            for row in csv.reader(io.StringIO(sample), delimiter=delimiter)
            if any(cell.strip() for cell in row)
        ]
        if not rows:
            return None
        split = sum(1 for count in rows if count >= 2) / len(rows)
        if split < _MIN_SPLIT:
            continue
        regular = max(rows.count(count) for count in set(rows)) / len(rows)
        score = (split, regular, delimiter == prefer, priority)
        if best is None or score > best:
            best, chosen = score, delimiter
    return chosen


def _likeliest_delimiter(text: str, prefer: str | None) -> tuple[str, int, int] | None:
    """When no delimiter qualifies: the one splitting the most rows into two or more cells.

    Ties go to ``prefer`` (comma for a .csv), then to the usual order. Returns the delimiter,
    how many rows it splits and how many rows there are; ``None`` when none splits any row.
    """
    sample = "\n".join(text.splitlines()[:500])
    best: tuple[int, bool, int] | None = None
    found: tuple[str, int, int] | None = None
    for priority, delimiter in enumerate(reversed(_DELIMITERS)):
        rows = [
            len([cell for cell in row if cell.strip()])
            for row in csv.reader(io.StringIO(sample), delimiter=delimiter)
            if any(cell.strip() for cell in row)
        ]
        split = sum(1 for count in rows if count >= 2)
        score = (split, delimiter == prefer, priority)
        if split and (best is None or score > best):
            best, found = score, (delimiter, split, len(rows))
    return found


@dataclass(frozen=True, slots=True)
class _Columns:
    """Where things are, from a header row (``None`` fields: not in the table)."""

    prompt: int
    answer: int | None
    choices: tuple[int, ...]
    correct: int | None
    difficulty: int | None
    tags: int | None
    explanation: int | None
    width: int
    accept: int | None = None  # typed answers (``a|b``): the row is a typed item
    wrong: int | None = None  # its wrong examples (``x|y``), which the key must refuse
    """How many columns the header names: a row with more filled cells was split wrongly."""


def import_tabular(
    text: str, result: ImportResult, *, delimiter: str | None = None, prefer: str | None = None
) -> None:
    """Parse a CSV/TSV table into ``result``.

    ``delimiter`` forces one (``--format csv`` or ``tsv``); otherwise it is sniffed, and when
    that is unsure the likeliest one is used, ``prefer`` winning a tie.
    """
    builder = PackBuilder(result)
    found = delimiter or sniff_delimiter(text, prefer)
    if found is None:
        likeliest = _likeliest_delimiter(text, prefer)
        if likeliest is None:
            builder.problem(
                1,
                "",
                "cannot find a delimiter: no row has two cells separated by a comma, tab, "
                "semicolon or pipe; expected rows of 'term<TAB>definition' or "
                "'question,choice1,...,correct'",
            )
            return
        found, split, rows = likeliest
        builder.warn(
            1,
            "",
            f"the delimiter is unclear: {_describe(found)} splits {split} of the first {rows} "
            "rows into cells, more than any other, so the file was read as "
            f"{_describe(found)}-separated; each row that does not fit is reported",
        )
    columns: _Columns | None = None
    first = True
    defaulted = 0
    for row_line, cells in _rows(builder, text, found):
        if not any(cells):
            continue
        if first:
            first = False
            columns = _header(cells)
            if columns is not None:
                continue
        if _row(builder, row_line, cells, columns):
            defaulted += 1
    if defaulted:
        builder.warn(
            1,
            "difficulty",
            f"{defaulted} item(s) have no difficulty column; imported as "
            f"{DEFAULT_DIFFICULTY.value}",
        )


def _rows(builder: PackBuilder, text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Each row with the line it starts on, its cells cleaned.

    Quotes are read strictly, so that a quote that is never closed (or is closed lines later
    and followed by more text) does not silently swallow the lines after it into one cell:
    that row is reported, and reading goes on from the next line.
    """
    # Physical lines as an editor counts them (\n, \r\n, \r): str.splitlines would also cut
    # at \x0b, \x0c and U+2028, which spreadsheets use for line breaks inside a cell.
    lines = io.StringIO(text, newline="").readlines()
    start = 0  # index of the first line the current reader was given
    while start < len(lines):
        reader = csv.reader(lines[start:], delimiter=delimiter, strict=True)
        row_start = start  # index of the current row's first line
        try:
            for row in reader:
                yield row_start + 1, [clean_field(cell) for cell in row]
                row_start = start + reader.line_num
            return
        except csv.Error as exc:
            end = start + reader.line_num
            if end == row_start + 1:
                # A quote problem within one line: read that line leniently, with a warning.
                (row,) = list(csv.reader([lines[row_start]], delimiter=delimiter)) or [[]]
                builder.warn(
                    row_start + 1,
                    "",
                    f"a quoted cell has text after its closing quote ({exc}); read the row as "
                    f"{len(row)} cell(s), check it",
                )
                yield row_start + 1, [clean_field(cell) for cell in row]
            else:
                builder.problem(row_start + 1, "", _quote_problem(str(exc), row_start + 1, end))
            start = row_start + 1


def _quote_problem(error: str, line: int, end: int) -> str:
    if "end of data" in error:
        what = (
            f"an opening quote is never closed, so lines {line}-{end} would be one cell; "
            "this row was not imported"
        )
    else:
        what = (
            f"a quote opened on this line is only closed on line {end}, and then {error}, so "
            f"lines {line}-{end} would be one cell; this row was not imported"
        )
    return (
        f"{what}, the lines after it were read as rows (close the quote, or write a quote "
        'inside a quoted cell as "")'
    )


def _describe(delimiter: str) -> str:
    return {"\t": "tab", ",": "comma", ";": "semicolon", "|": "pipe"}[delimiter]


def _header(cells: Sequence[str]) -> _Columns | None:
    names = [cell.strip().lower() for cell in cells]
    known = sum(
        1
        for name in names
        if name
        in _PROMPT_NAMES
        | _ANSWER_NAMES
        | _CORRECT_NAMES
        | _EXTRA_NAMES
        | _ACCEPT_NAMES
        | _WRONG_NAMES
        or _CHOICE_NAME.match(name)
    )
    if known < 2 or names[0] not in _PROMPT_NAMES:
        return None

    def find(options: set[str]) -> int | None:
        return next((i for i, name in enumerate(names) if name in options), None)

    choices = tuple(i for i, name in enumerate(names) if _CHOICE_NAME.match(name))
    # With choice columns, an "answer" column names the correct choice; "definition" (or
    # "back") still makes a row without choices a flashcard.
    answer = find(_ANSWER_NAMES - {"answer"}) if choices else find(_ANSWER_NAMES)
    return _Columns(
        prompt=0,
        answer=answer,
        choices=choices,
        correct=find(_CORRECT_NAMES | ({"answer"} if choices else set())),
        difficulty=find({"difficulty", "level"}),
        tags=find({"tags", "tag", "category"}),
        explanation=find({"explanation", "why"}),
        width=len(names),
        accept=find(_ACCEPT_NAMES),
        wrong=find(_WRONG_NAMES),
    )


def _row(builder: PackBuilder, line: int, cells: list[str], columns: _Columns | None) -> bool:
    """Build one item from a row; returns whether it was kept with a defaulted difficulty."""
    if columns is None:
        filled = list(cells)
        while filled and not filled[-1]:
            filled.pop()  # spreadsheets pad short rows with empty cells
        if len(filled) == 2:
            return _flashcard(builder, line, filled[0], filled[1], None, None)
        if len(filled) >= 4:
            return _multiple_choice(
                builder, line, filled[0], filled[1:-1], filled[-1], None, None, None
            )
        builder.problem(
            line,
            "",
            f"a row with {len(filled)} filled cell(s): expected 2 (term, definition) or at "
            f"least 4 (question, two or more choices, correct)",
        )
        return False

    used = len(cells)
    while used and not cells[used - 1]:
        used -= 1  # spreadsheets pad short rows with empty cells
    if used > columns.width:
        builder.problem(
            line,
            "",
            f"this row has {used} cells but the header names {columns.width} columns; a "
            'delimiter inside a cell needs the cell quoted (e.g. "np.zeros((2,3)).shape"); '
            "the row was not imported",
        )
        return False

    def cell(index: int | None) -> str | None:
        if index is None or index >= len(cells):
            return None
        return cells[index] or None

    difficulty, tags = cell(columns.difficulty), cell(columns.tags)
    if (accepted := cell(columns.accept)) is not None:
        return _typed(
            builder, line, cells[0], accepted, cell(columns.wrong), difficulty, tags,
            cell(columns.explanation),
        )  # fmt: skip
    choices = [c for c in (cell(i) for i in columns.choices) if c]
    answer = cell(columns.answer)
    if choices or (columns.choices and columns.answer is None):
        correct = cell(columns.correct)
        if not cells[0]:
            builder.problem(line, "question", "the question cell is empty; row not imported")
            return False
        if len(choices) < 2:
            builder.problem(
                line,
                "choices",
                f"{len(choices)} choice cell(s) filled in; a multiple-choice row needs at least "
                "2 and a correct answer; this row was not imported",
            )
            return False
        if answer is not None:
            builder.warn(
                line,
                "definition",
                f"this row has choices and a definition; read as multiple choice, so the "
                f"definition {answer!r} is not used",
            )
        if correct is None:
            builder.problem(line, "correct", "this row has choices but no correct answer")
            return False
        return _multiple_choice(
            builder, line, cells[0], choices, correct, difficulty, tags, cell(columns.explanation)
        )
    if answer is None:
        neither = "neither a definition nor choices" if columns.choices else "no definition/answer"
        builder.problem(line, "definition", f"this row has {neither}; it was not imported")
        return False
    return _flashcard(builder, line, cells[0], answer, difficulty, tags)


def _meta(draft: Draft, difficulty: str | None, tags: str | None) -> tuple[str, list[str], bool]:
    level = DEFAULT_DIFFICULTY
    defaulted = difficulty is None
    if difficulty is not None:
        found = DIFFICULTY_WORDS.get(difficulty.strip().lower())
        if found is None:
            draft.warn(
                "difficulty",
                f"{difficulty!r} is not a difficulty (expected easy, medium or hard); "
                f"set to {DEFAULT_DIFFICULTY.value}",
            )
        else:
            level = found
    tag_list: list[str] = []
    for part in re.split(r"[,;\s]+", tags or ""):
        slug = tag_slug(part) if part else None
        if slug and slug not in tag_list:
            tag_list.append(slug)
    return level.value, tag_list, defaulted


def _flashcard(
    builder: PackBuilder,
    line: int,
    term: str,
    definition: str,
    difficulty: str | None,
    tags: str | None,
) -> bool:
    draft = builder.draft("flashcard", line)
    level, tag_list, defaulted = _meta(draft, difficulty, tags)
    if not term:
        draft.error("prompt", "the term cell is empty; this row was not imported")
        return False
    kept = draft.commit(
        {"difficulty": level, "tags": tag_list, "prompt": term, "answer": definition}
    )
    return defaulted and kept


def _typed(
    builder: PackBuilder,
    line: int,
    question: str,
    accepted: str,
    wrong: str | None,
    difficulty: str | None,
    tags: str | None,
    explanation: str | None,
) -> bool:
    """A typed item: ``accept`` holds the accepted answers (``a|b``); when they are all one
    number (``12``, ``12.0``) the key is that number, exactly."""
    draft = builder.draft("typed", line)
    level, tag_list, defaulted = _meta(draft, difficulty, tags)
    if not question:
        draft.error("prompt", "the question cell is empty; this row was not imported")
        return False
    forms = [form.strip() for form in accepted.split("|") if form.strip()]
    numbers = {parse_number(form) for form in forms}
    fields: dict[str, object] = {"difficulty": level, "tags": tag_list, "prompt": question}
    if len(numbers) == 1 and None not in numbers:
        fields["number"] = {"value": numbers.pop()}
    else:
        fields["accept"] = forms
    if wrong:
        fields["wrong"] = [form.strip() for form in wrong.split("|") if form.strip()][:12]
    if explanation:
        fields["explanation"] = explanation
    kept = draft.commit(fields)
    return defaulted and kept


def _multiple_choice(
    builder: PackBuilder,
    line: int,
    question: str,
    choices: Sequence[str],
    correct: str,
    difficulty: str | None,
    tags: str | None,
    explanation: str | None,
) -> bool:
    draft = builder.draft("multiple_choice", line)
    level, tag_list, defaulted = _meta(draft, difficulty, tags)
    if len(choices) > MAX_CHOICES:
        draft.error(
            "choices",
            f"{len(choices)} choices; at most {MAX_CHOICES} fit (buttons A-E); "
            "this row was not imported",
        )
        return False
    index, other = _correct_index(correct, choices)
    if index is not None and other is not None:
        draft.warn(
            "correct",
            f"{correct!r} is the text of choice {CHOICE_LETTERS[index]} and also points at "
            f"choice {CHOICE_LETTERS[other]} as a letter or number; took the text, check it",
        )
    if index is None:
        draft.error(
            "correct",
            f"{correct!r} is not one of the choices: expected a letter "
            f"(A-{CHOICE_LETTERS[len(choices) - 1]}), an index (1-{len(choices)}) or a choice's "
            "text; this row was not imported",
        )
        return False
    kept = draft.commit(
        {
            "difficulty": level,
            "tags": tag_list,
            "prompt": question,
            "choices": [
                {"text": text, "correct": True} if i == index else {"text": text}
                for i, text in enumerate(choices)
            ],
            "explanation": explanation,
        }
    )
    return defaulted and kept


def _correct_index(correct: str, choices: Sequence[str]) -> tuple[int | None, int | None]:
    """The correct choice from a letter, a 1-based index or a choice's text (any case).

    Returns ``(index, other)``: ``other`` is set when the value reads both as a choice's text
    and, differently, as a letter or index (a choice "2" and ``correct`` 2), so the caller
    can say it took the text.
    """
    value = correct.strip()
    folded = [choice.casefold() for choice in choices]
    by_text = folded.index(value.casefold()) if value.casefold() in folded else None
    by_position: int | None = None
    letter = value.rstrip(".)").upper()
    if len(letter) == 1 and letter in CHOICE_LETTERS[: len(choices)]:
        by_position = CHOICE_LETTERS.index(letter)
    elif value.isdigit() and 1 <= int(value) <= len(choices):
        by_position = int(value) - 1
    if by_text is not None:
        return by_text, by_position if by_position not in {None, by_text} else None
    return by_position, None
