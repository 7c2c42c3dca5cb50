"""What a study group tripped over in its first week (issue 29, frictions 1 and 2).

The README and the console's banner say "try /quiz, then /answer B": in a fresh database with
the bundled packs that must work, every console post must say which commands answer it, a
member may ask for a kind, and an earlier open question can still be answered by its number
after a newer one was posted: in the console, and with Slack's text commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def _console(db: Path, script: str, *extra: str) -> list[dict[str, object]]:
    """The real ``studybot console`` on a fresh file, with the bundled packs (no --packs)."""
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--json", "--db", str(db), *extra],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("attempt", range(3))
def test_the_first_instruction_works_in_a_fresh_database(tmp_path: Path, attempt: int) -> None:
    out = _console(tmp_path / f"fresh{attempt}.sqlite3", "/quiz\n/answer B\n")
    post, reply = out[0], out[1]
    assert post["kind"] == "post" and "B" in post["choices"]  # type: ignore[operator]
    assert post["answer_with"] == f"answer with /answer #{post['post_id']} " + "|".join(
        post["choices"]  # type: ignore[arg-type]
    )
    assert reply["kind"] == "reply" and reply["member"] == "me"
    assert "Correct!" in str(reply["text"]) or "Not quite" in str(reply["text"])
    assert not [line for line in out if line["kind"] == "error"]


def test_quiz_takes_a_kind_and_a_flashcard_post_names_show(tmp_path: Path) -> None:
    out = _console(
        tmp_path / "kinds.sqlite3",
        "/quiz --kinds flashcard\n/show\n/answer good\n/quiz --kinds mc\n/quiz --kinds poem\n",
    )
    card, back, graded, mc, refused = out
    pid = card["post_id"]
    assert card["choices"] == ["again", "hard", "good", "easy"]
    assert card["answer_with"] == f"/show #{pid} to see the back, then /answer #{pid} " + (
        "again|hard|good|easy"
    )
    assert f"→ /show #{pid}" in _printed(tmp_path / "kinds2.sqlite3", "/quiz --kinds flashcard\n")
    assert back["ephemeral"] and "Answer (only you can see this)" in str(back["text"])
    assert "Nice, you knew it!" in str(graded["text"])
    assert mc["kind"] == "post" and mc["choices"][:2] == ["A", "B"]  # type: ignore[index]
    assert refused["kind"] == "error" and "'poem' is not a kind" in str(refused["text"])


def _printed(db: Path, script: str) -> str:
    """What a person at the terminal reads (not the JSON lines)."""
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--db", str(db)],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_an_earlier_open_question_is_answered_by_its_number(tmp_path: Path) -> None:
    script = "\n".join(
        [
            "/quiz --kinds mc",  # #1, the morning's question
            "/quiz --kinds mc",  # #2, newer
            "/answer #1 A",
            "/answer 2 B",
            "/as bob",
            "/answer C",  # no number: the newest open question, #2
            "/show #1",  # a multiple-choice question has no back
            "/as me",
            "/reveal #1",
            "/answer #1 A",
            "/answer #99 A",
            "/answer #1",
        ]
    )
    out = _console(tmp_path / "ids.sqlite3", script + "\n")
    first, second = out[0], out[1]
    assert (first["post_id"], second["post_id"]) == (1, 2)
    by_me_1, by_me_2, bob_newest = out[2], out[3], out[5]
    for reply in (by_me_1, by_me_2, bob_newest):
        assert "Correct!" in str(reply["text"]) or "Not quite" in str(reply["text"])
    assert "you picked A" in str(by_me_1["text"]) or "Correct!" in str(by_me_1["text"])
    assert out[4]["text"] == "you are now bob"
    later = out[6:]
    texts = [str(line["text"]) for line in later]
    assert any(line["kind"] == "edit" and line["post_id"] == 1 for line in later)
    assert any("has closed" in t for t in texts)  # answering #1 after its reveal
    assert "That question no longer exists." in texts  # #99
    assert later[-1]["kind"] == "error"
    assert later[-1]["text"] == "usage: /answer [#ID] ANSWER: ANSWER is missing"


def test_one_channel_shows_one_zone_after_a_timezone_change(tmp_path: Path) -> None:
    """Friction 9: after `/settings timezone Europe/Berlin` at 09:00 UTC, the posts show
    Berlin times at once, so `/history` and `/clock` do too; the days still end at UTC
    midnight until Berlin's next midnight, and `/clock` says so, once."""
    # The second question is one with a closing time (a discussion prompt shows none).
    script = "/quiz\n/settings timezone Europe/Berlin\n/quiz --kinds mc\n/history\n/clock\n"
    out = _console(tmp_path / "zones.sqlite3", script, "--clock", "2026-03-04T09:00:00Z")
    history = next(line for line in out if "Times in" in str(line["text"]))
    assert "Times in Europe/Berlin." in str(history["text"])
    assert "Wed 04 Mar 10:00" in str(history["text"])  # 09:00 UTC, shown in Berlin time
    newer_post = [line for line in out if line["kind"] == "post"][1]
    assert "(Europe/Berlin)" in str(newer_post["text"])
    clock = str(out[-1]["text"])
    assert clock.startswith("the time is Wed 2026-03-04 10:00 Europe/Berlin")
    assert clock.endswith("; days still end at midnight UTC until Thu 05 Mar 00:00 (Europe/Berlin)")
    later = _console(tmp_path / "zones.sqlite3", "/clock\n", "--clock", "2026-03-05T09:00:00Z")
    assert "days still end" not in str(later[-1]["text"])
