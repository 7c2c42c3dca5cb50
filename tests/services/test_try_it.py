""" "Try it": a question's snippet, or a choice's code, in an editable /run, offered only
once the member has answered or the question has closed (so it never gives the answer away)."""

from __future__ import annotations

import pytest

from bot.core import replies
from bot.core.errors import BadInput
from bot.core.messages import Action
from bot.questions.schema import MultipleChoice
from bot.services.bundle import Services
from tests.helpers import member

ANN, BOB, ADMIN = member("ann"), member("bob"), member("root", admin=True)

CHOICES = MultipleChoice.model_validate(
    {
        "id": "t-mc",
        "kind": "multiple_choice",
        "difficulty": "easy",
        "prompt": "Which line gives x a gradient?",
        "code": "import torch\nx = torch.ones(2, requires_grad=True)\nprint(x.grad)\n",
        "expect_stdout": "None\n",
        "choices": [
            {"text": "`(x * 2).sum().backward()`", "correct": True},
            {"text": "`x.detach().sum()`"},
            {"text": "Nothing can"},
        ],
    }
)


def test_try_it_offers_the_snippet_and_each_choice_that_shows_code() -> None:
    buttons = replies.try_buttons(CHOICES, 7)
    assert [(b.action, b.value, b.label) for b in buttons] == [
        (Action.TRY, "code", "Try it"),
        (Action.TRY, "A", "Try A"),
        (Action.TRY, "B", "Try B"),
    ]
    assert replies.try_code(CHOICES, "B") == (
        "import torch\nx = torch.ones(2, requires_grad=True)\nprint(x.grad)\n\n"
        "# choice B:\nx.detach().sum()\n"
    )
    assert replies.try_code(CHOICES, "C") is None
    assert replies.try_code(CHOICES, "Z") is None


async def test_try_it_waits_for_the_answer_or_the_close(service: Services) -> None:
    draft = await service.quiz.post_question(ADMIN, pack="mini", kinds=["practice"])
    post = draft.post.id
    assert not [b for b in draft.message.buttons if b.action is Action.TRY]
    with pytest.raises(BadInput, match="Answer first"):
        await service.quiz.try_it(ANN, post, "code")

    reply = await service.quiz.answer(ANN, post, "B")
    assert [b.value for b in reply.buttons if b.action is Action.TRY] == ["code"]
    form = await service.quiz.try_it(ANN, post, "code")
    assert "(x * 3).backward()" in form.code and form.title == f"Try the snippet of #{post}"

    with pytest.raises(BadInput, match="Answer first"):
        await service.quiz.try_it(BOB, post, "code")
    edit = await service.quiz.reveal(ADMIN, post)
    assert [b.value for b in edit.message.buttons if b.action is Action.TRY] == ["code"]
    assert "(x * 3).backward()" in (await service.quiz.try_it(BOB, post, "code")).code


def test_a_choice_that_is_a_value_offers_no_try() -> None:
    """Values, printed tensors and text that is not Python run nothing of their own: a "Try"
    for them would run the plain snippet."""
    values = MultipleChoice.model_validate(
        {
            "id": "t-values",
            "kind": "multiple_choice",
            "difficulty": "easy",
            "prompt": "What does this print?",
            "code": "import torch\nprint(torch.ones(2).tolist(), True)\n",
            "expect_stdout": "[1.0, 1.0] True\n",
            "choices": [
                {"text": "`[1.0, 1.0] True`", "correct": True},
                {"text": "`tensor([1., 1.])`"},
                {"text": "`None`"},
                {"text": "`[2.0, 2.0]` and `-1`"},
                {"text": "`torch.ones(2).sum()`"},
            ],
        }
    )
    labels = [b.label for b in replies.try_buttons(values, 3)]
    assert labels == ["Try it", "Try E"]
