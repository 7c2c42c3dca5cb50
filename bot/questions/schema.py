"""The pack schema: what a pack author may write in ``questions/*.yaml``.

Pydantic does the validation so that every problem comes back at once, each with a location
(``items[3].choices``) that the loader turns into ``file:line``. The messages are written for
pack authors, not for Python programmers.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Mapping, Sequence
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from bot.questions.claims import (
    NUMBERED,
    ClaimRefError,
    describe_available,
    item_texts,
    parse_ref,
)
from bot.questions.typed import (
    DEFAULT_THRESHOLD,
    Mark,
    NumberRule,
    TextRule,
    TypedVerdict,
    grade_number,
    grade_text,
    normalise,
)

__all__ = [
    "Check",
    "Choice",
    "Difficulty",
    "Example",
    "Exercise",
    "ExerciseCheck",
    "Flashcard",
    "GraphRule",
    "Item",
    "MultipleChoice",
    "NumberKey",
    "OpenPrompt",
    "Pack",
    "Practice",
    "Solution",
    "TypedAnswer",
    "ValueKey",
    "backs_problems",
    "claim_refs",
    "expectation_problem",
    "practice_problem",
    "prose_checks",
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
Code = Annotated[str, StringConstraints(min_length=1, max_length=4000)]

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


CHECK = "a check"


def _one_or_more(value: object) -> object:
    """``backs: explanation`` is a list of one."""
    return [value] if isinstance(value, str) else value


def _claim_ref(value: str) -> str:
    try:
        return parse_ref(value)
    except ClaimRefError as exc:
        raise ValueError(str(exc)) from None


ClaimRef = Annotated[str, AfterValidator(_claim_ref)]


class Check(_Strict):
    """A snippet that backs statements in an item's prose (``backs``), run like ``code``.

    ``backs`` names the texts (see :mod:`bot.questions.claims`); the snippet and its
    expectation follow the rules of an item's own ``code`` and are judged the same way.
    Whether the named texts exist is checked by the item (:data:`Checks`).
    """

    backs: Annotated[
        tuple[ClaimRef, ...], BeforeValidator(_one_or_more), Field(min_length=1, max_length=20)
    ]
    code: Code
    expect_stdout: str | None = None
    expect_error: ExceptionName | None = None

    @model_validator(mode="after")
    def _has_expectation(self) -> Self:
        problem = expectation_problem(
            self.code, self.expect_stdout, self.expect_error, subject=CHECK
        )
        if problem:
            raise ValueError(problem)
        return self

    @property
    def claim(self) -> str:
        """The texts it backs, as one label: ``"choice 2, step 3"``."""
        return ", ".join(self.backs)


def backs_problems(
    kind: object, fields: Mapping[str, object], checks: Sequence[Check | None]
) -> list[tuple[tuple[int, str, int], str]]:
    """``backs`` entries naming a text the item does not have: ``((check, "backs", entry),
    message)``, the message saying which texts the item has.

    ``fields`` are the item's fields that are valid; a text whose field is missing from them
    (it failed validation, and is reported there) is not judged.
    """
    model = _KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        return []
    texts = item_texts(fields, tuple(model.model_fields))
    found: list[tuple[tuple[int, str, int], str]] = []
    for index, check in enumerate(checks):
        for position, ref in enumerate(check.backs if check is not None else ()):
            if texts.get(ref) is not None:
                continue
            word, _, number = ref.partition(" ")
            field = NUMBERED[word] if number else ref
            if field not in model.model_fields:
                what = f"{_KIND_NAMES[model]} has no {field.replace('_', ' ')}"
            elif field in fields:
                what = f"this item has no {ref}"
            else:
                continue
            available = describe_available(texts)
            found.append(
                (
                    (index, "backs", position),
                    f"`{ref}`: {what}; expected one of its texts: {available}",
                )
            )
    return found


def _backs_exist(checks: tuple[Check, ...], info: ValidationInfo) -> tuple[Check, ...]:
    """Every ``backs`` names a text this item has; each one that does not is an error at its
    own place (``checks[1].backs``).

    A field validator, so the item's valid fields are in ``info.data`` (``checks`` comes last
    in every kind).
    """
    found = backs_problems(info.data.get("kind"), info.data, checks)
    if found:
        raise ValidationError.from_exception_data(
            "checks",
            [
                InitErrorDetails(
                    type=PydanticCustomError("claim_not_found", "{message}", {"message": text}),
                    loc=loc,
                    input=checks[loc[0]].backs[loc[2]],
                )
                for loc, text in found
            ],
        )
    return checks


def claim_refs(item: object) -> list[str]:
    """The names of every text of ``item`` a check can back, in the item's order."""
    model = type(item)
    if model not in _KIND_NAMES:
        return []
    fields = {name: getattr(item, name) for name in model.model_fields}
    return [ref for ref, text in item_texts(fields, tuple(fields)).items() if text is not None]


