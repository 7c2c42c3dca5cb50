"""A scripted console session, run as a user would: `studybot console --json` on a pipe."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import TEST_PACKS
from tests.helpers import FRESH

SCRIPT = """\
# a comment, then a blank line

/quiz mini --difficulty medium
/answer B
/answer A
/as bob
/answer A
/reveal
/as root --admin
/reveal
/leaderboard
/stats bob
/quiz mini --difficulty easy --tag autograd
/show
/answer knew
/clock advance 1d
/clock set 2026-03-10T08:00:00Z
/leaderboard month
/frobnicate
/answer
just chatting
/quiz nosuchpack
/leaderboard forever
"""


def _run_console(
    db: Path, script: str, *extra: str, packs: Path = TEST_PACKS
) -> list[dict[str, object]]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "console",
            "--json",
            "--db",
            str(db),
            "--packs",
            str(packs),
            "--clock",
            "2026-03-04T09:00:00+00:00",
            *extra,
        ],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_scripted_session_json_lines(tmp_path: Path) -> None:
    db = tmp_path / "console.sqlite3"
    out = _run_console(db, SCRIPT)
    kinds = [line["kind"] for line in out]
    for line in out:
        assert {"kind", "channel", "member", "ephemeral", "text", "at"} <= set(line)

    post = out[0]
    assert post["kind"] == "post" and post["channel"] == "general" and post["member"] is None
    assert post["question_id"] == "d-mc-1" and post["choices"] == ["A", "B"]
    assert post["at"] == "2026-03-04T09:00:00+00:00"
    assert "When is the autograd graph built?" in str(post["text"])

    right, twice, _as_bob, wrong = out[1:5]
    assert right["member"] == "me" and right["ephemeral"] and "Correct! +20" in str(right["text"])
    assert "already answered" in str(twice["text"]) and twice["kind"] == "reply"
    assert wrong["member"] == "bob" and "Not quite" in str(wrong["text"])

    refused = out[5]  # bob did not ask for the question
    assert refused["kind"] == "reply" and "Only the member who asked" in str(refused["text"])

    edit = out[7]
    assert edit["kind"] == "edit" and edit["post_id"] == post["post_id"]
    assert "B. As the forward pass runs — 1 (50%)" in str(edit["text"])

    # The reveal's asker is told privately where the answer is (as on Slack).
    assert out[8]["ephemeral"] and "#1 is closed; its answer is on the post" in str(out[8]["text"])
    board = out[9]
    assert "me — 20 pts" in str(board["text"])
    assert "Stats for bob" in str(out[10]["text"])

    card = out[11]
    grades = ["again", "hard", "good", "easy"]
    assert card["kind"] == "post" and card["choices"] == grades
    back = out[12]
    assert back["ephemeral"] and back["choices"] == grades
    assert "+5 points" in str(out[13]["text"])

    # The scheduler closes the flashcard when its quiz window ends, on the way through the day.
    closed = out[14]
    assert closed["kind"] == "edit" and closed["post_id"] == card["post_id"]
    assert closed["at"] == "2026-03-04T09:30:00+00:00" and "closed" in str(closed["text"])
    assert out[15]["text"] == "the time is now Thu 2026-03-05 09:00 UTC (2026-03-05T09:00:00+00:00)"
    assert out[16]["at"] == "2026-03-10T08:00:00+00:00"
    assert "root — 5 pts" in str(out[17]["text"])  # root answered the flashcard, as root

    errors = [line for line in out if line["kind"] == "error"]
    assert [e["text"] for e in errors] == [
        "unknown command /frobnicate; try /help",
        "usage: /answer [#ID] ANSWER: ANSWER is missing",
        "commands start with /; try /help",
        "usage: /leaderboard [week|month|all|streaks] [here]: `forever` is not a window",
    ]
    assert "no pack called `nosuchpack`" in str(out[-2]["text"])
    assert "`forever` is not a window" in str(out[-1]["text"])
    assert kinds.count("post") == 2 and kinds.count("edit") == 2


def test_state_survives_a_restart_on_the_same_file(tmp_path: Path) -> None:
    db = tmp_path / "console.sqlite3"
    _run_console(db, "/quiz mini --difficulty medium\n/answer B\n")
    out = _run_console(db, "/answer A\n/stats\n")
    assert "already answered" in str(out[0]["text"])
    assert "Points: 20 all time" in str(out[1]["text"])
    assert "Spaced repetition:\nCards: 1" in str(out[1]["text"])  # the same figures as text
    [picture] = out[1]["attachments"]  # type: ignore[misc]
    assert picture["filename"] == "study-stats.png"
    saved = Path(picture["path"])
    assert saved.parent == tmp_path / "console-files"
    assert saved.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_bad_clock_is_a_one_line_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bot",
            "console",
            "--db",
            str(tmp_path / "x.sqlite3"),
            "--clock",
            "tomorrow",
        ],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("--clock: 'tomorrow' is not an ISO8601 time")
    assert "Traceback" not in proc.stderr


def test_run_in_the_console_one_line_and_fenced(tmp_path: Path) -> None:
    script = (
        "/run print(6 * 7)\n"
        "/run\n"
        "```python\n"
        "import torch\n"
        "x = torch.tensor(2.0, requires_grad=True)\n"
        "(x ** 3).backward()\n"
        "print(x.grad.item())\n"
        "```\n"
        "/run\n"
        "print('no fence')\n"
    )
    out = _run_console(tmp_path / "run.sqlite3", script)
    first, second, refused = out
    assert first["kind"] == "reply" and first["ephemeral"] is False
    assert "✅ Ran in" in str(first["text"]) and "    42" in str(first["text"])
    assert "    12.0" in str(second["text"])  # d(x^3)/dx at 2, computed by real torch
    assert refused["kind"] == "error" and "fenced block" in str(refused["text"])


def test_graph_and_figures_in_the_console_are_saved_beside_the_database(tmp_path: Path) -> None:
    script = (
        "/graph --of y\n"
        "```python\n"
        "import torch\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "y = (x * 2).sum()\n"
        "z = y.exp()\n"
        "```\n"
        "/run import matplotlib.pyplot as plt; plt.plot([1, 2]); plt.show()\n"
    )
    graph, figure = _run_console(tmp_path / "g.sqlite3", script)
    text = str(graph["text"])
    assert "SumBackward0" in text and "leaf x (3) float32, requires_grad" in text
    assert "ExpBackward0" not in text  # the graph of y, not of the last tensor z
    [picture] = graph["attachments"]  # type: ignore[misc]
    assert picture["filename"] == "autograd-graph.png"
    saved = Path(picture["path"])
    assert saved.parent == tmp_path / "g-files"
    assert saved.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    [plot] = figure["attachments"]  # type: ignore[misc]
    assert plot["filename"] == "figure-1.png" and Path(plot["path"]).stat().st_size > 1000


GRAPH_PACK = """\
pack: graphs
title: Graph pack
items:
  - id: g-prac-1
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: |
      import torch
      x = torch.tensor(2.0, requires_grad=True)
      y = x * x if x > 1 else x * 3
      print(y.grad_fn.name())
    expect_stdout: |
      MulBackward0
    show_graph: true
    choices:
      - text: MulBackward0
        correct: true
      - text: PowBackward0
    steps: [x is 2.0, so the branch x * x runs]
    final_answer: MulBackward0
