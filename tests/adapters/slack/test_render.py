"""Block Kit rendering and /study parsing: pure functions, checked with the fake's Block Kit rules."""

from __future__ import annotations

import json

import pytest

from bot.adapters.commands import (
    Values,
)
from bot.adapters.slack.commands import (
    StudyCommand,
    first_code_block,
    parse_study,
    unescape,
)
from bot.adapters.slack.render import (
    MAX_BLOCKS_TEXT,
    blocks_text_length,
    escape,
    home_view,
    inline_attachments,
    mrkdwn,
    render,
    render_blocks,
    run_modal,
)
from bot.core.errors import UsageError
from bot.core.messages import (
    Action,
    Attachment,
    Button,
    ButtonStyle,
    Message,
    Section,
    neutralise,
)
from tests.fakes.slack_blockkit import check_blocks, check_view

MENTIONS = "<!channel> <!here> <@U0ALICE> <#C0STUDY> <!subteam^S1> @here"


def mrkdwn_texts(blocks: list[dict[str, object]]) -> list[str]:
    texts: list[str] = []
    for block in blocks:
        text = block.get("text")
        if isinstance(text, dict) and text.get("type") == "mrkdwn":
            texts.append(str(text["text"]))
        for element in block.get("elements", []) or []:  # type: ignore[attr-defined]
            if isinstance(element, dict) and element.get("type") == "mrkdwn":
                texts.append(str(element["text"]))
    return texts


def test_no_mention_can_resolve_in_blocks_or_fallback_text() -> None:
    message = Message(
        title=f"Title {MENTIONS}",
        sections=(
            Section(heading="Heading <!everyone>", body=f"Body {MENTIONS} & more"),
            Section(code=f"print('{MENTIONS}')"),
        ),
        footer=f"footer {MENTIONS}",
    )
    out = render(message)
    texts = [out.text, *mrkdwn_texts(out.blocks)]
    assert len(texts) == 4  # fallback, heading + body, code, footer
    for text in texts:
        assert "<!" not in text and "<@" not in text and "<#" not in text, text
        assert "&lt;!channel&gt;" in text or "&lt;!everyone&gt;" in text, text
    assert "Body &lt;!channel&gt; &lt;!here&gt; &lt;@U0ALICE&gt;" in "\n".join(texts)
    assert "&amp; more" in "\n".join(texts)
    # mrkdwn objects are verbatim, so Slack does not link-ify a bare @here either
    for block in out.blocks:
        if isinstance(block.get("text"), dict) and block["text"]["type"] == "mrkdwn":
            assert block["text"]["verbatim"] is True


def test_neutralised_snippet_output_stays_neutral() -> None:
    output = neutralise("<!channel> ```oops``` <@U1>")
    out = render(Message(sections=(Section(code=output),)))
    [code] = mrkdwn_texts(out.blocks)
    assert code.startswith("```\n") and code.endswith("\n```")
    assert code.count("```") == 2  # the output cannot close the fence
    assert "<" not in code


def test_markup_bold_becomes_slack_bold_and_escaping_comes_first() -> None:
    assert mrkdwn("**A.** x < y & `z`") == "*A.* x &lt; y &amp; `z`"
    assert mrkdwn("2 ** 3 ** 4") == "2 ** 3 ** 4"  # no bold across spaces
    assert escape("&lt;") == "&amp;lt;"


def test_buttons_use_custom_ids_and_only_slack_styles() -> None:
    choices = tuple(Button(Action.ANSWER, 12, c, c, ButtonStyle.PRIMARY) for c in "ABC")
    out = render(Message(title="Q", buttons=choices))
    [actions] = [b for b in out.blocks if b["type"] == "actions"]
    assert [e["action_id"] for e in actions["elements"]] == [
        "answer:12:A",
        "answer:12:B",
        "answer:12:C",
    ]
    assert [e["value"] for e in actions["elements"]] == ["A", "B", "C"]
    assert all("style" not in e for e in actions["elements"])  # one primary a set, not three

    card = (
        Button(Action.ANSWER, 3, "knew", "I knew it", ButtonStyle.SUCCESS),
        Button(Action.ANSWER, 3, "forgot", "I didn't", ButtonStyle.DANGER),
        Button(Action.HINT, 3, "0", "Hint", ButtonStyle.SECONDARY),
    )
    [actions] = [b for b in render(Message(buttons=card)).blocks if b["type"] == "actions"]
    assert [e.get("style") for e in actions["elements"]] == ["primary", "danger", None]
    single = (Button(Action.SHOW, 4, "back", "Show answer", ButtonStyle.PRIMARY),)
    [actions] = [b for b in render(Message(buttons=single)).blocks if b["type"] == "actions"]
    assert actions["elements"][0]["style"] == "primary"