Checks = Annotated[tuple[Check, ...], AfterValidator(_backs_exist)]


class _ItemBase(_Strict):
    id: Slug
    difficulty: Difficulty
    tags: tuple[Tag, ...] = ()
    prompt: Text
    code: Code | None = None
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


def expectation_problem(
    code: object, expect_stdout: object, expect_error: object, *, subject: str = "an item with code"
) -> str | None:
    """The code/expectation rule, shared by items, checks and the loader's raw-data pass.

    The loader applies it to raw data too, so it is reported even when other fields fail.
    """
    if expect_stdout is not None and expect_error is not None:
        return "give either expect_stdout or expect_error, not both"
    if code is not None and expect_stdout is None and expect_error is None:
        return (
            f"{subject} needs a machine-checkable expectation: "
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
    checks: Checks = ()


class MultipleChoice(_ItemBase):
    """One correct choice among 2-5; ``explanation`` is shown to everyone at reveal."""

    kind: Literal["multiple_choice"]
    choices: ChoiceList
    shuffle: bool = True  # false: the choices keep the file's order ("all of the above")
    explanation: Text | None = None
    checks: Checks = ()


class Practice(_ItemBase):
    """A worked problem: choices (scored by button) or an expected answer (self-graded)."""

    kind: Literal["practice"]
    choices: ChoiceList | None = None
    shuffle: bool = True  # false: the choices keep the file's order (ordered steps)
    answer: Text | None = None
    steps: Annotated[tuple[Text, ...], Field(min_length=1)]
    hints: tuple[Text, ...] = ()
    common_mistakes: tuple[Text, ...] = ()
    final_answer: Text
    checks: Checks = ()

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
    checks: Checks = ()


class NumberKey(_Strict):
    """A typed number's key: the value, and how far an answer may be from it (``tolerance``
    absolute, ``relative`` a fraction of the value; either is enough)."""

    value: float
    tolerance: Annotated[float, Field(ge=0)] = 0.0
    relative: Annotated[float, Field(ge=0, le=0.5)] = 0.0

    @property
    def rule(self) -> NumberRule:
        return NumberRule(self.value, self.tolerance, self.relative)


class ValueKey(_Strict):
    """A typed answer that is the value of code: ``of`` is an expression evaluated after the
    item's ``code`` (the expected value), ``also_right`` other spellings of it that must agree
    (the grader's own test, beside the item's ``wrong`` expressions that must not)."""

    of: Expression
    also_right: Annotated[tuple[ShortText, ...], Field(min_length=1, max_length=6)]


class TypedAnswer(_ItemBase):
    """Recall, not recognition: the member types the answer and the bot grades it.

    One of ``accept`` (texts: the first is the one shown, the rest synonyms; typos forgiven
    within ``threshold``, see :mod:`bot.questions.typed`), ``number`` (a value and its
    tolerance) or ``value`` (an expression the jail evaluates, compared with the value of
    ``value.of`` after ``code``; see :mod:`bot.questions.typed_values`). ``wrong`` lists
    plausible wrong answers, the grader's own test: each must be refused, and ``questions
    lint`` says so when one would pass (``questions check`` for a value key). When a text or
    number item has ``code``, the last line of ``expect_stdout`` must be an answer the key
    accepts, so what torch prints is the key.
    """

    kind: Literal["typed"]
    accept: Annotated[tuple[ShortText, ...], Field(max_length=12)] = ()
    threshold: Annotated[int, Field(ge=50, le=100)] = DEFAULT_THRESHOLD
    number: NumberKey | None = None
    value: ValueKey | None = None
    wrong: Annotated[tuple[ShortText, ...], Field(max_length=12)] = ()
    explanation: Text | None = None
    checks: Checks = ()

    @model_validator(mode="after")
    def _one_key(self) -> Self:
        keys = [bool(self.accept), self.number is not None, self.value is not None]
        if sum(keys) != 1:
            raise ValueError(
                "a typed item needs exactly one of `accept` (texts), `number` or `value`"
            )
        if self.value is not None:
            return self._value_key()
        if self.number is not None and self.threshold != DEFAULT_THRESHOLD:
            raise ValueError("`threshold` is for `accept` texts; a number has `tolerance`")
        for text in self.accept:
            if not normalise(text):
                raise ValueError(f"accepted answer {text!r} has no letters or digits to match")
        problem = typed_key_problem(self)
        if problem:
            raise ValueError(problem)
        return self

    def _value_key(self) -> Self:
        assert self.value is not None
        if self.code is None:
            raise ValueError("a `value` key is evaluated after the item's `code`: give one")
        if not self.wrong:
            raise ValueError("a `value` key needs `wrong` expressions that must not agree")
        for field, texts in (
            ("value.of", (self.value.of,)),
            ("value.also_right", self.value.also_right),
            ("wrong", self.wrong),
        ):
            for text in texts:
                problem = _python_problem(text, "eval")
                if problem is not None:
                    raise ValueError(f"`{field}` {text!r} is not a Python expression: {problem}")
        return self

    def grade(self, text: str) -> TypedVerdict:
        """How a member's typed ``text`` fares against this item's text or number key (a
        ``value`` key is judged in the jail: :mod:`bot.questions.typed_values`)."""
        if self.value is not None:
            raise TypeError("a value key is evaluated in the sandbox, not graded here")
        if self.number is not None:
            return grade_number(self.number.rule, text)
        return grade_text(TextRule(self.accept, self.threshold), text)

    @property
    def shown_answer(self) -> str:
        """The answer shown at the reveal."""
        if self.value is not None:
            return self.value.also_right[0]
        return self.number.rule.shown if self.number is not None else self.accept[0]


def typed_key_problem(item: TypedAnswer) -> str | None:
    """Why a typed item's key cannot be trusted, or None.

    - A ``wrong`` example the key accepts, or calls close: the key is ambiguous.
    - An empty or one-letter answer the key accepts (that is not itself an accepted answer):
      the threshold is too lenient.
    - With ``code``: the last line ``expect_stdout`` shows is not accepted, so the key is not
      what torch prints.
    """
    for text in item.wrong:
        mark = item.grade(text).mark
        if mark in (Mark.RIGHT, Mark.CLOSE):
            said = "accepts" if mark is Mark.RIGHT else "calls close"
            return f"ambiguous key: it {said} the wrong answer {text!r}"
    if item.number is None:
        own = {normalise(text) for text in item.accept}
        for probe in ("", *"abcdefghijklmnopqrstuvwxyz0123456789"):
            if probe not in own and item.grade(probe).mark is Mark.RIGHT:
                shown = repr(probe) if probe else "an empty answer"
                return f"threshold {item.threshold} is too lenient: it accepts {shown}"
    if item.code is not None and item.expect_stdout is not None:
        printed = item.expect_stdout.strip().splitlines()
        last = printed[-1] if printed else ""
        if item.grade(last).mark is not Mark.RIGHT:
            return (
                f"the key does not accept {last!r}, the last line `code` prints; "
                "the key must be what torch gives"
            )
    return None


Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]
DottedName = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")
]
Expression = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=600)]
Compared = Literal["result", "args", "grads", "calls"]
NodeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")]
#: The longest an exercise may take for all its checks, in seconds (a /run's own limit is 10).
MAX_EXERCISE_SECONDS = 20.0