"""


def test_the_reveal_of_a_show_graph_item_carries_its_graph(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    (packs / "graphs.yaml").write_text(GRAPH_PACK)
    out = _run_console(tmp_path / "r.sqlite3", "/quiz graphs\n/reveal\n", packs=packs)
    [edit] = [o for o in out if o["kind"] == "edit"]
    [picture] = edit["attachments"]  # type: ignore[misc]
    assert picture["filename"] == "autograd-graph.png"
    assert Path(picture["path"]).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "MulBackward0" in str(edit["text"])


WRONG_PACK = """\
pack: wrongs
title: A pack with a wrong claim
items:
  - id: w-prac-1
    kind: practice
    difficulty: easy
    prompt: What does this print?
    code: |
      import torch
      x = torch.tensor(2.0, requires_grad=True)
      (x * x).backward()
      print(x.grad.item())
    expect_stdout: |
      2.0
    choices:
      - text: "2.0"
        correct: true
      - text: "4.0"
    steps: [the derivative of x*x is x]
    final_answer: "2.0"
"""


def test_an_uploaded_pack_whose_code_disagrees_is_not_installed_without_force(
    tmp_path: Path,
) -> None:
    upload = tmp_path / "wrongs.yaml"
    upload.write_text(WRONG_PACK)
    script = (
        f"/pack upload {upload}\n/quiz wrongs\n"
        f"/as bob\n/pack upload {upload}\n/as me\n"
        f"/pack upload {upload} --force\n/quiz wrongs\n"
    )
    out = _run_console(tmp_path / "w.sqlite3", script)
    refused, missing, _, member, _, forced, asked = out
    text = str(refused["text"])
    assert "wrongs.yaml:4: w-prac-1: line 1 differs: expected '2.0', got '4.0'" in text
    assert "Not installed" in text and "--force" in text
    assert "no pack called `wrongs`" in str(missing["text"])
    assert "did not do what the pack says" in str(member["text"])
    assert "Installed anyway (`--force`)" in str(forced["text"])
    assert asked["kind"] == "post"


def test_pack_commands_and_uploads_in_the_console(tmp_path: Path) -> None:
    packs = tmp_path / "packs"
    packs.mkdir()
    shutil.copy(TEST_PACKS / "mini.yaml", packs / "mini.yaml")
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "fresh.yaml").write_text(FRESH)
    (uploads / "broken.yaml").write_text(FRESH.replace("difficulty: easy", "difficulty: ultra"))
    (uploads / "notes.txt").write_text(FRESH)
    script = f"""\
