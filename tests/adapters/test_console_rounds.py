"""A live round in the console: `/clock advance` plays it through, as a running bot would."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.test_console import _run_console


def test_clock_advance_plays_a_whole_round_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "round.sqlite3",
        "/round start --questions 2 --seconds 20\n"
        "/answer A\n/as bob\n/answer B\n/as ann\n/round stop\n/as me\n"
        "/clock advance 2m\n"
        "/round start --questions 0\n/round start --seconds x\n",
    )
    texts = [str(line["text"]) for line in out]
    assert texts[0].startswith("🏁 A round of 2 questions starts now")
    questions = [line for line in out if line["kind"] == "post" and line["post_id"]]
    assert [str(q["text"]).split(" · ")[0] for q in questions] == [
        "🏁 Question 1 of 2",
        "🏁 Question 2 of 2",
    ]
    assert "20 s to answer, until 09:00:23 (UTC)" in str(questions[0]["text"])
    assert any("Only whoever started the round, or an admin" in t for t in texts)
    reveals = [line for line in out if line["kind"] == "edit"]
    assert len(reveals) == 2 and all("Who got it right" in str(r["text"]) for r in reveals)
    [board] = [line for line in out if str(line["text"]).startswith("🏁 Round board")]
    assert board["at"] == "2026-03-04T09:00:49+00:00"  # the last deadline, then a second
    assert "2 of 2 questions · started by me" in str(board["text"])
    errors = [line for line in out if line["kind"] == "error" or "not 0" in str(line["text"])]
    assert "A round has 1 to 50 questions, not 0." in texts
    assert any("--seconds takes a whole number, not `x`" in str(e["text"]) for e in errors)


def test_an_accuracy_round_and_a_skip_vote_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "skip.sqlite3",
        "/round start --questions 2 --seconds 20 --scoring accuracy\n"
        "/clock advance 4s\n/answer A\n/as bob\n/answer B\n"
        "/clock advance 30s\n"
        "/as carl\n/round skip\n/as me\n/round skip\n/as bob\n/round skip\n"
        "/clock advance 2m\n/round start --scoring fastest\n",
    )
    texts = [str(line["text"]) for line in out]
    assert "Accuracy first: every right answer scores its points" in texts[0]
    assert any("Only players vote to skip" in t for t in texts)
    assert any("Your vote to skip question 2 is in: 1 of the 2 needed." in t for t in texts)
    assert any(t.startswith("⏭ Question 2 is skipped") for t in texts)
    reveals = [str(line["text"]) for line in out if line["kind"] == "edit"]
    assert "The players voted to skip it: this question scores nothing." in reveals[-1]
    [board] = [t for t in texts if t.startswith("🏁 Round board")]
    assert "/1 right" in board and "s on right answers" in board
    assert "A round's scoring is `speed` or `accuracy`, not `fastest`." in texts


def test_a_team_round_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "teams.sqlite3",
        "/round start --teams 1\n/round start --teams 50\n/round start --talk 10\n"
        "/round start --questions 1 --seconds 20 --teams 2\n"
        "/clock advance 4s\n/answer A\n/as bob\n/answer B\n/as carl\n/answer A\n"
        "/clock advance 2m\n",
    )
    texts = [str(line["text"]) for line in out]
    assert "A team round has 2 to 8 teams, not 1." in texts
    assert "A team round has 2 to 8 teams, not 50." in texts
    assert "A team talk is for team rounds: add --teams N." in texts
    assert any("2 teams" in t and "🔴 Red, 🔵 Blue" in t for t in texts)
    [board] = [line for line in out if str(line["text"]).startswith("🏁 Round board")]
    text = str(board["text"])
    assert "Teams" in text and "pts a player" in text
    assert "🔴 Red — " in text and "🔵 Blue — " in text


def test_teams_made_from_roles_in_the_console(tmp_path: Path) -> None:
    """`--teams @red,@blue`: each player plays for the role they hold, whatever the sizes;
    a member holding none of the roles is refused and nothing of theirs is stored."""
    out = _run_console(
        tmp_path / "roles.sqlite3",
        "/as zed\n/roles ann --give red\n/as me\n"
        "/roles ann --give red\n/roles bob --give blue\n/roles carl --give blue\n"
        "/round start --teams @red,@green\n/round start --teams @red,@RED\n"
        "/round start --teams @red\n"
        "/round start --questions 1 --seconds 20 --teams @red,@blue\n"
        "/clock advance 4s\n/as ann\n/answer A\n/as bob\n/answer A\n/as carl\n/answer B\n"
        "/as dora\n/answer A\n/clock advance 2m\n",
    )
    texts = [str(line["text"]) for line in out]
    assert any("Only admins give or take roles" in t for t in texts)
    assert "There is no role `@green` here, so no team can be made of it." in texts
    assert "`@RED` is named twice: each team is a different role." in texts
    assert any("A team round has 2 to 8 teams, not 1" in t for t in texts)
    [start] = [t for t in texts if t.startswith("🏁 A round of")]
    assert "2 teams (🔴 @red, 🔵 @blue): you play for the first of these roles you hold" in start
    refused = [t for t in texts if "hold none of them" in t]
    assert refused == [
        "This round's teams are roles, and you hold none of them (@red or @blue): ask an "
        "admin to give you one, then answer."
    ]
    reveal = [str(line["text"]) for line in out if line["kind"] == "edit"][-1]
    assert "dora" not in reveal  # refused, so not scored
    [board] = [t for t in texts if t.startswith("🏁 Round board")]
    # Role teams are not balanced: blue has both its role holders, red its one.
    assert "🔴 @red — " in board and "1 player ·" in board
    assert "🔵 @blue — " in board and "2 players ·" in board
    assert "dora" not in board