class ExerciseCheck(_Strict):
    """One call of an exercise's ``entry``: its arguments, and what is compared.

    ``args`` is a Python expression for the arguments (a tuple for several), evaluated in the
    jail with ``torch``, ``g`` (a ``torch.Generator`` seeded per member, exercise and
    check, so two members' hidden inputs differ) and ``counted(f)`` (``f``, counting the calls
    made during a backward pass). ``compare`` names what must agree with the reference's run on
    the same inputs: the returned ``result``, the ``args`` after the call (an in-place update),
    the ``grads`` of the tensor arguments, or the ``calls`` of the counted functions during
    backward (checkpointing runs its function again there, and leaves no node to see);
    ``backward: true`` first back-propagates the result with seeded random weights (so a
    backward that ignores its incoming gradient fails). ``grad_none_is_zero: true`` lets a
    gradient of None agree with an all-zero one (``zero_grad()`` sets None by default, and
    ``.zero_()`` is as right). ``error`` says the call must raise that exception instead.
    """

    args: Expression
    label: ShortText | None = None
    compare: Annotated[tuple[Compared, ...], Field(min_length=1, max_length=3)] = ("result",)
    backward: bool = False
    grad_none_is_zero: bool = False
    error: ExceptionName | None = None
    rtol: Annotated[float, Field(gt=0, le=1)] | None = None
    atol: Annotated[float, Field(ge=0, le=1)] | None = None

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        if len(set(self.compare)) != len(self.compare):
            raise ValueError("`compare` names the same thing twice")
        if self.error is not None and (self.backward or self.compare != ("result",)):
            raise ValueError("a check with `error` compares only the error: drop compare/backward")
        if self.backward and "grads" not in self.compare:
            raise ValueError("`backward: true` is for comparing `grads`: add grads to compare")
        if self.grad_none_is_zero and "grads" not in self.compare:
            raise ValueError("`grad_none_is_zero: true` is about `grads`: add grads to compare")
        if "calls" in self.compare and "counted(" not in self.args:
            raise ValueError(
                "`compare: [calls]` counts the calls of a `counted(...)` function: "
                "pass one in `args`"
            )
        return self


