"""A member who always answers the same letter scores at chance, over 200 posts of a pack.

Played through the real ``studybot console`` (as a member would: ``/quiz``, then ``/answer
A``), on every shipped pack with choices, and on a copy of one whose right answers were all
moved first (as authors tend to write them): the order each post draws must leave nothing to
gain from a habit.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[2]
SHIPPED = ("pytorch-dynamic-graphs", "pytorch-autograd-essentials")
POSTS = 200


def _play(db: Path, pack: str, letter: str, packs: Path | None = None) -> tuple[int, float, float]:
    """(right answers, chance's expected count, its standard deviation) over ``POSTS`` posts."""
    script = f"/quiz {pack} --kinds mc,practice\n/answer {letter}\n" * POSTS
    extra = ["--packs", str(packs)] if packs is not None else []
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--json", "--db", str(db), *extra],
        input=script,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    right, expected, variance, posts = 0, 0.0, 0.0, 0
    for post, reply in zip(lines[::2], lines[1::2], strict=True):
        assert post["kind"] == "post", post
        choices = post["choices"]
        if letter not in choices:  # a self-graded practice problem: no letters to pick
            continue
        posts += 1
        chance = 1 / len(choices)
        expected += chance
        variance += chance * (1 - chance)
        right += "Correct" in str(reply["text"])
    assert posts >= POSTS // 2
    return right, expected, math.sqrt(variance)


@pytest.mark.parametrize("pack", SHIPPED)
def test_always_the_same_letter_scores_at_chance_on_a_shipped_pack(
    tmp_path: Path, pack: str
) -> None:
    for letter in ("A", "B"):
        right, expected, spread = _play(tmp_path / f"{letter}.sqlite3", pack, letter)
        assert abs(right - expected) <= 4 * spread, (letter, right, expected)


def test_a_pack_whose_right_answers_all_come_first_still_gives_chance(tmp_path: Path) -> None:
    folder = tmp_path / "packs"
    folder.mkdir()
    data = yaml.safe_load((ROOT / "questions" / "pytorch-autograd-essentials.yaml").read_text())
    data["pack"] = "first-always"
    for item in data["items"]:
        choices = item.get("choices")
        if choices:
            choices.sort(key=lambda choice: not choice.get("correct", False))
            item.pop("checks", None)  # they name choices by their place
    (folder / "first.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    right, expected, spread = _play(tmp_path / "first.sqlite3", "first-always", "A", folder)
    # In the file's order this would be every answer right.
    assert abs(right - expected) <= 4 * spread, (right, expected)
