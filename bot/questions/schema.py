"""The pack schema: what a pack author may write in ``questions/*.yaml``.

Pydantic does the validation so that every problem comes back at once, each with a location
(``items[3].choices``) that the loader turns into ``file:line``. The messages are written for
pack authors, not for Python programmers.
"""

from __future__ import annotations

import enum
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

__all__ = [
    "Choice",
    "Difficulty",
    "Flashcard",
    "Item",
    "MultipleChoice",
    "OpenPrompt",
    "Pack",
    "Practice",
    "expectation_problem",
    "practice_problem",
]

Slug = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$"),
]
Tag = Annotated[
    str, StringConstraints(strip_whitespace=True, pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$")
]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
ShortText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=600)]
ExceptionName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.]*$")]

MAX_CHOICES = 5  # Discord fits five buttons on a row; letters A-E.
CHOICE_LETTERS = "ABCDE"


class Difficulty(enum.StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Choice(_Strict):
    """One option of a multiple-choice or practice item; ``why`` explains it at reveal time."""

    text: ShortText
    correct: bool = False
    why: Text | None = None


class _ItemBase(_Strict):
    id: Slug
    difficulty: Difficulty
    tags: tuple[Tag, ...] = ()
    prompt: Text
    code: Annotated[str, StringConstraints(min_length=1, max_length=4000)] | None = None
    expect_stdout: str | None = None
    expect_error: ExceptionName | None = None
    # The reveal attaches a picture of the autograd graph this item's code builds.
    show_graph: bool = False

    @model_validator(mode="after")
    def _code_has_expectation(self) -> Self:
        problem = expectation_problem(self.code, self.expect_stdout, self.expect_error)
        if problem:
            raise ValueError(problem)
        if self.show_graph and self.code is None:
            raise ValueError("show_graph: true needs a `code` snippet whose graph is drawn")
        return self


def expectation_problem(code: object, expect_stdout: object, expect_error: object) -> str | None:
    """The code/expectation rule, shared by the model and the loader's raw-data pass.

    The loader applies it to raw data too, so it is reported even when other fields fail.
    """
    if expect_stdout is not None and expect_error is not None:
        return "give either expect_stdout or expect_error, not both"
    if code is not None and expect_stdout is None and expect_error is None:
        return (
            "an item with code needs a machine-checkable expectation: "
            "expect_stdout (the exact output) or expect_error (an exception type name)"
        )
    if code is None and (expect_stdout is not None or expect_error is not None):
        return "expect_stdout/expect_error need a `code` snippet to check"
    return None


def practice_problem(choices: object, answer: object) -> str | None:
    """A practice item is scored by its choices or self-graded against an expected answer."""
    if choices is None and answer is None:
        return "a practice item needs `choices` or an expected `answer`"
    return None


def _one_correct(choices: tuple[Choice, ...]) -> tuple[Choice, ...]:
    correct = sum(choice.correct for choice in choices)
    if correct != 1:
        raise ValueError(
            f"exactly one choice must have `correct: true`, found {correct} "
            f"(among {len(choices)} choices)"
        )
    texts = [choice.text.casefold() for choice in choices]
    if len(set(texts)) != len(texts):
        raise ValueError("two choices have the same text")
    return choices


# A field-level check (not a model validator) so it is reported even when other fields fail.
ChoiceList = Annotated[
    tuple[Choice, ...], Field(min_length=2, max_length=MAX_CHOICES), AfterValidator(_one_correct)
]


class Flashcard(_ItemBase):
    """Front and back; members reveal the back privately and grade themselves knew/forgot."""

    kind: Literal["flashcard"]
    answer: Text


class MultipleChoice(_ItemBase):
    """One correct choice among 2-5; ``explanation`` is shown to everyone at reveal."""

    kind: Literal["multiple_choice"]
    choices: ChoiceList
    explanation: Text | None = None


class Practice(_ItemBase):
    """A worked problem: choices (scored by button) or an expected answer (self-graded)."""

    kind: Literal["practice"]
    choices: ChoiceList | None = None
    answer: Text | None = None
    steps: Annotated[tuple[Text, ...], Field(min_length=1)]
    hints: tuple[Text, ...] = ()
    common_mistakes: tuple[Text, ...] = ()
    final_answer: Text

    @model_validator(mode="after")
    def _choices_or_answer(self) -> Self:
        problem = practice_problem(self.choices, self.answer)
        if problem:
            raise ValueError(problem)
        return self


class OpenPrompt(_ItemBase):
    """A discussion prompt: not scored; the model answer is shown at reveal."""

    kind: Literal["open"]
    hint: Text | None = None
    model_answer: Text


Item = Annotated[Flashcard | MultipleChoice | Practice | OpenPrompt, Field(discriminator="kind")]


class Pack(_Strict):
    """A file in ``questions/``: a named set of items (ids unique: checked by the loader)."""

    pack: Slug
    title: ShortText
    description: Text | None = None
    items: Annotated[tuple[Item, ...], Field(min_length=1)]
