"""Rendering neutral messages for Discord: embeds, buttons, files, and Discord's limits."""

from __future__ import annotations

import discord
import pytest

from bot.adapters.discord.components import StudyButton
from bot.adapters.discord.render import (
    DESCRIPTION_LIMIT,
    EMBED_TOTAL_LIMIT,
    TRUNCATED_NOTE,
    code_block,
    render,
    thread_name,
)
from bot.core.messages import Action, Attachment, Button, ButtonStyle, Message, Section, Tone
from bot.core.snippets import first_python_block


def _embed_size(embed: discord.Embed) -> int:
    return len(embed)  # discord.py counts title, description, fields, footer, author


def _buttons(n: int) -> tuple[Button, ...]:
    return tuple(Button(Action.ANSWER, 7, f"c{i}", f"Choice {i}") for i in range(n))


def test_sections_render_in_order_with_bold_headings_and_py_fences() -> None:
    message = Message(
        title="Q",
        sections=(
            Section(body="What prints?"),
            Section(code="print(1)\n"),
            Section(heading="Why", body="Because."),
        ),
        footer="#7",
        tone=Tone.QUESTION,
    )
    embed = render(message).embed
    assert embed is not None
    assert embed.title == "Q"
    assert embed.description == "What prints?\n\n```py\nprint(1)\n```\n\n**Why**\nBecause."
    assert embed.footer.text == "#7"
    assert embed.colour == discord.Colour.blurple()


def test_buttons_are_persistent_dynamic_items_five_to_a_row() -> None:
    rendered = render(Message(title="Q", buttons=_buttons(7)))
    assert rendered.view is not None
    assert rendered.view.timeout is None
    items = rendered.view.children
    assert all(isinstance(i, StudyButton) for i in items)
    rows = [row["components"] for row in rendered.view.to_components()]
    assert [len(r) for r in rows] == [5, 2]
    assert rows[0][0]["custom_id"] == "studybot:answer:7:c0"


def test_button_styles_and_long_labels() -> None:
    buttons = (
        Button(Action.ANSWER, 1, "knew", "I knew it", ButtonStyle.SUCCESS),
        Button(Action.ANSWER, 1, "forgot", "x" * 100, ButtonStyle.DANGER),
    )
    rendered = render(Message(title="Q", buttons=buttons))
    assert rendered.view is not None
    [row] = rendered.view.to_components()
    styles = [b["style"] for b in row["components"]]
    assert styles == [discord.ButtonStyle.success.value, discord.ButtonStyle.danger.value]
    assert len(row["components"][1]["label"]) == 80
    assert row["components"][1]["label"].endswith("…")


def test_more_than_25_buttons_are_cut_with_a_note() -> None:
    rendered = render(Message(title="Q", buttons=_buttons(30)))
    assert rendered.view is not None
    assert len(rendered.view.children) == 25
    assert len(rendered.view.to_components()) == 5
    assert rendered.embed is not None
    assert "… 5 more buttons not shown" in (rendered.embed.description or "")


def test_long_title_and_footer_are_cut() -> None:
    embed = render(Message(title="T" * 300, footer="F" * 3000)).embed
    assert embed is not None
    assert embed.title is not None and len(embed.title) == 256 and embed.title.endswith("…")
    assert embed.footer.text is not None and len(embed.footer.text) == 2048


def test_long_description_is_cut_to_4096_with_a_note() -> None:
    embed = render(Message(title="Q", sections=(Section(body="word " * 2000),))).embed
    assert embed is not None
    description = embed.description or ""
    assert len(description) <= DESCRIPTION_LIMIT
    assert description.endswith(TRUNCATED_NOTE)
    assert description.startswith("word word")