def test_limits_are_respected_with_a_note_never_an_error() -> None:
    long_line = "word " * 2000  # 10 000 characters, one line
    message = Message(
        title="T" * 400,
        sections=(
            *(Section(heading=f"part {i}", body=long_line) for i in range(30)),
            Section(code="x = 1\n" * 2000),
        ),
        buttons=tuple(Button(Action.ANSWER, 1, str(i), "L" * 200) for i in range(30)),
        footer="f" * 5000,
    )
    out = render(message)
    for part in (out, *out.rest):
        assert check_blocks(part.blocks) == []
        assert blocks_text_length(part.blocks) <= MAX_BLOCKS_TEXT
        assert len(part.text) <= 3000
    assert len(out.blocks[0]["text"]["text"]) <= 150
    assert out.blocks[0]["text"]["text"].endswith("…")
    notes = [t for t in mrkdwn_texts(out.blocks) if "Too long for one Slack message" in t]
    assert len(notes) == 1 and "in the thread under this message" in notes[0]
    buttons = [e for b in out.blocks if b["type"] == "actions" for e in b["elements"]]
    assert len(buttons) == 30 and all(len(e["text"]["text"]) <= 75 for e in buttons)
    # nothing is lost: every part heading and every line of code is in one of the messages
    everything = "\n".join(t for part in (out, *out.rest) for t in mrkdwn_texts(part.blocks))
    assert all(f"*part {i}" in everything for i in range(30))
    assert everything.count("word") == 30 * 2000
    assert everything.count("x = 1") == 2000
    assert (
        f"part {len(out.rest) + 1} of {len(out.rest) + 1}" in mrkdwn_texts(out.rest[-1].blocks)[-1]
    )


def test_long_code_is_split_into_several_fenced_sections() -> None:
    code = "\n".join(f"print({i})" for i in range(800))
    out = render(Message(sections=(Section(code=code),)))
    texts = mrkdwn_texts(out.blocks)
    assert len(texts) > 1 and check_blocks(out.blocks) == []
    assert all(t.startswith("```\n") and t.endswith("\n```") for t in texts)
    joined = "\n".join(t.removeprefix("```\n").removesuffix("\n```") for t in texts)
    assert joined == code


def test_only_a_user_group_mention_pings() -> None:
    group = render(Message(title="Q", mention="<!subteam^S0GRP>"))
    assert group.text.startswith("<!subteam^S0GRP> Q")
    assert group.blocks[0] == {
        "type": "section",
        "text": {"type": "mrkdwn", "text": "<!subteam^S0GRP>", "verbatim": True},
    }
    for other in ("<!channel>", "<@U0ALICE>", "@study-group", "<!subteam^S0GRP> <!here>"):
        out = render(Message(title="Q", mention=other))
        assert "<!" not in out.text and "<@" not in out.text
        assert all("<" not in t for t in mrkdwn_texts(out.blocks))
    assert render(Message(title="Q", mention="@study-group")).text == "@study-group Q"


def test_empty_message_still_renders_valid_text() -> None:
    out = render(Message())
    assert out.text.strip() == "" and out.text and out.blocks == []


def test_attachments_inline_for_private_replies() -> None:
    message = Message(
        sections=(Section(body="done"),),
        attachments=(Attachment("output.txt", b"line\n" * 10),),
        ephemeral=True,
    )
    inlined = inline_attachments(message)
    assert inlined.attachments == () and inlined.sections[-1].heading == "output.txt"
    assert "line" in (inlined.sections[-1].code or "")


def test_home_view_and_run_modal_are_valid_views() -> None:
    stats = Message(title="📈 Your stats", sections=(Section(body="Streak: **2 days**"),))
    home = home_view(stats)
    assert home["type"] == "home" and check_view(home) == []
    modal = run_modal("C0STUDY", "print(1)")
    assert check_view(modal) == []
    assert json.loads(modal["private_metadata"]) == {"channel": "C0STUDY"}
    assert modal["blocks"][0]["element"]["initial_value"] == "print(1)"
    assert modal["blocks"][0]["element"]["multiline"] is True


# --- /study parsing ---------------------------------------------------------------------------