/pack list
/pack upload {uploads}/fresh.yaml
/quiz fresh
/pack disable fresh
/quiz fresh
/channel random
/quiz fresh
/channel general
/as bob
/pack enable fresh
/pack upload {uploads}/broken.yaml
/pack upload {uploads}/notes.txt
/pack upload {uploads}/missing.yaml
/pack frobnicate
/help
"""
    out = _run_console(tmp_path / "packs.sqlite3", script, packs=packs)
    texts = [str(line["text"]) for line in out]
    assert "mini — Mini pack (6 questions) · on" in texts[0] and out[0]["ephemeral"]
    assert "Installed fresh — Fresh questions (1 question) as `fresh.yaml`" in texts[1]
    # Installed beside the database (packs.sqlite3 -> packs-packs/), not in --packs: it
    # survives a restart with other flags.
    uploaded = tmp_path / "packs-packs"
    assert (uploaded / "fresh.yaml").read_text() == FRESH
    assert out[2]["kind"] == "post" and out[2]["question_id"] == "f-flash-1"
    assert "fresh is off in #general" in texts[3]
    assert "Pack `fresh` is off in this channel" in texts[4]
    assert out[5]["text"] == "now in #random"
    assert out[6]["kind"] == "post" and out[6]["channel"] == "random"
    assert "Only admins can turn packs on or off" in texts[9]
    assert "broken.yaml:6: f-flash-1.difficulty: expected one of" in texts[10]
    assert "Fix the errors and upload the file again to check it." in texts[10]
    assert "`notes.txt` is not a pack file" in texts[11]
    assert out[12]["kind"] == "error" and "cannot read" in texts[12] and "missing.yaml" in texts[12]
    assert out[13]["kind"] == "error" and texts[13].startswith("usage: /pack list | enable NAME")
    # bob's /help: the members' pack commands, not the admins' (usage from the command table).
    assert "/pack list " in texts[14] and "/pack upload FILE " in texts[14]
    assert "/pack enable" not in texts[14] and "Admins:" not in texts[14]
    assert sorted(p.name for p in packs.iterdir()) == ["mini.yaml"]
    assert sorted(p.name for p in uploaded.iterdir()) == ["fresh.yaml"]


def test_times_out_of_range_are_usage_errors(tmp_path: Path) -> None:
    script = """\