def test_a_cut_code_block_stays_fenced() -> None:
    code = "\n".join(f"print({i})" for i in range(2000))
    embed = render(Message(sections=(Section(body="Output:"), Section(code=code)))).embed
    assert embed is not None
    description = embed.description or ""
    assert len(description) <= DESCRIPTION_LIMIT
    body, note = description.rsplit("\n", 1)
    assert note == TRUNCATED_NOTE
    assert body.startswith("Output:\n\n```py\nprint(0)")
    assert body.endswith("\n```")
    assert body.count("```") == 2


def test_the_whole_embed_stays_under_6000() -> None:
    message = Message(title="T" * 256, sections=(Section(body="b" * 5000),), footer="F" * 2048)
    embed = render(message).embed
    assert embed is not None
    assert _embed_size(embed) <= EMBED_TOTAL_LIMIT
    assert (embed.description or "").endswith(TRUNCATED_NOTE)


def test_a_heading_is_not_left_alone_at_the_cut() -> None:
    # The heading fits, but not even a few lines of its code: both go, the note stays.
    message = Message(
        sections=(Section(body="a" * 4040), Section(heading="Solution", code="b = 1\n" * 100))
    )
    embed = render(message).embed
    assert embed is not None
    assert embed.description == "a" * 4040 + "\n" + TRUNCATED_NOTE


def test_a_heading_keeps_the_part_of_its_text_that_fits() -> None:
    message = Message(sections=(Section(body="a" * 4000), Section(heading="Why", body="b" * 500)))
    description = render(message).embed.description  # type: ignore[union-attr]
    assert description is not None
    assert description.startswith("a" * 4000 + "\n\n**Why**\nbbb")
    assert description.endswith("b\n" + TRUNCATED_NOTE)
    assert len(description) <= DESCRIPTION_LIMIT


def test_code_cannot_close_its_fence() -> None:
    block = code_block("print('```')\n@everyone")
    assert block.count("```") == 2
    assert block.startswith("```py\n") and block.endswith("\n```")


def test_attachments_become_files_and_mentions_are_off_everywhere() -> None:
    rendered = render(Message(title="out", attachments=(Attachment("output.txt", b"x" * 10),)))
    [file] = rendered.files
    assert file.filename == "output.txt"
    assert file.fp.read() == b"x" * 10
    for kwargs in (rendered.send_kwargs(), rendered.edit_kwargs()):
        mentions = kwargs["allowed_mentions"]
        assert mentions.to_dict() == {"parse": []}


def test_send_kwargs_leave_out_a_missing_view_and_edits_clear_it() -> None:
    rendered = render(Message(title="closed"))
    assert "view" not in rendered.send_kwargs()
    assert rendered.edit_kwargs()["view"] is None
    assert rendered.edit_kwargs()["attachments"] == []


def test_an_empty_message_still_renders_something() -> None:
    rendered = render(Message())
    assert rendered.embed is None
    assert rendered.content == "…"


def test_private_flag() -> None:
    assert render(Message(title="x", ephemeral=True)).ephemeral
    assert not render(Message(title="x")).ephemeral


def test_thread_name_uses_the_post_and_prompt() -> None:
    message = Message(
        title="MC", sections=(Section(body="What is **autograd**?\nMore."),), post_id=4
    )
    assert thread_name(message) == "#4 · What is autograd? More."
    assert len(thread_name(Message(sections=(Section(body="x" * 300),), post_id=1))) == 100


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("```py\nprint(1)\n```", "print(1)"),
        ("look:\n```python\nx = 1\ny = 2\n```\nthanks", "x = 1\ny = 2"),
        ("```\nprint('plain')\n```", "print('plain')"),
        ("```print(2)```", "print(2)"),
        ("```js\nconsole.log(1)\n```\n```py\nprint(3)\n```", "print(3)"),
        ("```Python3\nprint(4)\n```", "print(4)"),
        ("no code", None),
        ("```js\nconsole.log(1)\n```", None),
        ("``` ```", None),
    ],
)
def test_first_python_block(text: str, code: str | None) -> None:
    assert first_python_block(text) == code
