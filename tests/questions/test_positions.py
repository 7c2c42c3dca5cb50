"""``questions lint`` warns when a pack's right answers crowd one choice position."""

from __future__ import annotations

from pathlib import Path

from bot.questions.lint import lint_packs, validate_upload


def _pack(right_at: list[int], choices: int = 4) -> str:
    lines = ["pack: crowd", "title: Crowd", "items:"]
    for number, place in enumerate(right_at):
        lines += [
            f"  - id: c-{number}",
            "    kind: multiple_choice",
            "    difficulty: easy",
            f"    prompt: Question number {number} about a topic of its own, {number * 7919}?",
            "    choices:",
        ]
        for index in range(choices):
            lines.append(f"      - text: Option {index} of question {number}")
            if index == place:
                lines.append("        correct: true")
    return "\n".join(lines) + "\n"


def _warnings(text: str, tmp_path: Path) -> list[str]:
    (tmp_path / "crowd.yaml").write_text(text)
    return [str(p) for p in lint_packs(tmp_path).problems if "right answer is choice" in str(p)]


def test_right_answers_all_first_are_named(tmp_path: Path) -> None:
    found = _warnings(_pack([0] * 12), tmp_path)
    assert len(found) == 1
    assert "the right answer is choice 1 in 12 of 12 items" in found[0]
    assert "always answering A pays" in found[0]
    # An upload in chat says the same.
    _, problems = validate_upload(_pack([0] * 12).encode(), "crowd.yaml")
    upload = [p.message for p in problems if "right answer is choice" in p.message]
    assert len(upload) == 1 and upload[0] in found[0]


def test_right_answers_spread_over_the_positions_pass(tmp_path: Path) -> None:
    assert _warnings(_pack([0, 1, 2, 3] * 3), tmp_path) == []
    # A little luck is not a pattern: 5 of 12 at A, where 3 are expected.
    assert _warnings(_pack([0, 0, 0, 0, 0, 1, 2, 3, 1, 2, 3, 1]), tmp_path) == []


def test_one_crowded_position_that_is_not_the_first(tmp_path: Path) -> None:
    found = _warnings(_pack([2] * 10 + [0, 1]), tmp_path)
    assert len(found) == 1 and "choice 3 in 10 of 12" in found[0]