def _routed(name: str, args: tuple[str, ...], **values: str | tuple[str, ...]) -> StudyCommand:
    """A one-front-door command as parse_study reads it: its words sorted by the table."""
    given = {k: v if isinstance(v, tuple) else (v,) for k, v in values.items()}
    return StudyCommand(name, args, path=(name,), values=Values(given))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", StudyCommand("help")),
        ("  help ", StudyCommand("help")),
        ("quiz", _routed("quiz", ())),
        ("QUIZ slack-mc", _routed("quiz", ("slack-mc",), pack="slack-mc")),
        (
            "quiz --difficulty Easy --tag leaf --tag autograd",
            _routed(
                "quiz",
                ("--difficulty", "Easy", "--tag", "leaf", "--tag", "autograd"),
                difficulty="Easy",  # the route lowers it
                tag=("leaf", "autograd"),
            ),
        ),
        (
            "leaderboard month here",
            _routed("leaderboard", ("month", "here"), window="month", here="yes"),
        ),
        ("history 3", _routed("history", ("3",), count="3")),
        ("question #12", _routed("question", ("#12",), id="12")),
        (
            "report the answer is B",
            _routed("report", ("the", "answer", "is", "B"), reason="the answer is B"),
        ),
        (
            "report #7 the answer is B",
            _routed("report", ("#7", "the", "answer", "is", "B"), id="7", reason="the answer is B"),
        ),
        ("stats <@U0BOB|bob>", StudyCommand("stats", ("U0BOB",))),
        ("stats @bob", StudyCommand("stats", ("bob",))),
        ("pack list", StudyCommand("pack", ("list",))),
        ("pack LIST", StudyCommand("pack", ("list",))),
        ("pack disable slack-mc", StudyCommand("pack", ("disable", "slack-mc"))),
        ("pack enable slack-mc", StudyCommand("pack", ("enable", "slack-mc"))),
        ("pack upload", StudyCommand("pack", ("upload",))),
        ("run", StudyCommand("run")),
        ("run print(1 &lt; 2)", StudyCommand("run", ("print(1 < 2)",))),
        (
            "schedule add 09:00 Europe/Berlin weekdays --pack pytorch-dynamic-graphs",
            StudyCommand(
                "schedule",
                ("add", "09:00", "Europe/Berlin", "weekdays", "--pack", "pytorch-dynamic-graphs"),
            ),
        ),
        (
            "schedule add --cron \u201c0 9 * * 1-5\u201d",
            StudyCommand("schedule", ("add", "--cron", "0 9 * * 1-5")),
        ),
        ("schedule list", StudyCommand("schedule", ("list",))),
        ("schedule explode 3", StudyCommand("schedule", ("explode", "3"))),  # the core judges
    ],
)
def test_parse_study(text: str, expected: StudyCommand) -> None:
    assert parse_study(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("frobnicate", "`frobnicate` is not a /study command."),
        ("pack", "/study pack list"),
        ("pack show", "/study pack list"),
        ("pack disable", "/study pack disable NAME"),
        ("pack enable a b", "/study pack enable NAME"),
        ("quiz a b", "too many words"),
        ("quiz --level 3", "unknown option --level"),
        (
            "leaderboard decade",
            "usage: /study leaderboard [week|month|all|streaks] [here]: `decade` is",
        ),
        ("history lots", "usage: /study history [N]: `lots` is not a number"),
        ("question", "usage: /study question ID: ID is missing"),
        ("schedule", "usage: /study schedule add [TIME] [TZ]"),
        ("schedule", "| list | remove ID"),
        ("stats ann bob", "usage: /study stats [MEMBER] [group]: too many words"),
        ("review remind", "usage: /study review remind HH:MM|off [TZ]: HH:MM|off is missing"),
        ("review later", "usage: /study review | remind HH:MM|off [TZ] | export"),
        ('schedule add --cron "0 9', "a quote is not closed"),
    ],
)
def test_parse_study_problems(text: str, problem: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_study(text)
    assert problem in str(info.value)


def test_unescape_undoes_slack_escaping() -> None:
    assert unescape("a &lt;b&gt; &amp;&amp; c") == "a <b> && c"
    assert unescape("<@U1|ann> <#C1|general> <https://x.y|x.y>") == "U1 general https://x.y"
    assert unescape("--mention <!subteam^S0GRP|@study-group>") == "--mention <!subteam^S0GRP>"
    assert unescape("<!here> <!channel|channel>") == "<!here> <!channel>"


def test_first_code_block() -> None:
    text = "Try this:\n```python\nx = torch.ones(2)\nprint(x &lt; 2)\n```\nand ```second```"
    assert first_code_block({"text": text}) == "x = torch.ones(2)\nprint(x < 2)"
    assert first_code_block({"text": "inline ```print(1)``` code"}) == "print(1)"
    assert first_code_block({"text": "no code here, only `inline`"}) is None
    rich = {
        "text": "",
        "blocks": [
            {
                "type": "rich_text",
                "elements": [
                    {"type": "rich_text_section", "elements": [{"type": "text", "text": "hi"}]},
                    {
                        "type": "rich_text_preformatted",
                        "elements": [{"type": "text", "text": "print(2)\n"}],
                    },
                ],
            }
        ],
    }
    assert first_code_block(rich) == "print(2)"


def test_single_character_bold_pairs_correctly() -> None:
    from bot.adapters.slack.render import mrkdwn

    assert mrkdwn("Points: **5** all time, **12** this week") == (
        "Points: *5* all time, *12* this week"
    )


def test_render_blocks_alone_still_keeps_to_the_text_budget() -> None:
    """A caller that skips fit() gets a visible cut, never a message Slack refuses whole."""
    message = Message(title="T", sections=tuple(Section(body="w " * 1400) for _ in range(20)))
    blocks = render_blocks(message)
    assert check_blocks(blocks) == [] and blocks_text_length(blocks) <= MAX_BLOCKS_TEXT
    assert "more part(s) not shown" in mrkdwn_texts(blocks)[-1]
