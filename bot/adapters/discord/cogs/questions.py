"""The questions: asking, answering (the buttons), past ones, reports, writing, exercises
and spaced repetition."""

from __future__ import annotations

from functools import partial

from discord import app_commands

from bot.adapters.commands import (
    SolveRequest,
    remind_request,
)
from bot.adapters.discord.cogs.base import (
    Interaction,
    StudyCog,
    answer,
    one_tag,
    required,
    send_reply,
)
from bot.adapters.discord.components import AnswerModal, QuestionModal, SnippetModal
from bot.adapters.discord.errors import report_error
from bot.adapters.discord.options import Options, command
from bot.adapters.discord.render import render
from bot.core.errors import BadInput
from bot.core.messages import Action, parse_action
from bot.core.replies import OVERRIDE, TYPE_IT, parse_review_value
from bot.questions.written import from_fields as written_from_fields

__all__ = ["QuestionCog"]


class QuestionCog(StudyCog, name="studybot-questions"):
    """The questions: asking, answering (the buttons), past ones, reports, writing, exercises"""

    @command("quiz")
    async def quiz(self, interaction: Interaction, options: Options) -> None:
        """Post a question in this channel: answers are private, the reveal is public.

        The question is the interaction's own (public) response; its id is stored so the reveal
        can edit it in place, long after the interaction token has expired.
        """
        ctx = self.context(interaction)
        kind = options.text("kind")
        draft = await self.services.quiz.post_question(
            ctx,
            pack=options.text("pack"),
            difficulty=options.text("difficulty"),
            tags=one_tag(options.text("tag")),
            kinds=(kind,) if kind else (),
        )
        rendered = render(draft.message)
        response = await interaction.response.send_message(**rendered.send_kwargs())
        message_id = response.message_id
        if message_id is None:  # Discord always returns it with with_response; belt and braces
            message_id = (await interaction.original_response()).id
        await self.services.posting.attach_message(draft.post.id, str(message_id))
        await self.bot.open_thread(int(draft.channel), message_id, draft.message)

    @quiz.autocomplete("pack")
    async def _quiz_pack(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await self.pack_choices(current)

    # --- past questions ----------------------------------------------------------------------

    @command("suggestions")
    async def suggestions(self, interaction: Interaction, options: Options) -> None:
        """The questions members wrote, waiting for an admin to approve or reject (admins)."""
        await answer(self.bot, interaction, "suggestions", options.given)

    # --- spaced repetition -------------------------------------------------------------------

    @command("review")
    async def review(self, interaction: Interaction, options: Options) -> None:
        """Your due cards, one at a time (spaced repetition); only you see them."""
        ctx = self.context(interaction)
        remind, timezone, action = (
            options.text("remind"),
            options.text("timezone"),
            options.text("action"),
        )
        if action == "export":  # the deck, attached to a private reply
            await send_reply(interaction, await self.services.review.export(ctx))
            return
        if remind is not None:
            request = remind_request("discord", [remind, *([timezone] if timezone else [])])
            reply = await self.services.reminders.command(ctx, request)
            await send_reply(interaction, reply.private())
            return
        turn = await self.services.review.next(ctx)
        await send_reply(interaction, turn.as_message())

    @review.autocomplete("timezone")
    async def _review_timezone(
        self, interaction: Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return self.timezone_choices(current)

    @command("write")
    async def write(self, interaction: Interaction, options: Options) -> None:
        """Write a question for the group: checked like a pack; an admin's joins `community`, a
        member's waits for an admin (`/suggestions`)."""
        ctx, difficulty = self.context(interaction), required(options.text("difficulty"))
        tag_list = tuple(t.strip() for t in (options.text("tags") or "").split(",") if t.strip())

        async def submit(inner: Interaction, fields: dict[str, str]) -> None:
            await inner.response.defer(ephemeral=True, thinking=True)  # the sandbox takes seconds
            question = written_from_fields(fields, difficulty=difficulty, tags=tag_list)
            await send_reply(
                inner, (await self.services.suggestions.write(ctx, question)).private()
            )

        await interaction.response.send_modal(QuestionModal(submit, report_error))

    @command("solve")
    async def solve(self, interaction: Interaction, options: Options) -> None:
        """Solve a coding exercise: your code runs against its checks in the sandbox.

        ``id`` is a posted exercise's number (``12`` or ``#12``), or an exercise's id in its
        pack: that one is posted here first, as on the console and Slack, then its editor
        opens (the modal is the interaction's response, so the post goes out through the
        gateway).
        """
        typed = options.text("id")
        request = SolveRequest.parse("discord", [typed] if typed else [])
        if request.exercise is None:
            await self.open_solver(interaction, request.post)
            return
        ctx = self.context(interaction)
        draft = await self.services.quiz.post_question(
            ctx, question=request.exercise, kinds=("exercise",)
        )
        await self.open_solver(interaction, draft.post.id)
        await self.services.posting.publish(draft, self.bot.gateway)

    async def open_solver(self, interaction: Interaction, post_id: int | None) -> None:
        """The exercise's editor, a modal pre-filled with its starter; the verdict is private."""
        ctx = self.context(interaction)
        form = await self.services.exercises.open_editor(ctx, post_id)

        async def submit(inner: Interaction, code: str) -> None:
            await inner.response.defer(ephemeral=True, thinking=True)  # the sandbox takes a moment
            verdict = await self.services.exercises.submit(ctx, form.post_id, code)
            await send_reply(inner, verdict.private())

        modal = SnippetModal(
            submit,
            report_error,
            title=form.title,
            default=form.starter,
            description=f"Define {form.entry}; it runs against the examples and hidden checks.",
        )
        await interaction.response.send_modal(modal)

    # --- buttons -----------------------------------------------------------------------------

    async def _typed_answer(self, interaction: Interaction, post_id: int, text: str) -> None:
        """The Answer modal was submitted: grade it; the reply (or "almost") is private."""
        reply = await self.services.quiz.answer(self.context(interaction), post_id, text)
        await send_reply(interaction, reply.private())

    async def _typed_review(
        self, interaction: Interaction, key: int, text: str, *, reviewed: int, card_reviews: int
    ) -> None:
        """A typed review card's answer: graded by the bot, then the next card (private)."""
        turn = await self.services.review.answer_typed(
            self.context(interaction), key, text, reviewed=reviewed, card_reviews=card_reviews
        )
        await send_reply(interaction, turn.as_message())

    async def on_button(self, interaction: Interaction, core_id: str) -> None:
        """A click on a studybot button: answer, show a card's back, or a hint; all private.

        An answer given on a private card back (Knew/Forgot) replaces that card, so its
        buttons cannot be clicked twice; other replies are new private messages.
        """
        parsed = parse_action(core_id)
        if parsed is None:
            raise BadInput("That button is out of date; ask for a new question.")
        action = parsed[0]
        if action is Action.SOLVE:
            await self.open_solver(interaction, parsed[1])
            return
        typed_card = parse_review_value(parsed[2]) if action is Action.REVIEW else None
        if typed_card is not None and typed_card[0] == TYPE_IT:  # a typed /review card's box
            await interaction.response.send_modal(
                AnswerModal(
                    partial(self._typed_review, reviewed=typed_card[1], card_reviews=typed_card[2]),
                    report_error,
                    parsed[1],
                    title="Your review card",
                )
            )
            return
        if action is Action.TYPE:  # a typed question's text box
            answer_box = AnswerModal(self._typed_answer, report_error, parsed[1])
            await interaction.response.send_modal(answer_box)
            return
        if action is Action.TRY:  # the code in an editable /run
            form = await self.services.quiz.try_it(self.context(interaction), *parsed[1:])
            modal = SnippetModal(self.run_code, report_error, title=form.title, default=form.code)
            await interaction.response.send_modal(modal)
            return
        reply = (await self.services.quiz.click(self.context(interaction), *parsed)).private()
        source = interaction.message
        # A typed review's "Make it …" leaves the next card where it is: a new message.
        override = typed_card is not None and typed_card[0].startswith(OVERRIDE)
        replaces_card = action in (Action.ANSWER, Action.REVIEW) and not override
        if replaces_card and source is not None and source.flags.ephemeral:
            # An answer on a private card back, or a review grade: the private card is
            # replaced by what comes next, so its buttons are gone.
            await interaction.response.edit_message(**render(reply).edit_kwargs())
            return
        await send_reply(interaction, reply)
