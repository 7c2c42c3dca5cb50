"""The bot's interactive pieces: one persistent button class and the ``/run`` modal.

Buttons survive restarts because nothing about them is kept in memory: the ``custom_id``
(``studybot:answer:12:B``) carries the action, the post and the choice, and
:class:`StudyButton` is registered once with ``add_dynamic_items`` in ``setup_hook``. A click
on a message sent by an earlier process is matched by the template, rebuilt from the message
the interaction carries, and routed to the client, which asks the core what to say.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, runtime_checkable

import discord

from bot.core.messages import ACTION_ID_PATTERN
from bot.log import get_logger

__all__ = [
    "CUSTOM_ID_PREFIX",
    "CUSTOM_ID_TEMPLATE",
    "AnswerModal",
    "ButtonRouter",
    "SnippetModal",
    "StudyButton",
]

log = get_logger(__name__)

CUSTOM_ID_PREFIX = "studybot:"
# The core's ids (bot.core.messages.Button.custom_id), behind our prefix.
CUSTOM_ID_TEMPLATE = CUSTOM_ID_PREFIX + ACTION_ID_PATTERN
CODE_INPUT_ID = "studybot:run:code"
CODE_MAX_LENGTH = 4000  # Discord's limit for a text input


@runtime_checkable
class ButtonRouter(Protocol):
    """What a click is handed to: the client, which knows the service and the settings."""

    async def on_study_button(self, interaction: discord.Interaction[Any], core_id: str) -> None:
        """Handle a click on a button whose core id (without our prefix) is ``core_id``."""
        ...


class StudyButton(
    discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=CUSTOM_ID_TEMPLATE
):
    """Every studybot button: answer choices, Show answer, Knew/Forgot, Hint."""

    def __init__(
        self,
        core_id: str,
        *,
        label: str = "…",
        style: discord.ButtonStyle = discord.ButtonStyle.secondary,
        row: int | None = None,
    ) -> None:
        super().__init__(
            discord.ui.Button(
                label=label, style=style, custom_id=CUSTOM_ID_PREFIX + core_id, row=row
            )
        )
        self.core_id = core_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> StudyButton:
        """Rebuild the button from the clicked message (after a restart, the only source)."""
        label = getattr(item, "label", None) or "…"
        style = getattr(item, "style", discord.ButtonStyle.secondary)
        return cls(match[0].removeprefix(CUSTOM_ID_PREFIX), label=label, style=style)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        client = interaction.client
        if not isinstance(client, ButtonRouter):
            log.error("studybot button clicked on a client that cannot route it: %r", client)
            return
        await client.on_study_button(interaction, self.core_id)


SubmitCode = Callable[[discord.Interaction[Any], str], Awaitable[None]]
ReportError = Callable[[discord.Interaction[Any], BaseException, str], Awaitable[None]]


class SnippetModal(discord.ui.Modal):
    """``/run``: one multi-line code field; submitting hands the code to ``submit``.

    Errors go to ``report``, the adapter's one error handler, like those of every command.
    """

    def __init__(
        self,
        submit: SubmitCode,
        report: ReportError,
        *,
        title: str = "Run a Python snippet",
        default: str | None = None,
        description: str = "Python 3 with torch (CPU). print() what you want to see.",
    ) -> None:
        super().__init__(title=title[:45], timeout=15 * 60)
        self._submit = submit
        self._report = report
        self.code: discord.ui.TextInput[SnippetModal] = discord.ui.TextInput(
            custom_id=CODE_INPUT_ID,
            style=discord.TextStyle.paragraph,
            placeholder="import torch\nprint(torch.arange(6).reshape(2, 3))",
            default=None if default is None else default[:CODE_MAX_LENGTH],
            max_length=CODE_MAX_LENGTH,
        )
        self.add_item(discord.ui.Label(text="Code", description=description, component=self.code))

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        await self._submit(interaction, self.code.value)

    # discord.py's Modal itself drops BaseView.on_error's ``item`` argument, hence the ignore.
    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction[Any], error: Exception, /
    ) -> None:
        await self._report(interaction, error, "run (modal)")


SubmitAnswer = Callable[[discord.Interaction[Any], int, str], Awaitable[None]]
ANSWER_MAX_LENGTH = 200  # bot.core.requests.MAX_TYPED: a longer answer cannot be typed here


class AnswerModal(discord.ui.Modal):
    """A typed question's **Answer**: one line for the answer; submitting hands the post and
    the text to ``submit`` (which grades it and replies privately)."""

    def __init__(
        self, submit: SubmitAnswer, report: ReportError, post_id: int, title: str | None = None
    ) -> None:
        super().__init__(title=(title or f"Answer question #{post_id}")[:45], timeout=30 * 60)
        self._submit = submit
        self._report = report
        self._post_id = post_id
        self.answer: discord.ui.TextInput[AnswerModal] = discord.ui.TextInput(
            custom_id="studybot:type:answer",
            style=discord.TextStyle.short,
            max_length=ANSWER_MAX_LENGTH,
            placeholder="x.grad",
        )
        self.add_item(
            discord.ui.Label(
                text="Your answer",
                description="Only you see it; a spelling slip gets a second look.",
                component=self.answer,
            )
        )

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        await self._submit(interaction, self._post_id, self.answer.value)

    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction[Any], error: Exception, /
    ) -> None:
        await self._report(interaction, error, "answer (modal)")


SubmitQuestion = Callable[[discord.Interaction[Any], dict[str, str]], Awaitable[None]]


class QuestionModal(discord.ui.Modal):
    """``/write``: a question in five fields (Discord's most for a modal); submitting hands the
    typed values, by field name, to ``submit``."""

    def __init__(self, submit: SubmitQuestion, report: ReportError) -> None:
        super().__init__(title="Write a question", timeout=30 * 60)
        self._submit = submit
        self._report = report
        specs = (
            ("prompt", "Question", "What you ask", True, 1000, "What does x.grad hold after…?"),
            (
                "choices",
                "Choices (or the answer)",
                "One per line, * before the right one (one plain line: a flashcard answer)",
                True,
                1000,
                "* tensor([2., 2.])\ntensor([1., 1.])\nNone",
            ),
            ("explanation", "Why", "Shown when the question closes", False, 1000, ""),
            ("code", "Code (optional)", "A snippet the question is about", False, 4000, ""),
            (
                "expected",
                "What the code prints (or the exception)",
                "Checked in the sandbox before the question is added",
                False,
                1000,
                "",
            ),
        )
        self.inputs: dict[str, discord.ui.TextInput[QuestionModal]] = {}
        for name, label, description, required, limit, placeholder in specs:
            text_input: discord.ui.TextInput[QuestionModal] = discord.ui.TextInput(
                custom_id=f"studybot:write:{name}",
                style=discord.TextStyle.paragraph,
                required=required,
                max_length=limit,
                placeholder=placeholder or None,
            )
            self.inputs[name] = text_input
            self.add_item(
                discord.ui.Label(text=label, description=description[:100], component=text_input)
            )

    async def on_submit(self, interaction: discord.Interaction[Any], /) -> None:
        await self._submit(interaction, {name: i.value for name, i in self.inputs.items()})

    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction[Any], error: Exception, /
    ) -> None:
        await self._report(interaction, error, "write (modal)")