/clock advance 99999999999d
/clock set 9999-12-31T23:59:59Z
/clock set 1999-12-31T23:59:59Z
/quiz mini
/clock set 2999-12-31T23:00:00Z
/quiz mini
/clock advance 1d
/leaderboard month
"""
    out = _run_console(tmp_path / "clock.sqlite3", script)
    kinds = [line["kind"] for line in out]
    # (the edit: the first question closes on the way to 2999)
    assert kinds == ["error", "error", "error", "post", "edit", "reply", "post", "error", "reply"]
    assert out[0]["text"] == (
        "usage: /clock advance DURATION: '99999999999d' is longer than the maximum, 3650d "
        "(about ten years)"
    )
    assert out[1]["text"] == (
        "usage: /clock set ISO8601: 9999-12-31T23:59:59+00:00 is outside the years 2000 to "
        "2999, which a simulated clock can show"
    )
    assert "1999-12-31T23:59:59+00:00 is outside the years 2000 to 2999" in str(out[2]["text"])
    assert out[3]["at"] == "2026-03-04T09:00:00+00:00"  # refused times leave the clock alone
    assert out[6]["at"] == "2999-12-31T23:00:00+00:00"
    assert "3000-01-01T23:00:00+00:00 is outside the years" in str(out[7]["text"])
    assert "this month" in str(out[8]["text"])


def test_blank_names_are_refused(tmp_path: Path) -> None:
    script = '/as ""\n/as "   " --admin\n/as @\n/channel ""\n/channel " # "\n/quiz mini\n'
    out = _run_console(tmp_path / "names.sqlite3", script)
    assert [line["text"] for line in out[:5]] == [
        "usage: /as NAME [--admin]: the name can't be blank",
        "usage: /as NAME [--admin]: the name can't be blank",
        "usage: /as NAME [--admin]: the name can't be blank",
        "usage: /channel NAME: the name can't be blank",
        "usage: /channel NAME: the name can't be blank",
    ]
    assert all(line["kind"] == "error" for line in out[:5])
    post = out[5]  # nothing changed: still me, in #general
    assert post["kind"] == "post" and post["channel"] == "general"


def test_bad_quiz_filters_are_usage_errors(tmp_path: Path) -> None:
    script = "/quiz --difficulty impossible\n/quiz mini --tag %\n/quiz mini --difficulty HARD\n"
    out = _run_console(tmp_path / "filters.sqlite3", script)
    assert [(line["kind"], line["text"]) for line in out[:2]] == [
        (
            "error",
            "usage: /quiz --difficulty easy|medium|hard: 'impossible' is not one of easy, "
            "medium, hard",
        ),
        ("error", "usage: /quiz --tag TAG: '%' is not a tag (lower-case letters, digits, -_)"),
    ]
    assert out[2]["kind"] == "post"


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    script = """\
/leaderboard decade
/leaderboard week month
/quiz mini --frobnicate x
/stats "@"
/schedule remove x
/schedule add 25:99
/pack enable ""
/help me
/answer A
/leaderboard MONTH
"""
    out = _run_console(tmp_path / "usage.sqlite3", script)
    errors, (no_question, board) = out[:-2], out[-2:]
    assert [e["text"] for e in errors] == [
        "usage: /leaderboard [week|month|all|streaks] [here]: `decade` is not a window",
        "usage: /leaderboard [week|month|all|streaks] [here]: too many words",
        "usage: /quiz [PACK] [--difficulty easy|medium|hard] [--tag TAG] [--kinds KIND[,KIND]]: "
        "unknown option --frobnicate",
        "usage: /stats [MEMBER] [group]: the name can't be blank",
        "usage: /schedule remove ID [--channel NAME]: `x` is not a schedule id; `schedule list` shows the ids.",
        "usage: /schedule add [TIME] [TZ] [DAYS] [options]: time: hour 25 in '25:99' is out of "
        "range 0-23 (example: /schedule add 09:00 Europe/Berlin weekdays)",
        "usage: `/pack enable NAME` (`/pack list` shows the names)",
        "usage: /help",
    ]
    assert all(e["kind"] == "error" for e in errors)
    # Not bad arguments: nothing to answer yet, named the way the console types commands.
    assert no_question["kind"] == "reply"
    assert no_question["text"] == (
        "There is no open question in this channel. Ask for one with `/quiz`."
    )
    assert board["kind"] == "reply" and "this month" in str(board["text"])


def test_help_fits_an_80_column_terminal(tmp_path: Path) -> None:
    (help_reply,) = _run_console(tmp_path / "help.sqlite3", "/help\n")
    lines = str(help_reply["text"]).splitlines()
    assert max(len(line) for line in lines) <= 80, lines
    assert "/as NAME [--admin]  act as another member" in lines
    assert "/stats [MEMBER]     points, accuracy and streak" in lines
    # A long usage (generated from the command table) breaks between its words, indented;
    # what it does comes after, from column 20.
    at = lines.index("/schedule add [TIME] [TZ] [DAYS] [--pack P] [--tag T] [--difficulty")
    assert lines[at + 1].startswith("  easy|medium|hard] [--window 90m]")
    assert lines[at + 3].strip().startswith("a daily question")
    # The console plays an admin: the admins' commands follow the members'.
    assert lines.index("Admins:") < at


def test_identity_clock_and_run_rough_edges(tmp_path: Path) -> None:
    """What a study group tripped over in the console (issue 17)."""
    script = (
        "/as bob\n"
        "/as me\n"  # the banner's admin is still the admin
        "/pack disable mini\n"
        "/pack enable mini\n"
        "/as Alice\n"
        "/quiz mini --difficulty medium\n"
        "/answer A\n"
        "/as alice\n"  # the same person: her first answer stands
        "/answer B\n"
        "/clock\n"
        "/clock set 2026-03-04T07:00:00+00:00\n"
        "/run\n"
        "/leaderboard\n"  # not swallowed by the bare /run
    )
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--json", "--db", str(tmp_path / "c.sqlite3"),
         "--packs", str(TEST_PACKS), "--clock", "2026-03-04T09:00:00+00:00"],
        input=script, capture_output=True, text=True, timeout=120, check=False,
        cwd=Path(__file__).parents[2], env={**os.environ, "STUDYBOT_TIMEZONE": "Europe/Berlin"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    texts = [str(line["text"]) for line in out]
    assert "you are now me (admin)" in texts
    assert any("mini" in t and "off" in t for t in texts), texts  # the admin could do it
    assert any("You already answered this question (A)" in t for t in texts), texts
    assert "the time is Wed 2026-03-04 10:00 Europe/Berlin (2026-03-04T09:00:00+00:00)" in texts
    assert any(t.startswith("the clock went back 2h") for t in texts), texts
    assert "/run cancelled: no ``` block followed it" in texts
    assert any("Leaderboard" in t or "leaderboard" in t.lower() for t in texts[-2:]), texts[-2:]


def test_messages_that_point_to_what_was_meant(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "c.sqlite3",
        "/quiz hard\n/quiz autograd\n/quiz --tag nosuch\n/quiz mini\n/clock advance 2h\n/answer A\n",
    )
    texts = [str(line["text"]) for line in out]
    assert "There is no pack called `hard`. For hard questions, use `--difficulty hard`." in texts
    assert "There is no pack called `autograd`. `autograd` is a tag: use `--tag autograd`." in texts
    assert "No question has the tag `nosuch`. Tags: autograd, leaf, retain-graph." in texts
    assert texts[-1] == (
        "The last question here (#1) closed at Wed 09:30 (UTC); answers are no longer taken. "
        "Ask for a new one with `/quiz`."
    )


def test_uploaded_packs_survive_a_restart_without_the_packs_flag(tmp_path: Path) -> None:
    """Restarting without --packs used to retire every pack admins had uploaded in chat."""
    db = tmp_path / "bot.sqlite3"
    upload = tmp_path / "fresh.yaml"
    upload.write_text(FRESH)
    first = _run_console(db, f"/pack upload {upload}\n")
    assert "Installed fresh" in str(first[0]["text"])
    assert (tmp_path / "bot-packs" / "fresh.yaml").exists()
    # Same database, the bundled packs instead of the test packs, no --packs at all.
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "console", "--json", "--db", str(db)],
        input="/pack list\n/quiz fresh\n", capture_output=True, text=True, timeout=120,
        check=False, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "fresh" in str(out[0]["text"])
    assert out[1]["kind"] == "post" and out[1]["question_id"] == "f-flash-1"


def test_settings_in_the_console_change_the_day_boundary_and_persist(tmp_path: Path) -> None:
    db = tmp_path / "console.sqlite3"
    out = _run_console(db, "/settings timezone Europe/Berlin\n/as ann\n/settings points-easy 5\n")
    assert "timezone: UTC → Europe/Berlin" in str(out[0]["text"])
    assert out[0]["ephemeral"] is True
    assert "Only admins can change `points-easy`" in str(out[2]["text"])
    again = _run_console(db, "/settings\n/clock\n/clock advance 1d\n/clock\n")
    assert "timezone: Europe/Berlin" in str(again[0]["text"])
    # Times show in Berlin at once; days end in UTC until Berlin's next midnight (said once).
    assert "10:00 Europe/Berlin" in str(again[1]["text"])
    assert "days still end at midnight UTC until Thu 05 Mar 00:00" in str(again[1]["text"])
    assert "days still end" not in str(again[-1]["text"])
    assert "2026-03-05 10:00 Europe/Berlin" in str(again[-1]["text"])


def test_history_and_question_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "h.sqlite3",
        "/quiz mini --difficulty medium\n/answer B\n/reveal\n/history\n/question 1\n/question x\n",
    )
    history, question, bad = out[-3], out[-2], out[-1]
    assert "#1 · Wed 04 Mar 09:00 · When is the autograd graph built? · 1 answered, 100% right" in (
        str(history["text"])
    )
    assert question["ephemeral"] is True and "posted in #general" in str(question["text"])
    assert bad["kind"] == "error" and str(bad["text"]).startswith("usage: /question ID")


def test_report_a_question_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "r.sqlite3",
        "/quiz mini --difficulty medium\n/as ann\n/report #1 the answer should be A\n"
        "/as me\n/reports\n/pack list\n/reports resolve d-mc-1\n/reports nonsense\n",
    )
    texts = [str(line["text"]) for line in out]
    assert any("your report on #1 (`d-mc-1` in Mini pack) reached the admins" in t for t in texts)
    assert any("• #1 · ann, 2026-03-04: the answer should be A" in t for t in texts)
    assert any("mini — Mini pack" in t and "🚩 1 open report" in t for t in texts)
    assert any("Resolved 1 report on `d-mc-1`" in t for t in texts)
    assert out[-1]["kind"] == "error" and str(out[-1]["text"]).startswith("usage: /reports")


def test_channel_leaderboard_in_the_console(tmp_path: Path) -> None:
    out = _run_console(
        tmp_path / "b.sqlite3",
        "/quiz mini --difficulty medium\n/answer B\n/channel random\n/as bob\n"
        "/quiz mini --difficulty medium\n/answer B\n/leaderboard week here\n/leaderboard\n"
        "/leaderboard here now\n",
    )
    here, everywhere, bad = (str(line["text"]) for line in out[-3:])
    assert "Leaderboard in #random" in here and "bob — 20 pts" in here and "me —" not in here
    assert "me — 20 pts" in everywhere and "bob — 20 pts" in everywhere
    assert bad.startswith("usage: /leaderboard [week|month|all|streaks] [here]")


def test_write_a_question_in_the_console(tmp_path: Path) -> None:
    db = tmp_path / "w.sqlite3"
    out = _run_console(
        db,
        "/write --difficulty easy --tag leaf What's a leaf tensor's grad_fn? | *None | "
        "AccumulateGrad | why: a leaf was not computed by an operation\n"
        "/quiz community\n"
        "/as bob\n/write Is this fine? | = yes\n"
        "/write no separator here\n",
    )
    added, posted, _, member, bad = out
    assert "community-1" in str(added["text"]) and "Installed community" in str(added["text"])
    assert posted["kind"] == "post" and posted["question_id"] == "community-1"
    assert "What's a leaf tensor's grad_fn?" in str(posted["text"])
    assert "Suggestion #1: valid, waiting for an admin" in str(member["text"])
    assert bad["kind"] == "error" and "separate the prompt and the choices with |" in str(
        bad["text"]
    )
    # The group's pack persists with the database, whatever the flags of the next start.
    again = _run_console(db, "/quiz community\n")
    assert again[0]["question_id"] == "community-1"


def test_an_uploaded_pack_with_a_wrong_claim_names_the_text_it_backs(tmp_path: Path) -> None:
    wrong = Path(__file__).resolve().parents[1] / "data" / "packs" / "claims" / "wrong-claim.yaml"
    upload = tmp_path / "wrong-claim.yaml"
    upload.write_bytes(wrong.read_bytes())
    [reply] = _run_console(tmp_path / "c.sqlite3", f"/pack upload {upload}\n")
    text = str(reply["text"])
    assert "wrong-claim.yaml:" in text and "wc-mc-1: check backing explanation:" in text
    assert "Not installed" in text


def test_pack_replies_write_commands_as_they_are_typed_here(tmp_path: Path) -> None:
    """A reply names a command the way this chat types it (``/pack enable mini`` in the
    console, ``/study pack enable mini`` on Slack), never as a bare ``pack enable``."""
    out = _run_console(tmp_path / "cmd.sqlite3", "/pack disable mini\n/pack enable nosuch\n")
    off, unknown = (str(line["text"]) for line in out)
    assert "`/pack enable mini` turns it back on" in off and "`/quiz` and schedules" in off
    assert "See `/pack list`." in unknown
