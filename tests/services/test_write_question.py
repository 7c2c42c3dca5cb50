"""/write: a question written in chat becomes a `community` item, checked like a pack upload
(the linter, then its code in the real sandbox); admins add it, members see the check."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.core.errors import BadInput
from bot.questions.written import WrittenQuestion
from bot.services.bundle import Services
from tests.helpers import member

pytestmark = pytest.mark.slow

ANN = member("ann")
ADMIN = member("root", admin=True)
CODE = (
    "import torch\nx = torch.ones(2, requires_grad=True)\n(x * x).sum().backward()\nprint(x.grad)\n"
)


@pytest.fixture
def sandbox_options() -> dict[str, object]:
    return {"pool_size": 1, "timeout": 20.0}


def _question(**fields: str) -> WrittenQuestion:
    base = {
        "prompt": "What does `x.grad` hold after `(x * x).sum().backward()` for x = [1, 1]?",
        "choices": "* tensor([2., 2.])\ntensor([1., 1.])\nNone: x is a leaf",
        "explanation": "d(x²)/dx = 2x, and x is all ones.",
        "code": CODE,
        "expected": "tensor([2., 2.])",
    }
    return WrittenQuestion(**{**base, **fields})  # type: ignore[arg-type]


async def test_an_admins_question_is_checked_in_the_sandbox_and_added(
    sandboxed_service: Services, tmp_path: Path
) -> None:
    reply = await sandboxed_service.packs.write_question(ADMIN, _question())
    text = reply.plain_text()
    assert reply.ephemeral and reply.title is not None
    assert reply.title.startswith("✍️ `community-1` — ✅ community.yaml: pack community")
    assert "Installed community — Written by the group (1 question)" in text
    saved = yaml.safe_load((tmp_path / "packs" / "community.yaml").read_text())
    [item] = saved["items"]
    assert item["id"] == "community-1" and item["kind"] == "multiple_choice"
    assert item["expect_stdout"] == "tensor([2., 2.])\n"
    assert item["choices"][0] == {"text": "tensor([2., 2.])", "correct": True}
    draft = await sandboxed_service.quiz.post_question(ANN, pack="community")
    assert draft.post.question_id == "community-1"

    second = await sandboxed_service.packs.write_question(
        ADMIN, WrittenQuestion(prompt="What is a leaf tensor?", answer="One you made yourself.")
    )
    assert "1 new" in second.plain_text()
    saved = yaml.safe_load((tmp_path / "packs" / "community.yaml").read_text())
    assert [i["id"] for i in saved["items"]] == ["community-1", "community-2"]
    assert saved["items"][1]["kind"] == "flashcard"


async def test_wrong_code_claims_and_members_questions_are_not_added(
    sandboxed_service: Services, tmp_path: Path
) -> None:
    wrong = await sandboxed_service.packs.write_question(
        ADMIN, _question(expected="tensor([1., 1.])")
    )
    text = wrong.plain_text()
    assert "community.yaml:" in text and "community-1" in text and "differs" in text
    assert "Not added: its code did not do what you said" in text
    assert not (tmp_path / "packs" / "community.yaml").exists()

    members = await sandboxed_service.packs.write_question(ANN, _question())
    assert "Your question is valid." in members.plain_text()  # queued by /suggestions

    assert not (tmp_path / "packs" / "community.yaml").exists()

    duplicate = await sandboxed_service.packs.write_question(
        ADMIN, _question(prompt="When is the autograd graph built?", code="", expected="")
    )
    assert "near-duplicate" in duplicate.plain_text() or "duplicate" in duplicate.plain_text()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"prompt": " "}, "prompt: write the question"),
        ({"choices": "tensor([2., 2.])\ntensor([1., 1.])"}, "mark exactly one choice as right"),
        ({"choices": "", "answer": ""}, "give the choices, one per line"),
        ({"expected": ""}, "expected: say what the code prints"),
        ({"code": "", "expected": "2"}, "code: an expected output needs the code"),
    ],
)
async def test_form_problems_name_the_field(
    sandboxed_service: Services, fields: dict[str, str], message: str
) -> None:
    with pytest.raises(BadInput, match=message):
        await sandboxed_service.packs.write_question(ADMIN, _question(**fields))
