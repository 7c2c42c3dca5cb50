"""Typed answers on the console, end to end: a real console process on a real SQLite file,
reading the typed-mini pack. Slack and Discord have their own tests over the fakes
(``slack/test_typed_answers.py``, ``discord/test_typed_answers.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapters.test_console import _run_console

TYPED_PACKS = Path(__file__).parents[1] / "data" / "typed_packs"

pytestmark = pytest.mark.timeout(120)


def _texts(out: list[dict[str, object]], member: str) -> list[str]:
    return [str(line["text"]) for line in out if line.get("member") == member]


def test_typed_text_answers_are_graded_privately_and_revealed_without_names(
    tmp_path: Path,
) -> None:
    script = "\n".join(
        [
            "/quiz typed-mini --tag method",
            "/answer #999 x",  # no such question
            "/as ann",
            "/answer bckwrdd",  # almost: not final
            "/answer bakcward",  # a slip: right
            "/as bob",
            "/answer forward",
            "/answer backward",  # too late: the first answer counts
            "/as cy",
            "/answer forward",
            "/as dee",
            "/answer " + "x" * 5000,
            "/answer a\x07b",
            "/as fay",
            *["/answer bckwrdd"] * 4,  # three free "almost"s; the fourth counts, as close
            "/as me",
            "/reveal",
            "/as eve",
            "/answer backward",  # after the close
        ]
    )
    out = _run_console(tmp_path / "c.sqlite3", script + "\n", packs=TYPED_PACKS)
    posts = [line for line in out if line["kind"] == "post"]
    assert len(posts) == 1
    post_id = posts[0]["post_id"]
    assert posts[0]["answer_with"] == f"type your answer with /answer #{post_id} YOUR ANSWER"
    ann = _texts(out, "ann")
    assert "Almost: check the spelling" in ann[1]
    assert "Correct!" in ann[2] and "Accepted as: backward" in ann[2]
    bob = _texts(out, "bob")
    assert "Not quite" in bob[1] and "forward" not in bob[1]
    assert "already answered" in bob[2]
    dee = _texts(out, "dee")
    assert "5,000 characters" in dee[1] and "at most 200" in dee[1]
    assert "control characters" in dee[2]
    [edit] = [line for line in out if line["kind"] == "edit"]
    revealed = str(edit["text"])
    assert "`backward` (also accepted: `loss.backward()`)" in revealed
    assert "right: 1 (25%) · close: 1 (25%) · wrong: 2 (50%)" in revealed
    assert "Most common wrong answers: `forward` (2), `bckwrdd` (1)" in revealed
    fay = _texts(out, "fay")
    assert all("Almost" in text for text in fay[1:4]) and "Not quite" in fay[4]
    for name in ("ann", "bob", "cy", "dee", "fay"):
        assert name not in revealed
    assert "closed" in _texts(out, "eve")[1]


def test_typed_numbers_accept_any_spelling_within_tolerance(tmp_path: Path) -> None:
    script = "\n".join(
        [
            "/quiz typed-mini --tag number",
            "/answer twelve",  # not a number: try again
            "/answer 1.2e1",
            "/as bob",
            "/answer 12.5",
            "/as me",
            "/reveal",
        ]
    )
    out = _run_console(tmp_path / "c.sqlite3", script + "\n", packs=TYPED_PACKS)
    post = next(line for line in out if line["kind"] == "post")
    assert "print(x.grad.item())" in str(post["text"])
    me = _texts(out, "me")
    assert "not a number I can read" in me[0] and "did not count" in me[0]
    assert "Correct!" in me[1]
    assert "Not quite" in _texts(out, "bob")[1]
    [edit] = [line for line in out if line["kind"] == "edit"]
    assert "`12`" in str(edit["text"]) and "`12.5` (1)" in str(edit["text"])


def test_a_typed_review_card_is_answered_by_typing_and_its_grade_changed_once(
    tmp_path: Path,
) -> None:
    script = "\n".join(
        [
            "/quiz typed-mini --tag leaf",
            "/answer y.grad",
            "/clock advance 2d",
            "/review",
            "/review y.grad",  # wrong: again, with what was typed against what was expected
            "/review fix good",
            "/review fix easy",  # once only
        ]
    )
    out = _run_console(tmp_path / "c.sqlite3", script + "\n", packs=TYPED_PACKS)
    card = next(line for line in out if line.get("kind") == "review")
    assert card["answer_with"] == "type your answer with /review YOUR ANSWER"
    texts = [str(line["text"]) for line in out]
    graded = next(t for t in texts if "Not quite. Graded" in t)
    assert "typed:    y.grad" in graded and "expected: x.grad" in graded
    assert any("/review fix again|hard|good|easy" in t for t in texts)
    assert any("Changed to good" in t for t in texts)
    assert "after a typed card" in texts[-1]


@pytest.mark.slow
def test_a_value_of_code_is_evaluated_in_the_jail_and_another_spelling_agrees(
    tmp_path: Path,
) -> None:
    script = "\n".join(
        [
            "/quiz typed-mini --tag value",
            "/answer [3.0, 3.0",  # not an expression: costs nothing
            "/answer sum(range(10**12))",  # loops past the time limit: costs nothing
            "/answer torch.full((2,), 3.0)",  # another spelling of tensor([3., 3.])
            "/as bob",
            "/answer torch.tensor([3, 3])",  # an int64 tensor: the dtype decides
            "/as me",
            "/reveal",
        ]
    )
    out = _run_console(tmp_path / "c.sqlite3", script + "\n", packs=TYPED_PACKS)
    me = _texts(out, "me")
    assert "not a Python expression" in me[0] and "did not count" in me[0]
    assert "did not finish within 5 s" in me[1]
    assert "Correct!" in me[2]
    assert "Not quite" in _texts(out, "bob")[1]
    [edit] = [line for line in out if line["kind"] == "edit"]
    assert "right: 1 (50%)" in str(edit["text"]) and "`torch.tensor([3, 3])` (1)" in str(
        edit["text"]
    )