class Example(ExerciseCheck):
    """A visible check: shown with its arguments and ``expect``, the expected result as the
    member reads it (a Python expression; ``questions check`` holds it against the reference).
    """

    expect: Expression | None = None

    @model_validator(mode="after")
    def _says_what(self) -> Self:
        if (self.expect is None) == (self.error is None):
            raise ValueError("an example gives either `expect` (the result) or `error`")
        return self


class GraphRule(_Strict):
    """What the result's autograd graph must hold (``require``) and must not (``refuse``), as
    node type names: a ``MySiLU`` Function's node is ``MySiLUBackward``, ``F.silu`` leaves
    ``SiluBackward0``, ``x * y`` ``MulBackward0``. ``why`` tells a member what it is about."""

    require: Annotated[tuple[NodeName, ...], Field(max_length=10)] = ()
    refuse: Annotated[tuple[NodeName, ...], Field(max_length=20)] = ()
    why: ShortText

    @model_validator(mode="after")
    def _names_something(self) -> Self:
        if not self.require and not self.refuse:
            raise ValueError("a graph rule names a node to `require` or to `refuse`")
        both = sorted(set(self.require) & set(self.refuse))
        if both:
            raise ValueError(f"a node is both required and refused: {', '.join(both)}")
        return self


class Solution(_Strict):
    """Another answer to an exercise, run by ``questions check`` as a member's would be:
    under ``wrong`` it must fail at least one check, under ``also_right`` pass them all.
    ``why`` says what it shows (the mistake, or how it differs from the reference)."""

    code: Code
    why: ShortText


def _python_problem(code: str, mode: Literal["exec", "eval"]) -> str | None:
    """Why ``code`` does not compile (it is compiled only, never run, in the bot)."""
    try:
        compile(code, "<pack>", mode, dont_inherit=True)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:
        return str(exc) or type(exc).__name__
    return None


