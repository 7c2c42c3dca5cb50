"""Import a "Cheat Sheet & Quick Revision" text sheet.

The layout, as study sites export it (plain text, blank lines between blocks)::

    <Topic> - Cheat Sheet & Quick Revision
    Recall & Review
      <level>  /  <question>  /  <answer>                     -> flashcard
      <question>  /  A <option> ... D <option>  /  <explanation> -> multiple_choice
      <question>  /  <hint>                                    -> open
    Practice
      N. <question>  [code lines]  /  <difficulty>  /  A. <option> ...
      Solution
      1. Step 1: <title>  <body>  ...  k. Final Answer:  <text> -> Option X
      k+1. Quick Check:  <body>
      Hint: <hint>
      Common Mistakes:  • <mistake> ...                        -> practice

What the sheet does not say is reported instead of invented: the multiple-choice blocks do
not mark their answer, so it is derived from the explanation by fuzzy matching and reported
when the match is not clear; open prompts have no model answer, so they get a placeholder
and a "needs a model answer" warning. A practice problem whose answer depends on a snippet
gets an expectation built from the sheet's *claim* (``expect_stdout`` when the question asks
what the code prints, ``expect_error`` when the claim names an error), so that
``studybot questions check`` shows where real torch disagrees with the sheet.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.questions.importers.base import (
    DIFFICULTY_WORDS,
    Draft,
    ImportResult,
    PackBuilder,
    clean_field,
)
from bot.questions.importers.matching import content_words, match_option
from bot.questions.schema import CHOICE_LETTERS, Difficulty

__all__ = ["MODEL_ANSWER_PLACEHOLDER", "import_cheatsheet", "looks_like_cheatsheet"]

MODEL_ANSWER_PLACEHOLDER = "TODO: write a model answer (the imported sheet has none)."
DEFAULT_DIFFICULTY = Difficulty.MEDIUM

_TITLE = re.compile(r"^(?P<topic>.+?)\s*[-\u2013\u2014:|]\s*cheat\s*sheet\b.*$", re.IGNORECASE)
_RECALL = re.compile(r"^recall\s*(?:&|and)\s*review\s*:?$", re.IGNORECASE)
_PRACTICE = re.compile(r"^practice(?:\s+problems?)?\s*:?$", re.IGNORECASE)
_LEVEL = re.compile(r"^(?P<level>" + "|".join(DIFFICULTY_WORDS) + r")\s*:?$", re.IGNORECASE)
# One word on its own where a level goes ("expert"): a level the importer does not know.
_LEVELISH = re.compile(r"^[A-Za-z][A-Za-z-]{1,19}\s*:?$")
_KNOWN_LEVELS = ", ".join(DIFFICULTY_WORDS)
_RECALL_OPTION = re.compile(r"^(?P<letter>[A-E])(?:[.):]\s*|\s+)(?P<text>\S.*)$")
_NUMBERED = re.compile(r"^(?P<number>\d+)[.)]\s+(?P<text>\S.*)$")
_OPTION = re.compile(r"^(?P<letter>[A-E])[.):]\s+(?P<text>\S.*)$")
_SOLUTION = re.compile(r"^solutions?\s*:?$", re.IGNORECASE)
_PART = re.compile(
    r"^(?:step\s*(?P<step>\d+)\s*[:.\-]?\s*(?P<title>.*)"
    r"|(?P<final>final\s+answer)\s*:?\s*(?P<final_text>.*)"
    r"|(?P<check>quick\s+check)\s*:?\s*(?P<check_text>.*))$",
    re.IGNORECASE,
)
_HINT = re.compile(r"^hints?\s*:\s*(?P<text>.*)$", re.IGNORECASE)
_MISTAKES = re.compile(r"^common\s+mistakes?\s*:?\s*(?P<text>.*)$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[\u2022\u00b7\u25aa\u25e6\u2023*\-])\s*(?P<text>\S.*)$")
_ANSWER_OPTION = re.compile(
    r"\s*(?:->|\u2192|=>|\u27f6)\s*\(?option\s*(?P<letter>[A-Za-z0-9]{1,3})\)?\s*\.?\s*$",
    re.IGNORECASE,
)
_CODE_START = re.compile(
    r"^(?:import\s+\w|from\s+\w+\s+import|print\(|def\s|class\s|for\s|while\s|if\s|with\s|@|#"
    r"|[A-Za-z_][\w.\[\], ]*\s*(?:[+\-*/%@]|\*\*)?=[^=])"
)
# What a claim says about a snippet.
_EXCEPTION = re.compile(r"\b(?P<name>(?:[a-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception))\b")
_ASKS_OUTPUT = re.compile(r"\b(?:output|outputs|print|prints|printed|display|displays)\b", re.I)
_CLAIMS_NONE = re.compile(r"\bNone\b")
_CLAIMS_ERROR = re.compile(r"\b(?:error|errors|raise|raises|exception|fails?|crash(?:es)?)\b", re.I)


# --- entry points -------------------------------------------------------------------------------


def looks_like_cheatsheet(lines: Sequence[str]) -> str | None:
    """Why these lines look like a cheat sheet (for the import report), or ``None``."""
    for number, line in enumerate(lines[:400], 1):
        text = line.strip()
        if _RECALL.match(text):
            return f"section header {text!r} at line {number}"
        if _TITLE.match(text) and number <= 5:
            return f"title {text!r} at line {number}"
    practice = [n for n, line in enumerate(lines, 1) if _PRACTICE.match(line.strip())]
    finals = [n for n, line in enumerate(lines, 1) if re.search(r"final answer", line, re.I)]
    if practice and finals:
        return f"section header 'Practice' at line {practice[0]} and a Final Answer"
    return None


def import_cheatsheet(text: str, result: ImportResult, *, title_given: bool = False) -> None:
    """Parse ``text`` into ``result``: items, and a problem for everything not understood."""
    builder = PackBuilder(result)
    lines = text.splitlines()
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines):
        match = _TITLE.match(lines[start].strip())
        is_header = _RECALL.match(lines[start].strip()) or _PRACTICE.match(lines[start].strip())
        if match or not is_header:
            if not title_given:
                topic = match.group("topic") if match else lines[start].strip()
                result.title = clean_field(topic)[:600]
            start += 1
    practice_at = next(
        (i for i in range(start, len(lines)) if _PRACTICE.match(lines[i].strip())), len(lines)
    )
    recall_at = next(
        (i for i in range(start, practice_at) if _RECALL.match(lines[i].strip())), None
    )
    if recall_at is not None:
        _report_stray(builder, lines, start, recall_at, "before the 'Recall & Review' section")
        start = recall_at + 1
    _RecallParser(builder, _paragraphs(lines, start, practice_at)).parse()
    if practice_at < len(lines):
        _PracticeParser(builder, lines, practice_at + 1).parse()
    if not result.items and not result.errors:
        builder.problem(1, "", "no cards, multiple-choice blocks or practice problems found")


# --- text as paragraphs -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Paragraph:
    line: int  # 1-based line of its first line
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return clean_field(" ".join(line.strip() for line in self.lines))


def _paragraphs(lines: Sequence[str], start: int, end: int) -> list[_Paragraph]:
    out: list[_Paragraph] = []
    current: list[str] = []
    first = start
    for index in range(start, end):
        if lines[index].strip():
            if not current:
                first = index
            current.append(lines[index])
        elif current:
            out.append(_Paragraph(first + 1, tuple(current)))
            current = []
    if current:
        out.append(_Paragraph(first + 1, tuple(current)))
    return out


def _report_stray(
    builder: PackBuilder, lines: Sequence[str], start: int, end: int, where: str
) -> None:
    for paragraph in _paragraphs(lines, start, end):
        builder.problem(
            paragraph.line,
            "",
            f"could not parse {where}: {_quote(paragraph.text)} (expected a card, a "
            "multiple-choice block or a practice problem)",
        )


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "\u2026")


# --- Recall & Review ----------------------------------------------------------------------------


class _RecallParser:
    """Cards, multiple-choice blocks and open prompts, told apart by their shape."""

    def __init__(self, builder: PackBuilder, paragraphs: list[_Paragraph]) -> None:
        self.builder = builder
        self.paragraphs = paragraphs
        self.unlevelled: list[Draft] = []

    def parse(self) -> None:
        paragraphs = self.paragraphs
        index = 0
        while index < len(paragraphs):
            paragraph = paragraphs[index]
            if _LEVEL.match(paragraph.text) or self._unknown_level(index):
                index = self._flashcard(index)
            elif self._option_run(index + 1) >= 2:
                index = self._multiple_choice(index)
            else:
                index = self._open(index)
        if self.unlevelled:
            first = self.unlevelled[0]
            ids = ", ".join(draft.id for draft in self.unlevelled)
            self.builder.warn(
                first.line,
                "difficulty",
                f"{len(self.unlevelled)} item(s) have no level in the source and were imported "
                f"as {DEFAULT_DIFFICULTY.value}: {ids}",
            )

    def _is_level(self, index: int) -> bool:
        return index < len(self.paragraphs) and bool(_LEVEL.match(self.paragraphs[index].text))

    def _unknown_level(self, index: int) -> bool:
        """A lone word shaped like a level ("expert") heading a question and its answer."""
        if index + 2 >= len(self.paragraphs):
            return False
        word, question = self.paragraphs[index], self.paragraphs[index + 1]
        return (
            len(word.lines) == 1
            and bool(_LEVELISH.match(word.text))
            and not _LEVEL.match(word.text)
            and question.text.endswith("?")
            and not self._is_level(index + 1)
            and self._option_run(index + 2) < 2
            and not self._is_level(index + 2)
            and self._option_run(index + 3) < 2
        )

    def _option_run(self, index: int) -> int:
        """How many paragraphs from ``index`` are options A, B, C, ... in order."""
        count = 0
        while index + count < len(self.paragraphs) and count < len(CHOICE_LETTERS):
            match = _RECALL_OPTION.match(self.paragraphs[index + count].text)
            if not match or match.group("letter") != CHOICE_LETTERS[count]:
                break
            count += 1
        return count

    def _starts_block(self, index: int) -> bool:
        """Whether the paragraph at ``index`` begins a card or a multiple-choice block."""
        return (
            self._is_level(index) or self._option_run(index + 1) >= 2 or self._unknown_level(index)
        )

    def _flashcard(self, index: int) -> int:
        level = self.paragraphs[index]
        has_question = index + 1 < len(self.paragraphs) and not self._is_level(index + 1)
        has_answer = (
            has_question
            and index + 2 < len(self.paragraphs)
            and not self._starts_block(index + 2)
            and self._option_run(index + 2) < 2
        )
        if not has_answer:
            self.builder.problem(
                level.line,
                "",
                f"level {level.text!r} is not followed by a question and an answer "
                "(expected: level, question, answer, separated by blank lines)",
            )
            return index + 1
        question, answer = self.paragraphs[index + 1], self.paragraphs[index + 2]
        draft = self.builder.draft("flashcard", question.line)
        difficulty = DIFFICULTY_WORDS.get(level.text.rstrip(":").strip().lower())
        if difficulty is None:
            difficulty = DEFAULT_DIFFICULTY
            draft.warn(
                "difficulty",
                f"{level.text!r} is not a level the importer knows ({_KNOWN_LEVELS}); the card "
                f"under it was imported as a flashcard with difficulty {difficulty.value}",
                line=level.line,
            )
        draft.commit(
            {"difficulty": difficulty.value, "prompt": question.text, "answer": answer.text}
        )
        return index + 3

    def _multiple_choice(self, index: int) -> int:
        question = self.paragraphs[index]
        count = self._option_run(index + 1)
        options = [
            _RECALL_OPTION.match(p.text) for p in self.paragraphs[index + 1 : index + 1 + count]
        ]
        texts = [m.group("text").strip() for m in options if m]
        after = index + 1 + count
        explanation: _Paragraph | None = None
        if after < len(self.paragraphs) and not self._starts_block(after):
            explanation = self.paragraphs[after]
            after += 1
        draft = self.builder.draft("multiple_choice", question.line)
        if explanation is None:
            draft.error(
                "choices",
                "no explanation follows the options, and the sheet marks no correct option, "
                "so the answer cannot be derived; this item was not imported",
            )
            return after
        correct = _pick_correct(draft, texts, explanation.text, explanation.line)
        choices = [{"text": text, "correct": i == correct} for i, text in enumerate(texts)]
        for choice in choices:
            if not choice["correct"]:
                del choice["correct"]
        self._unlevelled(draft)
        draft.commit(
            {
                "difficulty": DEFAULT_DIFFICULTY.value,
                "prompt": question.text,
                "choices": choices,
                "explanation": explanation.text,
            }
        )
        return after

    def _open(self, index: int) -> int:
        question = self.paragraphs[index]
        hint: _Paragraph | None = None
        following = index + 1
        if (
            following < len(self.paragraphs)
            and not self._starts_block(following)
            and not self.paragraphs[following].text.endswith("?")
        ):
            hint = self.paragraphs[following]
            following += 1
        draft = self.builder.draft("open", question.line)
        draft.warn(
            "model_answer",
            "needs a model answer: the sheet gives none, so a placeholder was written",
        )
        self._unlevelled(draft)
        draft.commit(
            {
                "difficulty": DEFAULT_DIFFICULTY.value,
                "prompt": question.text,
                "hint": hint.text if hint else None,
                "model_answer": MODEL_ANSWER_PLACEHOLDER,
            }
        )
        return following

    def _unlevelled(self, draft: Draft) -> None:
        draft.note(f"difficulty: no level in the source; set to {DEFAULT_DIFFICULTY.value}")
        self.unlevelled.append(draft)


def _pick_correct(draft: Draft, options: Sequence[str], explanation: str, line: int) -> int:
    """The option the explanation restates; warns (and says why) when that is not clear."""
    match = match_option(explanation, options)
    assert match is not None  # there are at least two options
    letter = CHOICE_LETTERS[match.index]
    if not match.confident:
        scores = ", ".join(
            f"{CHOICE_LETTERS[i]} {score:.0f}" for i, score in enumerate(match.scores)
        )
        draft.warn(
            "choices",
            f"the correct option is ambiguous: the explanation matches the options ({scores}) "
            f"without a clear winner; marked {letter}, check it",
            line=line,
        )
    else:
        draft.note(
            f"choices: correct option {letter} derived from the explanation "
            f"(match {match.score:.0f}, next best {match.runner_up:.0f})"
        )
    return match.index


def _score(text: str, option: str) -> float:
    found = match_option(text, [option])
    return found.score if found else 0.0


# --- Practice -----------------------------------------------------------------------------------


@dataclass(slots=True)
class _Part:
    kind: str  # "step", "final" or "check"
    line: int
    title: str
    body: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        body = clean_field(" ".join(self.body))
        title = clean_field(self.title)
        if self.kind == "check":
            return f"Quick check: {body or title}" if (body or title) else ""
        if title and body:
            return f"{title}: {body}" if not title.endswith((".", ":", "?")) else f"{title} {body}"
        return title or body


@dataclass(slots=True)
class _Problem:
    number: int
    line: int
    prompt: list[str]
    body: list[tuple[int, str]] = field(default_factory=list)  # (line, raw) until the level
    level: tuple[int, str] | None = None
    options: list[tuple[int, str, str]] = field(default_factory=list)  # (line, letter, text)
    solution_line: int | None = None
    parts: list[_Part] = field(default_factory=list)
    hints: list[tuple[int, str]] = field(default_factory=list)
    mistakes: list[tuple[int, str]] = field(default_factory=list)


class _PracticeParser:
    """Numbered problems, read line by line (a snippet's lines and indentation matter here)."""

    def __init__(self, builder: PackBuilder, lines: Sequence[str], start: int) -> None:
        self.builder = builder
        self.lines = lines
        self.start = start
        self.current: _Problem | None = None
        self.state = "between"  # question, options, solution, hint, mistakes
        self.after_blank = False  # wrapped text continues a line only without a blank between

    def parse(self) -> None:
        for index in range(self.start, len(self.lines)):
            raw = self.lines[index]
            self._line(index + 1, raw)
            self.after_blank = not raw.strip()
        self._finish()

    def _line(self, number: int, raw: str) -> None:  # noqa: PLR0912 - one branch per line shape
        text = raw.strip()
        problem = self.current
        numbered = _NUMBERED.match(raw)
        new_problem = numbered is not None and not raw[:1].isspace()
        in_question = problem is not None and self.state == "question" and not new_problem
        if in_question and not (_LEVEL.match(text) or _OPTION.match(text) or _SOLUTION.match(text)):
            assert problem is not None
            problem.body.append((number, raw))
            return
        if not text:
            return
        part = _PART.match(numbered.group("text") if numbered else text)
        if new_problem and numbered and not (self.state == "solution" and part):
            self._finish()
            self.current = _Problem(int(numbered.group("number")), number, [numbered.group("text")])
            self.state = "question"
            return
        if problem is None:
            self._stray(number, text, "before the first numbered problem")
            return
        if (level := _LEVEL.match(text)) and self.state in {"question", "options"}:
            problem.level = (number, level.group("level").lower())
            self.state = "options"
        elif (option := _OPTION.match(text)) and self.state in {"question", "options"}:
            problem.options.append((number, option.group("letter"), option.group("text")))
            self.state = "options"
        elif _SOLUTION.match(text) and self.state in {"question", "options"}:
            problem.solution_line = number
            self.state = "solution"
        elif part and self.state == "solution":
            problem.parts.append(_new_part(part, number))
        elif hint := _HINT.match(text):
            problem.hints.append((number, hint.group("text")))
            self.state = "hint"
        elif mistakes := _MISTAKES.match(text):
            self.state = "mistakes"
            if mistakes.group("text"):
                problem.mistakes.append((number, mistakes.group("text")))
        elif self.state == "mistakes" and (bullet := _BULLET.match(raw)):
            problem.mistakes.append((number, bullet.group("text")))
        elif self.state == "solution" and problem.parts:
            problem.parts[-1].body.append(text)
        elif self.state == "options" and problem.options and not self.after_blank:
            line, letter, option_text = problem.options[-1]
            problem.options[-1] = (line, letter, f"{option_text} {text}")
        elif self.state == "hint" and problem.hints and not self.after_blank:
            line, hint_text = problem.hints[-1]
            problem.hints[-1] = (line, f"{hint_text} {text}")
        elif self.state == "mistakes" and problem.mistakes and not self.after_blank:
            line, mistake = problem.mistakes[-1]
            problem.mistakes[-1] = (line, f"{mistake} {text}")
        else:
            self._stray(number, text, f"in practice problem {problem.number}")

    def _stray(self, number: int, text: str, where: str) -> None:
        self.builder.problem(
            number,
            "",
            f"could not parse {where}: {_quote(text)} (expected a level, an option 'A. ...', "
            "'Solution', a numbered step, 'Hint:' or 'Common Mistakes:')",
        )

    def _finish(self) -> None:
        problem, self.current = self.current, None
        self.state = "between"
        if problem is not None:
            _build_practice(self.builder, problem)


def _new_part(match: re.Match[str], line: int) -> _Part:
    if match.group("final"):
        return _Part("final", line, match.group("final_text") or "")
    if match.group("check"):
        return _Part("check", line, match.group("check_text") or "")
    return _Part("step", line, match.group("title") or "")


def _split_body(problem: _Problem) -> tuple[list[str], str | None, int | None]:
    """Prompt continuation and snippet from the lines between the question and its level.

    The question's own paragraph (the numbered line and the lines right under it) is prose
    unless a line looks like code; from the first line that looks like code to the level,
    everything is the snippet, blank lines and indentation included.
    """
    prose: list[str] = []
    body = list(problem.body)
    while body and body[-1][1].strip() == "":
        body.pop()
    code_from: int | None = None
    for position, (_, raw) in enumerate(body):
        if raw.strip() and _CODE_START.match(raw.strip()):
            code_from = position
            break
        if raw.strip():
            prose.append(raw.strip())
    if code_from is None:
        return prose, None, None
    code_lines = [raw.rstrip() for _, raw in body[code_from:]]
    code = textwrap.dedent("\n".join(code_lines)).strip("\n") + "\n"
    return prose, code, body[code_from][0]


def _unknown_practice_level(problem: _Problem) -> tuple[int, str] | None:
    """A lone word, after a blank line, where the level goes ("expert"): taken off the body.

    Without this it would end the question's text or, worse, its snippet.
    """
    body = list(problem.body)
    while body and not body[-1][1].strip():
        body.pop()
    if (
        problem.level is None
        and len(body) >= 2  # the word and the blank line above it
        and not body[-2][1].strip()
        and _LEVELISH.match(body[-1][1].strip())
    ):
        problem.body = body[:-1]
        return body[-1][0], body[-1][1].strip()
    return None


def _practice_difficulty(
    draft: Draft, problem: _Problem, unknown_level: tuple[int, str] | None
) -> Difficulty:
    if problem.level is not None:
        return DIFFICULTY_WORDS[problem.level[1]]
    if unknown_level is None:
        draft.warn("difficulty", f"no difficulty line; set to {DEFAULT_DIFFICULTY.value}")
    else:
        line, word = unknown_level
        draft.warn(
            "difficulty",
            f"{word!r} is not a level the importer knows ({_KNOWN_LEVELS}); set to "
            f"{DEFAULT_DIFFICULTY.value}",
            line=line,
        )
    return DEFAULT_DIFFICULTY


def _build_practice(builder: PackBuilder, problem: _Problem) -> None:  # noqa: PLR0915
    unknown_level = _unknown_practice_level(problem)
    prose, code, code_line = _split_body(problem)
    prompt = clean_field(" ".join([*problem.prompt, *prose]))
    draft = builder.draft("practice", problem.line)
    difficulty = _practice_difficulty(draft, problem, unknown_level)
    letters = [letter for _, letter, _ in problem.options]
    expected_letters = list(CHOICE_LETTERS[: len(letters)])
    if letters != expected_letters:
        draft.error(
            "choices",
            f"options are {', '.join(letters)}; expected {', '.join(expected_letters)} in order; "
            "this item was not imported",
            line=problem.options[0][0] if problem.options else None,
        )
        return
    options = [clean_field(text) for _, _, text in problem.options]
    finals = [part for part in problem.parts if part.kind == "final"]
    steps = [part.text for part in problem.parts if part.kind != "final" and part.text]
    if problem.solution_line is None:
        draft.error("steps", "no 'Solution' section; this item was not imported")
        return
    if not finals or not clean_field(" ".join([finals[0].title, *finals[0].body])):
        draft.error(
            "final_answer",
            "no 'Final Answer:' in the solution; this item was not imported",
            line=problem.solution_line,
        )
        return
    final = finals[0]
    final_text = clean_field(" ".join([final.title, *final.body]))
    claimed = _ANSWER_OPTION.search(final_text)
    final_text = _ANSWER_OPTION.sub("", final_text).strip()
    correct: int | None = None
    if claimed and not options:
        draft.warn(
            "final_answer",
            f"the final answer points at option {claimed.group('letter').upper()}, but this "
            f"problem has no options; kept {final_text!r} as its answer, check it",
            line=final.line,
        )
    if options:
        if claimed:
            letter = claimed.group("letter").upper()
            if letter not in letters:
                draft.error(
                    "final_answer",
                    f"the final answer points at option {letter}, but the options are "
                    f"{', '.join(letters)}; this item was not imported",
                    line=final.line,
                )
                return
            correct = letters.index(letter)
            agreement = _score(final_text, options[correct])
            if agreement < 80 and content_words(final_text) != content_words(options[correct]):
                draft.warn(
                    "final_answer",
                    f"the final answer's text does not read like option {letter} "
                    f"(match {agreement:.0f}); kept option {letter} as the sheet says",
                    line=final.line,
                )
        else:
            correct = _pick_correct(draft, options, final_text, final.line)
            draft.warn(
                "final_answer",
                f"no '-> Option X' in the final answer; matched it to option "
                f"{CHOICE_LETTERS[correct]} by its text",
                line=final.line,
            )
    if not steps:
        draft.warn("steps", "the solution has no steps; the final answer is the only step")
        steps = [final_text]
    fields: dict[str, object] = {
        "difficulty": difficulty.value,
        "prompt": prompt,
        "choices": (
            [
                {"text": text, "correct": True} if i == correct else {"text": text}
                for i, text in enumerate(options)
            ]
            if options
            else None
        ),
        "answer": None if options else final_text,
        "steps": steps,
        "hints": [clean_field(text) for _, text in problem.hints if clean_field(text)],
        "common_mistakes": [clean_field(text) for _, text in problem.mistakes if clean_field(text)],
        "final_answer": final_text,
    }
    steps_text = " ".join(steps)
    if code is not None:
        claim = derive_claim(prompt, code, final_text)
        if claim is None:
            draft.warn(
                "code",
                "needs a human: the final answer says neither what the snippet prints nor which "
                "error it raises, so the snippet is kept in the prompt and is not checked",
                line=code_line,
            )
            fields["prompt"] = f"{prompt}\n\n```python\n{code}```"
        else:
            fields |= {"code": code, **claim.fields()}
            draft.note(f"expectation: {claim.how}")
            _warn_inconsistent(draft, claim, steps_text)
    elif correct is not None and _is_snippet(options[correct]):
        snippet = options[correct]
        prefix = "" if "import torch" in snippet else "import torch\n"
        fields |= {"code": f"{prefix}{snippet}\n", "expect_stdout": ""}
        draft.warn(
            "code",
            f"the sheet's answer is the snippet in option {CHOICE_LETTERS[correct]}: it became "
            "the item's code, expected to run without an error, so `questions check` tests the "
            "claim; decide before shipping whether to show it with the question",
            line=problem.options[correct][0],
        )
    draft.commit(fields)


@dataclass(frozen=True, slots=True)
class Claim:
    """What the sheet claims a snippet does, as a schema expectation, and how it was read."""

    expect_stdout: str | None
    expect_error: str | None
    how: str

    def fields(self) -> dict[str, str | None]:
        return {"expect_stdout": self.expect_stdout, "expect_error": self.expect_error}


def derive_claim(prompt: str, code: str, final_text: str) -> Claim | None:
    """Turn a practice problem's claimed final answer into an expectation for its snippet.

    In this order: a final answer that names an exception claims that error; a question that
    asks what the code prints claims the final answer is the output; a final answer saying a
    value "is None" about a snippet that ends by printing claims ``None`` is printed.
    Anything else is left to a human (``None``).
    """
    named = _EXCEPTION.search(final_text)
    if named:
        return Claim(None, named.group("name"), f"the final answer names {named.group('name')}")
    if _ASKS_OUTPUT.search(prompt):
        output = final_text.strip().strip("`").strip()
        return Claim(
            f"{output}\n",
            None,
            "the question asks what the code prints; the claimed final answer is its output",
        )
    if _CLAIMS_NONE.search(final_text) and _ends_with_print(code):
        return Claim(
            "None\n",
            None,
            "the final answer says the value is None, and the snippet ends by printing it",
        )
    return None


def _warn_inconsistent(draft: Draft, claim: Claim, steps_text: str) -> None:
    """Sheets sometimes contradict themselves; say so, the checker will tell which is right."""
    named = {m.group("name") for m in _EXCEPTION.finditer(steps_text)}
    claimed = claim.expect_error
    if claimed is None and named:
        printed = (claim.expect_stdout or "").strip()
        draft.warn(
            "final_answer",
            f"the solution steps mention {', '.join(sorted(named))}, but the final answer claims "
            f"the snippet prints {printed!r}; "
            "`studybot questions check` shows which one torch agrees with",
        )
    elif claimed is not None and _CLAIMS_ERROR.search(steps_text) is None and named - {claimed}:
        draft.warn(
            "final_answer",
            f"the final answer names {claimed}, but the steps mention "
            f"{', '.join(sorted(named - {claimed}))}",
        )


def _ends_with_print(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    if not tree.body:
        return False
    last = tree.body[-1]
    return (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and isinstance(last.value.func, ast.Name)
        and last.value.func.id == "print"
    )


def _is_snippet(text: str) -> bool:
    """An option that is Python code using torch (``x = torch.tensor(2); z = x + y``)."""
    if "torch" not in text or "(" not in text:
        return False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Assign | ast.Call) for node in ast.walk(tree))
