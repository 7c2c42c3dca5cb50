"""The typed-answer grader, mutation-tested: plausible wrong answers fail, right answers
written another way pass, and a key that cannot tell them apart is refused by the schema."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from bot.core.requests import MAX_TYPED
from bot.questions.schema import TypedAnswer
from bot.questions.typed import (
    MAX_ANSWER,
    Mark,
    NumberRule,
    TextRule,
    answer_problem,
    grade_number,
    grade_text,
    normalise,
    parse_number,
)

BACKWARD = TextRule(("backward()", "the backward pass"))
LEAF_GRAD = TextRule(("x.grad",))
DTYPE = TextRule(("float32",))
RETAIN = TextRule(("retain_graph=True", "retain_graph"))
DETACH = TextRule(("detach()",))
GRAD_FN = TextRule(("MulBackward0",))


@pytest.mark.parametrize(
    ("rule", "typed"),
    [
        (BACKWARD, "backward"),
        (BACKWARD, "BACKWARD()"),
        (BACKWARD, "`backward()`"),
        (BACKWARD, "bakcward"),  # a swap is one typo
        (BACKWARD, "backwrd"),
        (BACKWARD, "  the   Backward pass. "),
        (LEAF_GRAD, "x.gard"),
        (LEAF_GRAD, "x grad"),
        (LEAF_GRAD, "xgrad"),
        (DTYPE, "Float32"),
        (DTYPE, "flaot32"),
        (DTYPE, "float 32"),
        (RETAIN, "retain_graph = True"),
        (RETAIN, "retian_graph"),
        (DETACH, ".detach()"),
        (GRAD_FN, "mulbackward0"),
        (GRAD_FN, "MulBakcward0"),
        (GRAD_FN, "mul backward 0"),
        (TextRule(("tensor([0.5, 1.0])",)), "tensor([0.5,1.0])"),
    ],
)
def test_typos_and_other_spellings_are_accepted(rule: TextRule, typed: str) -> None:
    verdict = grade_text(rule, typed)
    assert verdict.mark is Mark.RIGHT, typed
    assert verdict.stored == rule.accept[0]  # the group's right answers count as one


@pytest.mark.parametrize(
    ("rule", "typed"),
    [
        (BACKWARD, "forward"),
        (BACKWARD, "forward()"),
        (LEAF_GRAD, "y.grad"),  # a one-letter name never bends
        (LEAF_GRAD, "x.grad_fn"),
        (LEAF_GRAD, "grad_fn"),
        (DTYPE, "float64"),  # digits never bend
        (DTYPE, "float16"),
        (DTYPE, "int32"),
        (RETAIN, "retain_grad"),
        (RETAIN, "create_graph=True"),
        (RETAIN, "retain_graph=False"),
        (DETACH, "detach_()"),  # the in-place mark is a word of its own
        (GRAD_FN, "MulBackward1"),
        (GRAD_FN, "AddBackward0"),
        (GRAD_FN, ""),
        (TextRule(("0.5",)), "05"),  # a decimal point is not punctuation
        (TextRule(("tensor([0.5, 1.0])",)), "tensor([0.5, 10])"),
        (TextRule(("[1, 0]",)), "10"),
        (GRAD_FN, "```"),
    ],
)
def test_near_misses_on_the_wrong_side_are_refused(rule: TextRule, typed: str) -> None:
    assert grade_text(rule, typed).mark is Mark.WRONG, typed


def test_a_typo_too_many_is_close_and_two_too_many_is_wrong() -> None:
    assert grade_text(BACKWARD, "bckwrd").mark is Mark.RIGHT  # 2 edits on an 8-letter word
    assert grade_text(BACKWARD, "bckwrdd").mark is Mark.CLOSE  # 3: almost
    assert grade_text(BACKWARD, "bkwrdd").mark is Mark.WRONG  # 4: wrong
    assert grade_text(DETACH, "dteahc").mark is Mark.CLOSE  # 2 edits on a 6-letter word
    assert grade_text(LEAF_GRAD, "x.gdr").mark is Mark.WRONG  # a short word is never close
    assert grade_text(BACKWARD, "vackward").mark is Mark.WRONG  # nor a first letter


def test_the_threshold_is_the_items_to_raise() -> None:
    strict = TextRule(("backward()",), threshold=100)
    assert grade_text(strict, "backward").mark is Mark.RIGHT  # normalised, not fuzzy
    assert grade_text(strict, "bakcward").mark is Mark.CLOSE


@pytest.mark.parametrize(
    "typed", ["0.1", "1e-1", ".1", "+0.1", "1/10", "`0.1`", "tensor(0.1000)", "0.100000001"]
)
def test_numbers_written_several_ways_are_one_answer(typed: str) -> None:
    verdict = grade_number(NumberRule(0.1, tolerance=1e-6), typed)
    assert verdict.mark is Mark.RIGHT and verdict.stored == "0.1"


@pytest.mark.parametrize("typed", ["0.11", "-0.1", "1", "0.1001", "inf", "nan", "1/100"])
def test_numbers_outside_the_tolerance_are_wrong(typed: str) -> None:
    assert grade_number(NumberRule(0.1, tolerance=1e-6), typed).mark is Mark.WRONG


def test_relative_tolerance_and_exact_numbers() -> None:
    rule = NumberRule(200.0, relative=0.01)
    assert grade_number(rule, "201.9").mark is Mark.RIGHT
    assert grade_number(rule, "202.1").mark is Mark.WRONG
    exact = NumberRule(12.0)
    assert grade_number(exact, "12").mark is Mark.RIGHT
    assert grade_number(exact, "12.0").mark is Mark.RIGHT
    assert grade_number(exact, "12.000001").mark is Mark.WRONG
    assert grade_number(NumberRule(float("inf")), "inf").mark is Mark.RIGHT


@pytest.mark.parametrize("typed", ["twelve", "12 apples", "1..2", "", "e5", "1/0", "0x10"])
def test_text_where_a_number_is_asked_is_unreadable_not_wrong(typed: str) -> None:
    assert parse_number(typed) is None
    assert grade_number(NumberRule(12.0), typed).mark is Mark.UNREADABLE


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("x" * 100_000, "100,000 characters"),
        ("a\x00b", "control characters"),
        ("grad\x1b[31m", "control characters"),
        ("   ", "Type an answer"),
    ],
)
def test_hostile_answers_are_refused_before_grading(typed: str, says: str) -> None:
    problem = answer_problem(typed)
    assert problem is not None and says in problem


def test_markup_and_mentions_are_normalised_away() -> None:
    assert normalise("<@123> @everyone **x.grad** `y`") == "123 everyone x grad y"
    assert answer_problem("**x.grad**") is None
    assert MAX_ANSWER == MAX_TYPED  # the command table's limit is the grader's


@given(st.text(max_size=300))
def test_any_text_grades_without_raising(text: str) -> None:
    for rule in (BACKWARD, LEAF_GRAD, DTYPE):
        assert grade_text(rule, text).mark in set(Mark)
    assert grade_number(NumberRule(0.5, 0.01), text).mark in set(Mark)
    assert normalise(normalise(text)) == normalise(text)


def _item(**fields: object) -> TypedAnswer:
    base: dict[str, object] = {"id": "t-1", "kind": "typed", "difficulty": "easy", "prompt": "?"}
    return TypedAnswer.model_validate(base | fields)


def test_the_schema_refuses_an_ambiguous_key() -> None:
    with pytest.raises(
        ValidationError, match=r"ambiguous key: it accepts the wrong answer 'x\.grd'"
    ):
        _item(accept=["x.grad"], wrong=["x.grd"])
    with pytest.raises(ValidationError, match="calls close"):
        _item(accept=["backward"], wrong=["bckwrdd"])
    assert _item(accept=["x.grad"], wrong=["y.grad", "grad_fn"]).grade("x.grad").mark is Mark.RIGHT


def test_the_schema_refuses_a_lenient_threshold_or_a_key_torch_does_not_print() -> None:
    with pytest.raises(ValidationError, match="greater than or equal to 50"):
        _item(accept=["ab"], threshold=10)
    with pytest.raises(ValidationError, match="no letters or digits"):
        _item(accept=["()"])
    with pytest.raises(ValidationError, match="exactly one of `accept`"):
        _item(accept=["a"], number={"value": 1})
    code = "print(12.0)"
    with pytest.raises(ValidationError, match=r"does not accept '12\.0'"):
        _item(number={"value": 6}, code=code, expect_stdout="12.0")
    assert _item(number={"value": 12}, code=code, expect_stdout="12.0").shown_answer == "12"


def test_a_value_key_needs_code_wrong_expressions_and_valid_python() -> None:
    value = {"of": "x.grad", "also_right": ["[3.0, 3.0]"]}
    code = "import torch\nx = torch.ones(2)\nprint(x)"
    with pytest.raises(ValidationError, match="evaluated after the item's `code`"):
        _item(value=value, wrong=["[1.0]"])
    with pytest.raises(ValidationError, match="needs `wrong` expressions"):
        _item(value=value, code=code, expect_stdout="tensor([1., 1.])")
    with pytest.raises(ValidationError, match=r"`value.also_right` '\[3.0,' is not a Python"):
        _item(
            value={"of": "x", "also_right": ["[3.0,"]},
            code=code,
            expect_stdout="tensor([1., 1.])",
            wrong=["1"],
        )
    item = _item(value=value, code=code, expect_stdout="tensor([1., 1.])", wrong=["[1.0]"])
    assert item.shown_answer == "[3.0, 3.0]"
    with pytest.raises(TypeError):
        item.grade("[3.0, 3.0]")  # judged in the jail, never by text