def _top_level_names(code: str) -> set[str]:
    tree = ast.parse(code)
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):  # `from torch... import silu`
            names.update((a.asname or a.name).partition(".")[0] for a in node.names)
    return names


class Exercise(_ItemBase):
    """Write a function; it is run in the sandbox against visible ``examples`` and hidden
    ``checks``, each compared with the reference ``solution``'s results on the same inputs.

    ``starter`` is the code a member begins from; ``entry`` is the function the checks call;
    ``forbid`` names what a solution may not use (``torch.autograd.grad`` when the point is a
    hand-written backward): an early refusal, while ``graph`` judges what the code built;
    ``time_limit`` bounds one whole submission, in seconds. ``wrong`` and ``also_right`` are
    the grader's own tests: plausible mistakes that must fail, and answers written unlike the
    reference that must pass.
    """

    kind: Literal["exercise"]
    starter: Code
    entry: Identifier
    examples: Annotated[tuple[Example, ...], Field(min_length=1, max_length=5)]
    checks: Annotated[tuple[ExerciseCheck, ...], Field(min_length=1, max_length=20)]
    solution: Code
    forbid: Annotated[tuple[DottedName, ...], Field(max_length=10)] = ()
    graph: GraphRule | None = None
    time_limit: Annotated[float, Field(gt=0, le=MAX_EXERCISE_SECONDS)] = 5.0
    wrong: Annotated[tuple[Solution, ...], Field(max_length=12)] = ()
    also_right: Annotated[tuple[Solution, ...], Field(max_length=6)] = ()

    @model_validator(mode="after")
    def _no_snippet(self) -> Self:
        if self.code is not None or self.show_graph:
            raise ValueError(
                "an exercise has no `code` snippet: its code is `starter` and `solution`"
            )
        others = [
            (f"{field}[{n}].code", other.code)
            for field, solutions in (("wrong", self.wrong), ("also_right", self.also_right))
            for n, other in enumerate(solutions)
        ]
        for field, code in (("starter", self.starter), ("solution", self.solution), *others):
            problem = _python_problem(code, "exec")
            if problem is not None:
                raise ValueError(f"`{field}` is not valid Python: {problem}")
            if self.entry not in _top_level_names(code):
                raise ValueError(f"`{field}` does not define the entry function `{self.entry}`")
        for number, check in enumerate(self.all_checks, 1):
            for field, text in (("args", check.args), ("expect", getattr(check, "expect", None))):
                problem = None if text is None else _python_problem(text, "eval")
                if problem is not None:
                    raise ValueError(
                        f"check {number}: `{field}` is not a Python expression: {problem}"
                    )
        return self

    @property
    def all_checks(self) -> tuple[ExerciseCheck, ...]:
        """The examples, then the hidden checks: the order results come back in."""
        return (*self.examples, *self.checks)


_KINDS: dict[str, type[_ItemBase]] = {
    "flashcard": Flashcard,
    "multiple_choice": MultipleChoice,
    "practice": Practice,
    "open": OpenPrompt,
    "exercise": Exercise,
    "typed": TypedAnswer,
}

_KIND_NAMES: dict[type[_ItemBase], str] = {
    Flashcard: "a flashcard",
    MultipleChoice: "a multiple-choice item",
    Practice: "a practice item",
    OpenPrompt: "an open prompt",
    Exercise: "an exercise",
    TypedAnswer: "a typed-answer item",
}

Item = Annotated[
    Flashcard | MultipleChoice | Practice | OpenPrompt | Exercise | TypedAnswer,
    Field(discriminator="kind"),
]


class Pack(_Strict):
    """A file in ``questions/``: a named set of items (ids unique: checked by the loader)."""

    pack: Slug
    title: ShortText
    description: Text | None = None
    items: Annotated[tuple[Item, ...], Field(min_length=1)]


def prose_checks(item: Item) -> tuple[Check, ...]:
    """The checks that back an item's prose (an exercise's ``checks`` are calls of its
    function instead, judged by running the reference)."""
    return () if isinstance(item, Exercise) else item.checks
