"""Every kind of message, at its largest realistic size, fits Slack's and Discord's limits.

Each case builds a message with the function production uses (a reveal of an item at the
schema's maximum answered by 300 members, ``/reports`` with 200 open reports, ``/suggestions``
with 100 waiting, a round's board of 200, ``/run`` with long output, the help...) and renders it
on both platforms. Slack: every message sent (the first and each continuation) passes the fake's
Block Kit checks and holds at most 10,000 characters of block text, and together they lose no
line. Discord: the payload passes the fake's documented limits. A new message kind belongs in
:data:`CASES`, so it cannot bring back a message the platform refuses whole.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.adapters.commands import help_rows
from bot.adapters.discord.render import render as discord_render
from bot.adapters.slack.render import (
    IN_NEXT_MESSAGES,
    IN_THREAD,
    MAX_BLOCKS_TEXT,
    blocks_text_length,
    home_view,
    inline_attachments,
    run_modal,
    solve_modal,
    write_modal,
)
from bot.adapters.slack.render import render as slack_render
from bot.core import replies
from bot.core.messages import Attachment, Message, Section, escape_markup
from bot.core.models import Leaderboard, LeaderboardRow, Post, Window
from bot.core.snippets import RunLimits, result_message
from bot.questions.schema import MultipleChoice, Practice
from bot.sandbox.result import Outcome, RunResult
from bot.services.reports import reports_message
from bot.services.rounds import _board_lines
from bot.services.suggestions import suggestions_message
from bot.storage.reports import OpenReport
from bot.storage.rounds import BoardRow
from bot.storage.suggestions import Suggestion
from tests.fakes.discord_limits import message_problems
from tests.fakes.slack_blockkit import check_blocks, check_view

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TEXT = 2000  # the schema's longest Text
SHORT = 600  # its longest ShortText
CODE = 4000  # its longest Code


def _words(n: int, tag: str) -> str:
    """``n`` characters of prose, ending in a marker that shows whether it was lost."""
    filler = ("lorem ipsum dolor sit amet " * (n // 27 + 1))[: n - len(tag) - 1]
    return f"{filler} {tag}"


def _post(post_id: int = 4242) -> Post:
    return Post(
        id=post_id,
        channel_id=1,
        question_version_id=1,
        question_id="max-item",
        posted_at=NOW,
        closes_at=NOW + timedelta(days=1),
        closed_at=None,
        requested_by=None,
        schedule_id=None,
        platform_message_id=None,
    )


def _code(tag: str) -> str:
    # `<`, `>` and `&` count four or five characters once Slack-escaped (&lt;): the worst case
    lines = [f"m{i} = (x < {i}) & (x > -{i}) & (y <= x)  # <<>> && <>" for i in range(CODE // 50)]
    return "\n".join(lines)[: CODE - len(tag) - 3] + f"\n# {tag}"


def _choices() -> list[dict[str, object]]:
    return [
        {"text": _words(SHORT, f"CHOICE{n}"), "correct": n == 0, "why": _words(TEXT, f"WHY{n}")}
        for n in range(5)
    ]


def max_mc() -> MultipleChoice:
    return MultipleChoice.model_validate(
        {
            "id": "max-mc",
            "kind": "multiple_choice",
            "difficulty": "hard",
            "tags": ["autograd"],
            "prompt": _words(TEXT, "PROMPT"),
            "code": _code("CODEEND"),
            "expect_stdout": "tensor([1.])",
            "choices": _choices(),
            "explanation": _words(TEXT, "EXPLAIN"),
        }
    )


def max_practice() -> Practice:
    return Practice.model_validate(
        {
            "id": "max-practice",
            "kind": "practice",
            "difficulty": "hard",
            "prompt": _words(TEXT, "PROMPT"),
            "code": _code("CODEEND"),
            "expect_stdout": "tensor([1.])",
            "choices": _choices(),
            "steps": [_words(TEXT, f"STEP{n}") for n in range(12)],
            "hints": [_words(TEXT, f"HINT{n}") for n in range(5)],
            "common_mistakes": [_words(TEXT, f"MISTAKE{n}") for n in range(8)],
            "final_answer": _words(TEXT, "FINAL"),
        }
    )


def _names(n: int) -> list[str]:
    return [f"member_{i:03d}_with_a_rather_long_display_name" for i in range(n)]


def reveal_with_300_right(item: MultipleChoice | Practice) -> Message:
    """The reveal as a round shows it: 300 answers, and who got it right (quiz._edit_for)."""
    counts = {"A": 180, "B": 60, "C": 30, "D": 20, "E": 10}
    message = replies.reveal_message(_post(), item, "A pack with a long title " * 3, counts)
    shown = " · ".join(f"{escape_markup(name)} +{300 - i}" for i, name in enumerate(_names(300)))
    right = Section(heading="Who got it right", body=shown)
    return Message(
        title=f"🏁 Question 10 of 10 · {message.title}",
        sections=(*message.sections, right),
        buttons=message.buttons,
        footer=message.footer,
        tone=message.tone,
        post_id=message.post_id,
    )


def reports_200() -> Message:
    reports = [
        OpenReport(
            question=f"item-{i % 40}",
            pack="community",
            post_id=1000 + i,
            member_name=name,
            reason=_words(500, f"REASON{i}"),
            reported_at=NOW,
        )
        for i, name in enumerate(_names(200))
    ]
    reports.sort(key=lambda r: r.question)
    return reports_message(reports, "`/study reports resolve ITEM_ID`")


def suggestions_100() -> Message:
    pending = [
        Suggestion(
            id=i,
            workspace_id=1,
            member_id=i,
            author=f"U{i}",
            author_name=name,
            channel="C0STUDY",
            question="{}",
            prompt=_words(TEXT, f"SUGGESTION{i}"),
            status="pending",  # type: ignore[arg-type]
            reason=None,
            item_id=None,
            created_at=NOW,
        )
        for i, name in enumerate(_names(100))
    ]
    return suggestions_message(pending, "`/study suggestions approve ID`", "`… reject ID`")


def round_board_200() -> Message:
    rows = [
        BoardRow(i, name, 2000 - i, 10 - i % 10, 10, timedelta(seconds=1 + i / 10))
        for i, name in enumerate(_names(200))
    ]
    return Message(
        title="🏁 Round over in #study-group-with-a-long-name",
        sections=(Section(body=_board_lines(rows, 10)), Section(body="Every question…")),
    )


def leaderboard_200() -> Message:
    rows = tuple(
        LeaderboardRow(i + 1, i, name, 5000 - i, 300) for i, name in enumerate(_names(200))
    )
    board = Leaderboard(Window.ALL, None, rows, None)
    return replies.leaderboard_message(board, "caller")


def run_long_output() -> Message:
    stdout = "\n".join(f"step {i}: loss={1 / (i + 1):.6f} " + "#" * 80 for i in range(3000))
    result = RunResult(
        outcome=Outcome.OK,
        exit_code=0,
        signal=None,
        stdout=stdout[:65536],
        stderr="Traceback (most recent call last):\n" + "  File x\n" * 500 + "RuntimeError: no",
        truncated=True,
        duration_ms=900.0,
    )
    return result_message(result, RunLimits(), "alice")


def run_private_inlined() -> Message:
    """A private /run reply: its files inlined, as a private reply cannot carry them."""
    files = tuple(
        Attachment(f"out{i}.txt", ("line of output " * 8 + "\n").encode() * 300) for i in range(10)
    )
    return inline_attachments(replace_ephemeral(run_long_output(), files))


def replace_ephemeral(message: Message, files: tuple[Attachment, ...]) -> Message:
    return Message(
        title=message.title,
        sections=message.sections,
        attachments=files,
        ephemeral=True,
        tone=message.tone,
        footer=message.footer,
    )


def help_admin() -> Message:
    return replies.help_message(help_rows("slack"), admin=True)


def question_post(item: MultipleChoice | Practice) -> Callable[[], Message]:
    return lambda: replies.question_message(_post(), item, "A pack " * 20, ZoneInfo("UTC"))


CASES: dict[str, Callable[[], Message]] = {
    "reveal of a maximal practice item, 300 right": lambda: reveal_with_300_right(max_practice()),
    "reveal of a maximal multiple-choice item, 300 right": lambda: reveal_with_300_right(max_mc()),
    "post of a maximal practice item": question_post(max_practice()),
    "post of a maximal multiple-choice item": question_post(max_mc()),
    "/reports with 200 open reports": reports_200,
    "/suggestions with 100 waiting": suggestions_100,
    "/round stop after a 200-member round": round_board_200,
    "/leaderboard of 200": leaderboard_200,
    "/run with long output": run_long_output,
    "/run privately, its files inlined": run_private_inlined,
    "/help for admins": help_admin,
}


def _slack_texts(blocks: list[dict[str, object]]) -> str:
    out: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    out.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(blocks)
    return "\n".join(out)


MARKERS = ("PROMPT", "CODEEND", "WHY4", "STEP11", "MISTAKE7", "FINAL", "EXPLAIN", "REASON199")


@pytest.mark.parametrize("where", [IN_THREAD, IN_NEXT_MESSAGES])
@pytest.mark.parametrize("case", list(CASES))
def test_every_slack_message_fits_and_loses_nothing(case: str, where: str) -> None:
    message = CASES[case]()
    rendered = slack_render(message, rest_where=where)
    sent = (rendered, *rendered.rest)
    for part in sent:
        assert check_blocks(part.blocks) == [], case
        assert blocks_text_length(part.blocks) <= MAX_BLOCKS_TEXT, case
        assert len(part.text) <= 3000
    everything = "\n".join(_slack_texts(part.blocks) for part in sent)
    plain = message.plain_text()
    for marker in (*MARKERS, "member_199", "member_299", "SUGGESTION99", "step 2999"):
        if marker in plain:
            assert marker in everything, f"{case}: {marker} was lost"
    if rendered.rest:
        assert f"more lines {where}" in _slack_texts(rendered.blocks)


@pytest.mark.parametrize("case", list(CASES))
def test_every_discord_message_fits(case: str) -> None:
    rendered = discord_render(CASES[case]())
    payload: dict[str, object] = {"content": rendered.content or ""}
    if rendered.embed is not None:
        payload["embeds"] = [rendered.embed.to_dict()]
    if rendered.view is not None:
        payload["components"] = rendered.view.to_components()
    assert message_problems(payload) == [], case


def test_the_home_tab_and_modals_fit() -> None:
    home = Message(
        title="Your study home",
        sections=tuple(
            Section(heading=f"Part {i}", body=_words(TEXT, f"HOME{i}")) for i in range(30)
        ),
    )
    view = home_view(home)
    assert check_view(view) == []
    assert blocks_text_length(view["blocks"]) <= MAX_BLOCKS_TEXT
    assert "not shown here" in _slack_texts(view["blocks"])
    long_code = "print(1)\n" * 800
    for modal in (
        run_modal("C0STUDY", long_code, ("a" * 100, "b" * 100, "c" * 100, "d" * 100)),
        solve_modal("C0STUDY", 12, "T" * 200, long_code, "f" * 300),
        write_modal("C0STUDY", "hard", tuple(f"tag{i}" for i in range(50))),
    ):
        assert check_view(modal) == []
        assert blocks_text_length(modal["blocks"]) <= MAX_BLOCKS_TEXT
    assert "was cut" in _slack_texts(run_modal("C0STUDY", long_code)["blocks"])
