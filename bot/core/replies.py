"""Turn questions, reveals, scores and stats into neutral :class:`Message` objects.

All the wording members see lives here, in one place, so every platform says the same thing.
Adapters decide only how it looks.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from zoneinfo import ZoneInfo

from bot.core.messages import (
    Action,
    Button,
    ButtonStyle,
    Message,
    Section,
    Tone,
    escape_markup,
    neutralise,
)
from bot.core.models import (
    Leaderboard,
    MemberStats,
    Post,
    ReviewSummary,
    StreakBoardRow,
    Window,
)
from bot.core.srs import Grade
from bot.questions.schema import (
    CHOICE_LETTERS,
    Choice,
    Exercise,
    Flashcard,
    Item,
    MultipleChoice,
    OpenPrompt,
    Practice,
    TypedAnswer,
)
from bot.questions.typed import Mark
from bot.text import clip

__all__ = [
    "FORGOT",
    "GRADES",
    "KNEW",
    "answer_labels",
    "back_text",
    "card_back",
    "choices_of",
    "correct_letter",
    "grade_buttons",
    "help_message",
    "hint_message",
    "leaderboard_message",
    "question_message",
    "reveal_message",
    "self_graded",
    "shows_back",
    "stats_message",
    "try_buttons",
    "try_code",
    "typed_diff",
    "typed_reveal",
    "typed_review_feedback",
]

KNEW, FORGOT = "knew", "forgot"  # the old two grades: aliases of Good and Again
#: A self-graded item's four grades (FSRS's ratings), as buttons and as typed answers.
GRADES = ("again", "hard", "good", "easy")
_GRADE_BUTTONS = (
    ("again", "Again", ButtonStyle.DANGER),
    ("hard", "Hard", ButtonStyle.SECONDARY),
    ("good", "Good", ButtonStyle.SUCCESS),
    ("easy", "Easy", ButtonStyle.PRIMARY),
)
_KIND_LABEL = {
    "flashcard": "Flashcard",
    "multiple_choice": "Multiple choice",
    "practice": "Practice problem",
    "open": "Discussion prompt",
    "exercise": "Coding exercise",
    "typed": "Typed answer",
}
_WINDOW_LABEL = {Window.WEEK: "this week", Window.MONTH: "this month", Window.ALL: "all time"}


def choices_of(item: Item) -> tuple[Choice, ...]:
    if isinstance(item, MultipleChoice):
        return item.choices
    if isinstance(item, Practice) and item.choices is not None:
        return item.choices
    return ()


def self_graded(item: Item) -> bool:
    """Flashcards and practice problems without choices are graded by the member."""
    return isinstance(item, Flashcard) or (isinstance(item, Practice) and item.choices is None)


def shows_back(item: Item) -> bool:
    """Whether a card under review has a back to show and grade oneself on: the self-graded
    kinds, and (until /review grades typed text) a typed question's answer."""
    return self_graded(item) or isinstance(item, TypedAnswer)


def answer_labels(item: Item) -> tuple[str, ...]:
    """What a member may answer: choice letters, the four grades (again, hard, good, easy;
    ``knew``/``forgot`` are accepted as good/again), or nothing for open prompts."""
    if isinstance(item, OpenPrompt | Exercise | TypedAnswer):
        return ()
    choices = choices_of(item)
    if choices:
        return tuple(CHOICE_LETTERS[: len(choices)])
    return GRADES


def correct_letter(item: Item) -> str | None:
    for letter, choice in zip(CHOICE_LETTERS, choices_of(item), strict=False):
        if choice.correct:
            return letter
    return None


def _header(post: Post, item: Item, pack_title: str) -> str:
    return f"{_KIND_LABEL[item.kind]} · {pack_title} · {item.difficulty.value}"


def _prompt_sections(item: Item) -> list[Section]:
    sections = [Section(body=item.prompt)]
    if item.code:
        sections.append(Section(code=item.code))
    return sections


def _choice_lines(choices: Sequence[Choice]) -> str:
    return "\n".join(
        f"**{letter}.** {choice.text}"
        for letter, choice in zip(CHOICE_LETTERS, choices, strict=False)
    )


def _closes_text(post: Post, tz: ZoneInfo) -> str:
    if post.closes_at is None:
        if post.schedule_id is not None:
            return "Answers close when the next question posts."
        return "Answers stay open until the question is revealed."
    local = post.closes_at.astimezone(tz)
    return f"Answers close at {local:%a %H:%M} ({tz.key})."


_INLINE_CODE = re.compile(r"`([^`]+)`")


def choice_code(choice: Choice) -> str | None:
    """The code a choice shows (its inline code spans, one per line), or None when there is
    none to run: text that is not Python (```[1.0, 2.0] False```, ```per_token 2```) or only
    values (```None```, ```[3.0, 3.0]```, a printed ```tensor([2., 2.])```). Running such a
    choice would run the item's plain snippet and teach nothing, so it gets no "Try" button."""
    spans = [span.strip() for span in _INLINE_CODE.findall(choice.text) if span.strip()]
    code = "\n".join(spans)
    if not code:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    if all(isinstance(node, ast.Expr) and _only_a_value(node.value) for node in tree.body):
        return None
    return code


def _only_a_value(node: ast.expr) -> bool:
    """A literal, a name such as ``True``, a container of them, or a printed ``tensor(...)``."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.UnaryOp):
        return _only_a_value(node.operand)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_only_a_value(element) for element in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        # How torch prints a tensor: tensor([2., 2.], requires_grad=True), not a call to run.
        return node.func.id == "tensor" and all(_only_a_value(a) for a in node.args)
    return False


def try_code(item: Item, value: str) -> str | None:
    """What "Try it" opens: the item's snippet (``code``), or the snippet followed by a
    choice's code (its letter). None: there is no such code."""
    if isinstance(item, Exercise):
        return None
    if value == "code":
        return item.code
    choices = choices_of(item)
    if len(value) != 1 or value not in CHOICE_LETTERS[: len(choices)]:
        return None
    code = choice_code(choices[CHOICE_LETTERS.index(value)])
    if code is None:
        return None
    head = f"{item.code.rstrip()}\n\n" if item.code else "import torch\n\n"
    return f"{head}# choice {value}:\n{code}\n"


def try_buttons(item: Item, post_id: int) -> tuple[Button, ...]:
    """The "Try it" buttons of a question with code: its snippet, and each choice that shows
    code. Shown only after an answer or at the reveal, so they never give the answer away."""
    buttons: list[Button] = []
    if try_code(item, "code") is not None:
        buttons.append(Button(Action.TRY, post_id, "code", "Try it", ButtonStyle.SECONDARY))
    for letter in CHOICE_LETTERS[: len(choices_of(item))]:
        if try_code(item, letter) is not None:
            label = f"Try {letter}"
            buttons.append(Button(Action.TRY, post_id, letter, label, ButtonStyle.SECONDARY))
    return tuple(buttons)


def exercise_examples(item: Exercise) -> str:
    """The visible checks, one line each: ``f(torch.tensor([0., 2.]))  →  tensor([...])``."""
    lines = []
    for example in item.examples:
        args = example.args.strip()
        call = args if args.startswith("(") and args.endswith(")") else f"({args})"
        result = example.expect if example.expect is not None else f"raises {example.error}"
        lines.append(f"`{item.entry}{call}` → `{result}`")
    return "\n".join(lines)


def _exercise_message(post: Post, item: Exercise, pack_title: str, tz: ZoneInfo) -> Message:
    sections = (
        Section(body=item.prompt),
        Section(heading="Examples", body=exercise_examples(item)),
    )
    forbid = ", ".join(f"`{name}`" for name in item.forbid)
    footer = "Solve it privately: your code runs in the sandbox against these examples and "
    footer += "hidden checks. A full pass scores; the best partial one earns a share at close. "
    if forbid:
        footer += f"Not allowed: {forbid}. "
    return Message(
        title=_header(post, item, pack_title),
        sections=sections,
        buttons=(Button(Action.SOLVE, post.id, "editor", "Solve it", ButtonStyle.PRIMARY),),
        tone=Tone.QUESTION,
        footer=f"{footer}{_closes_text(post, tz)} · #{post.id} · {item.id}",
        post_id=post.id,
        question_id=item.id,
    )


def question_message(post: Post, item: Item, pack_title: str, tz: ZoneInfo) -> Message:
    if isinstance(item, Exercise):
        return _exercise_message(post, item, pack_title, tz)
    sections = _prompt_sections(item)
    buttons: list[Button] = []
    choices = choices_of(item)
    if choices:
        sections.append(Section(body=_choice_lines(choices)))
        buttons.extend(
            Button(Action.ANSWER, post.id, letter, letter, ButtonStyle.PRIMARY)
            for letter in CHOICE_LETTERS[: len(choices)]
        )
    elif self_graded(item):
        buttons.append(Button(Action.SHOW, post.id, "back", "Show answer", ButtonStyle.PRIMARY))
    elif isinstance(item, TypedAnswer):
        buttons.append(Button(Action.TYPE, post.id, "text", "Answer", ButtonStyle.PRIMARY))
    hints = _hints(item)
    if hints:
        buttons.append(Button(Action.HINT, post.id, "0", "Hint", ButtonStyle.SECONDARY))
    if isinstance(item, OpenPrompt):
        footer = "Discussion prompt: not scored. The model answer is shown when it closes."
    elif isinstance(item, TypedAnswer):
        footer = "Type your answer (Answer, or the answer command): it is private, and only "
        footer += "your first counts; a spelling slip gets a second look. "
        footer += _closes_text(post, tz)
    elif self_graded(item):
        footer = "Think of your answer, then reveal it privately and grade yourself. "
        footer += _closes_text(post, tz)
    else:
        footer = "Your answer is private; only your first click counts. " + _closes_text(post, tz)
    return Message(
        title=_header(post, item, pack_title),
        sections=tuple(sections),
        buttons=tuple(buttons),
        tone=Tone.QUESTION,
        footer=f"{footer} · #{post.id} · {item.id}",
        post_id=post.id,
        question_id=item.id,
        choices=answer_labels(item),
    )


def _hints(item: Item) -> tuple[str, ...]:
    if isinstance(item, Practice):
        return item.hints
    if isinstance(item, OpenPrompt) and item.hint:
        return (item.hint,)
    return ()


def hint_message(item: Item, index: int, post_id: int) -> Message:
    hints = _hints(item)
    if not hints:
        return Message(sections=(Section(body="This question has no hints."),), ephemeral=True)
    index = min(max(index, 0), len(hints) - 1)
    buttons: tuple[Button, ...] = ()
    if index + 1 < len(hints):
        buttons = (Button(Action.HINT, post_id, str(index + 1), "Another hint"),)
    return Message(
        title=f"Hint {index + 1} of {len(hints)}",
        sections=(Section(body=hints[index]),),
        buttons=buttons,
        ephemeral=True,
        tone=Tone.INFO,
        post_id=post_id,
    )


def back_text(item: Item) -> str:
    """The answer side of a self-graded item."""
    if isinstance(item, Flashcard):
        return item.answer
    if isinstance(item, Practice):
        return item.answer or item.final_answer
    if isinstance(item, TypedAnswer):
        return item.shown_answer
    return ""


def grade_buttons(action: Action, key: int, suffix: str = "") -> tuple[Button, ...]:
    """Again, Hard, Good, Easy: ``value`` is the grade word (plus ``suffix``, for /review)."""
    return tuple(
        Button(action, key, f"{word}{suffix}", label, style)
        for word, label, style in _GRADE_BUTTONS
    )


def card_back(item: Item, post_id: int) -> Message:
    """The private "show answer" of a self-graded item, with the four grading buttons."""
    return Message(
        title="Answer (only you can see this)",
        sections=(
            Section(body=back_text(item)),
            Section(body="How well did you remember it?"),
        ),
        buttons=grade_buttons(Action.ANSWER, post_id),
        ephemeral=True,
        tone=Tone.INFO,
        post_id=post_id,
        choices=GRADES,
    )


def _percent(count: int, total: int) -> str:
    return f"{round(100 * count / total)}%" if total else "0%"


def _breakdown_line(label: str, count: int, total: int) -> str:
    return f"{label}: {count} ({_percent(count, total)})"


def reveal_message(post: Post, item: Item, pack_title: str, counts: Mapping[str, int]) -> Message:
    """The post as edited at close: answer, per-choice breakdown, solution, common mistakes."""
    total = sum(counts.values())
    sections = _prompt_sections(item)
    choices = choices_of(item)
    if choices:
        lines = []
        for letter, choice in zip(CHOICE_LETTERS, choices, strict=False):
            mark = "✅" if choice.correct else "▫️"
            count = counts.get(letter, 0)
            line = f"{mark} **{letter}.** {choice.text} — {count} ({_percent(count, total)})"
            if choice.why:
                line += f"\n    {choice.why}"
            lines.append(line)
        sections.append(Section(heading="Answers", body="\n".join(lines)))
    elif isinstance(item, Flashcard):
        sections.append(Section(heading="Answer", body=item.answer))
    if self_graded(item) and total:
        forgot = counts.get("again", 0) + counts.get(FORGOT, 0)
        sections.append(
            Section(
                heading="How the group did",
                body=" · ".join(
                    _breakdown_line(label, count, total)
                    for label, count in (("knew it", total - forgot), ("didn't", forgot))
                ),
            )
        )
    if isinstance(item, TypedAnswer):
        sections.extend(typed_reveal(item, counts))
    if isinstance(item, MultipleChoice | TypedAnswer) and item.explanation:
        sections.append(Section(heading="Why", body=item.explanation))
    if isinstance(item, Practice):
        steps = "\n".join(f"{n}. {step}" for n, step in enumerate(item.steps, start=1))
        sections.append(Section(heading="Solution", body=steps))
        sections.append(Section(heading="Final answer", body=item.final_answer))
        if item.common_mistakes:
            mistakes = "\n".join(f"• {m}" for m in item.common_mistakes)
            sections.append(Section(heading="Common mistakes", body=mistakes))
    if isinstance(item, OpenPrompt):
        sections.append(Section(heading="A model answer", body=item.model_answer))
    if isinstance(item, Exercise):
        sections.append(Section(heading="A reference solution", code=item.solution))
    responses = "no answers" if total == 0 else f"{total} answer{'s' if total != 1 else ''}"
    return Message(
        title=f"{_header(post, item, pack_title)} · closed",
        sections=tuple(sections),
        buttons=try_buttons(item, post.id),
        tone=Tone.SUCCESS,
        footer=f"Closed with {responses} · #{post.id} · {item.id}",
        post_id=post.id,
        question_id=item.id,
    )


def typed_reveal(item: TypedAnswer, counts: Mapping[str, int]) -> list[Section]:
    """A typed question's reveal: the accepted answers, then how the group did, and the most
    common wrong answers (as normalised when stored: no markup, no names)."""
    answer = item.shown_answer
    body = f"`{answer}`"
    if len(item.accept) > 1:
        body += " (also accepted: " + ", ".join(f"`{a}`" for a in item.accept[1:]) + ")"
    if item.number is not None and (item.number.tolerance or item.number.relative):
        within = item.number.tolerance or f"{item.number.relative:.0%}"
        body += f", within {within}"
    sections = [Section(heading="Answer", body=body)]
    total = sum(counts.values())
    if total:
        right = counts.get(answer, 0)
        # A near miss that counted (its free tries spent) is "close": graded again, the same.
        close = sum(
            n
            for text, n in counts.items()
            if text != answer and item.accept and item.grade(text).mark is Mark.CLOSE
        )
        parts = [("right", right), ("close", close), ("wrong", total - right - close)]
        line = " · ".join(
            _breakdown_line(label, count, total)
            for label, count in parts
            if count or label != "close"
        )
        wrong = sorted(
            ((n, text) for text, n in counts.items() if text != answer and text),
            key=lambda pair: (-pair[0], pair[1]),
        )[:3]
        if wrong:
            line += "\nMost common wrong answers: " + ", ".join(f"`{t}` ({n})" for n, t in wrong)
        sections.append(Section(heading="How the group did", body=line))
    return sections


def right_share(item: Item, counts: Mapping[str, int]) -> tuple[int, int] | None:
    """(right, answered) of a post's answers; ``None`` for a kind that is not scored."""
    total = sum(counts.values())
    if isinstance(item, Exercise):
        return counts.get("solved", 0), total
    if isinstance(item, TypedAnswer):
        return counts.get(item.shown_answer, 0), total
    letter = correct_letter(item)
    if letter is not None:
        return counts.get(letter, 0), total
    if self_graded(item):
        forgot = counts.get("again", 0) + counts.get(FORGOT, 0)
        return total - forgot, total
    return None


def history_message(
    channel_name: str,
    rows: Sequence[tuple[Post, Item, Mapping[str, int]]],
    tz: ZoneInfo,
    show: str,
) -> Message:
    """``/history``: the channel's recent questions, newest first, one line each."""
    if not rows:
        return Message(
            sections=(Section(body=f"No question has been posted in #{channel_name} yet."),),
            ephemeral=True,
        )
    lines = []
    for post, item, counts in rows:
        when = post.posted_at.astimezone(tz)
        prompt = " ".join(item.prompt.split())
        prompt = prompt if len(prompt) <= 70 else prompt[:69].rstrip() + "…"
        share = right_share(item, counts)
        answered = sum(counts.values())
        if isinstance(item, Exercise) and not post.is_open:
            how = f"exercise: {answered} tried, {counts.get('solved', 0)} solved"
        elif not post.is_open and share is not None and answered:
            how = f"{answered} answered, {_percent(share[0], answered)} right"
        elif not post.is_open:
            how = f"{answered} answered" if share is not None else "discussion"
        else:
            how = "open"
        lines.append(f"**#{post.id}** · {when:%a %d %b %H:%M} · {prompt} · {how}")
    return Message(
        title=f"🕘 Recent questions in #{channel_name}",
        sections=(Section(body="\n".join(lines)),),
        footer=f"Times in {tz.key}. See one with {show}.",
        ephemeral=True,
    )


def past_question_message(
    post: Post, item: Item, pack_title: str, counts: Mapping[str, int], tz: ZoneInfo, where: str
) -> Message:
    """``/question ID``: a closed question as revealed, or an open one without its answer."""
    posted = post.posted_at.astimezone(tz)
    if post.is_open:
        message = question_message(post, item, pack_title, tz)
        return replace(
            message,
            buttons=(),
            ephemeral=True,
            footer=f"Still open in #{where} (posted {posted:%a %d %b %H:%M}): answer it there.",
        )
    message = reveal_message(post, item, pack_title, counts)
    closed = post.closed_at.astimezone(tz) if post.closed_at else posted
    return replace(
        message,
        ephemeral=True,
        footer=(
            f"{message.footer} · posted in #{where} {posted:%a %d %b %H:%M}, "
            f"closed {closed:%a %d %b %H:%M} ({tz.key})"
        ),
        attachments=(),
    )


def _name(name: str) -> str:
    """A member-chosen display name, safe to put in a message: no pings, no Markdown."""
    return escape_markup(neutralise(name))


def leaderboard_message(board: Leaderboard, caller_name: str) -> Message:
    label = _WINDOW_LABEL[board.window]
    if not board.rows:
        body = "No points yet. Answer a question to get on the board!"
    else:
        medals = {1: "🥇", 2: "🥈", 3: "🥉"}
        body = "\n".join(
            f"{medals.get(row.rank, f'{row.rank}.')} **{_name(row.display_name)}**"
            f" — {row.points} pts ({row.answers} answer{'s' if row.answers != 1 else ''})"
            for row in board.rows
        )
    if board.caller is not None and all(r.member_id != board.caller.member_id for r in board.rows):
        body += (
            f"\n…\n{board.caller.rank}. **{_name(caller_name)}** — {board.caller.points} pts (you)"
        )
    elif board.caller is None and board.rows:
        body += f"\n\n{_name(caller_name)}, you have no points {label} yet."
    since = f" (since {board.since:%a} {board.since.day} {board.since:%b})" if board.since else ""
    where = f" in #{board.channel}" if board.channel else ""
    return Message(title=f"🏆 Leaderboard{where} — {label}{since}", sections=(Section(body=body),))


def streak_board_message(rows: Sequence[StreakBoardRow]) -> Message:
    """``/leaderboard streaks``: the longest streaks going today, with their freezes."""
    if not rows:
        body = "No streak is going. Answer a question today to start one!"
    else:
        medals = {1: "🥇", 2: "🥈", 3: "🥉"}
        body = "\n".join(
            f"{medals.get(row.rank, f'{row.rank}.')} **{_name(row.display_name)}**"
            f" — {row.days} day{'s' if row.days != 1 else ''}"
            + (f" (🧊 {row.freezes} held)" if row.freezes else "")
            for row in rows
        )
    body += (
        "\n\nA freeze is earned every 7 days of streak (at most 2 held) and covers one missed "
        "day; a frozen day keeps the streak but does not add to it."
    )
    return Message(title="🔥 Longest streaks going", sections=(Section(body=body),))


def review_section(summary: ReviewSummary) -> Section:
    """/stats' spaced repetition part: due cards, true retention, mastery per tag."""
    if summary.cards == 0:
        return Section(heading="Spaced repetition", body="No cards yet.")
    retention = (
        f"{round(100 * summary.recalled / summary.reviewed)}% "
        f"({summary.recalled} of {summary.reviewed})"
        if summary.reviewed
        else "— (no review a day or more after the last yet)"
    )
    lines = [
        f"Cards: {summary.cards} · due now: **{summary.due}**",
        f"True retention, last 30 days: {retention}",
    ]
    if summary.tags:
        lines.append("Mastery by tag (recall a week from now):")
        lines.extend(
            f"• {tag or '(untagged)'}: {round(100 * mastery)}% ({count} card"
            f"{'s' if count != 1 else ''})"
            for tag, count, mastery in summary.tags
        )
    return Section(heading="Spaced repetition", body="\n".join(lines))


def stats_message(
    stats: MemberStats, *, own: bool, reviews: ReviewSummary | None = None
) -> Message:
    answered, correct = stats.answered, stats.correct
    accuracy = f"{round(100 * correct / answered)}%" if answered else "—"
    streak = f"{stats.current_streak} day{'s' if stats.current_streak != 1 else ''}"
    lines = [
        f"Points: **{stats.points_all}** all time, **{stats.points_week}** this week",
        f"Answered: {answered} · correct: {correct} · accuracy: {accuracy}",
        f"Streak: **{streak}** (best {stats.best_streak})",
        f"Streak freezes: {stats.freezes} held · {stats.freezes_used} used"
        " (one per 7 streak days, at most 2)",
    ]
    if stats.rank_all is not None:
        lines.append(f"Rank: #{stats.rank_all} all time")
    if own and stats.current_streak == 0 and stats.best_streak > 0:
        lines.append("Answer a question today to start a new streak!")
    title = "📈 Your stats" if own else f"📈 Stats for {_name(stats.display_name)}"
    sections = [Section(body="\n".join(lines))]
    if reviews is not None:
        sections.append(review_section(reviews))
    return Message(title=title, sections=tuple(sections))


def help_message(lines: Sequence[tuple[str, str, bool]], *, admin: bool) -> Message:
    """What a member can do: ``(usage, what it does, admins only)`` lines, generated by the
    adapters from their command table in the platform's own syntax; admin lines for admins."""
    shown = [f"`{usage}` — {text}" for usage, text, only_admins in lines if not only_admins]
    if admin:
        shown.append("")
        shown.append("**Admins**")
        shown.extend(f"`{usage}` — {text}" for usage, text, only_admins in lines if only_admins)
    shown.append("")
    shown.append(
        "Answer questions with their buttons: only your first answer counts, and your "
        "feedback is private. Answer on consecutive days to build a streak bonus."
    )
    return Message(
        title="studybot — study a little every day",
        sections=(Section(body="\n".join(shown)),),
        ephemeral=True,
    )


# --- spaced repetition (/review) ---------------------------------------------------------------


def review_value(what: str, reviewed: int, card_reviews: int) -> str:
    """A /review button's value: what was clicked, the session's count, the card's count
    (a second click on the same button finds the count moved on and is refused)."""
    return f"{what}-{reviewed}-{card_reviews}"


def parse_review_value(value: str) -> tuple[str, int, int] | None:
    parts = value.split("-")
    if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])


def review_card(
    item: Item,
    key: int,
    pack_title: str,
    *,
    due: int,
    reviewed: int,
    card_reviews: int,
    prep: int = 0,
) -> Message:
    """A due card, privately: choices to click, or "Show answer" for a self-graded card."""
    sections = _prompt_sections(item)
    choices = choices_of(item)
    if choices:
        sections.append(Section(body=_choice_lines(choices)))
        buttons = tuple(
            Button(
                Action.REVIEW,
                key,
                review_value(letter, reviewed, card_reviews),
                letter,
                ButtonStyle.PRIMARY,
            )
            for letter in CHOICE_LETTERS[: len(choices)]
        )
    else:
        typed = isinstance(item, TypedAnswer)  # type the answer; the bot grades it
        buttons = (
            Button(
                Action.REVIEW,
                key,
                review_value(TYPE_IT if typed else "show", reviewed, card_reviews),
                "Answer" if typed else "Show answer",
                ButtonStyle.PRIMARY,
            ),
        )
    left = f"{due} card{'s' if due != 1 else ''} due"
    if prep:  # nothing is due: exam prep brought this one forward
        left = f"{prep} exam card{'s' if prep != 1 else ''} to prep today"
    return Message(
        title=f"🔁 Review · {pack_title} · {item.difficulty.value}",
        sections=tuple(sections),
        buttons=buttons,
        ephemeral=True,
        tone=Tone.QUESTION,
        footer=f"{left} · only you see this · {item.id}",
        question_id=item.id,
        choices=answer_labels(item),
    )


def review_back(item: Item, key: int, *, reviewed: int, card_reviews: int) -> Message:
    """The answer side of a card under review, with Again, Hard, Good, Easy."""
    return Message(
        title="Answer (only you can see this)",
        sections=(Section(body=back_text(item)), Section(body="How well did you remember it?")),
        buttons=grade_buttons(Action.REVIEW, key, f"-{reviewed}-{card_reviews}"),
        ephemeral=True,
        tone=Tone.INFO,
        question_id=item.id,
        choices=GRADES,
    )


TYPE_IT = "type"
"""A typed card's /review button: opens a text box (the console: ``/review TEXT``)."""
OVERRIDE = "o"
"""A typed review's "change the grade" buttons: ``o<rating>`` (``o2`` is hard), once."""


def typed_review_feedback(
    item: TypedAnswer,
    typed: str,
    grade: Grade,
    next_in: str,
    key: int,
    *,
    right: bool,
    reviewed: int,
    card_reviews: int,
) -> Message:
    """A typed card graded by the bot: right or not, the grade it gave (from the answer and
    the time taken), and, after a miss, what was typed against what was expected, as Anki's
    type-in shows it. Buttons change the grade once (:data:`OVERRIDE`)."""
    if right:
        text = f"✅ Right: {item.shown_answer}. Graded **{grade.word}**."
        sections = [Section(body=f"{text} Next review of this card: in {next_in}.")]
    else:
        text = f"❌ Not quite. Graded **{grade.word}**; next review of this card: in {next_in}."
        sections = [Section(body=text), Section(code=typed_diff(typed, item.shown_answer))]
    others = [g for g in Grade if g is not grade]
    buttons = tuple(
        Button(
            Action.REVIEW,
            key,
            review_value(f"{OVERRIDE}{int(g)}", reviewed, card_reviews),
            f"Make it {g.word}",
            ButtonStyle.SECONDARY,
        )
        for g in others
    )
    return Message(
        sections=tuple(sections),
        buttons=buttons,
        ephemeral=True,
        tone=Tone.SUCCESS if right else Tone.WARNING,
        question_id=item.id,
    )


def typed_diff(typed: str, expected: str) -> str:
    """Typed above expected, with ``^`` under every character that differs (a code block)."""
    shown = clip(" ".join(typed.split()), 80)
    matcher = difflib.SequenceMatcher(a=shown.casefold(), b=expected.casefold(), autojunk=False)
    marks = [" "] * len(shown)
    for op, a1, a2, _b1, _b2 in matcher.get_opcodes():
        if op != "equal":
            for i in range(a1, max(a2, a1 + 1)):
                if i < len(marks):
                    marks[i] = "^"
                else:
                    marks.append("^")
    return f"typed:    {shown}\n          {''.join(marks).rstrip()}\nexpected: {expected}"


def review_feedback(item: Item, picked: str, grade_word: str, next_in: str) -> Message:
    """What a graded review says: right or wrong (with the answer), and when it comes back."""
    letter = correct_letter(item)
    sections: list[Section] = []
    if letter is None:
        text = f"Graded **{grade_word}**."
        tone = Tone.WARNING if grade_word == "again" else Tone.SUCCESS
    elif picked == letter:
        text = f"✅ Correct: {letter}."
        tone = Tone.SUCCESS
    else:
        right = choices_of(item)[CHOICE_LETTERS.index(letter)]
        text = f"❌ Not quite: you picked {picked}; the answer is **{letter}. {right.text}**"
        if right.why:
            text += f"\n{right.why}"
        tone = Tone.WARNING
    sections.append(Section(body=f"{text} Next review of this card: in {next_in}."))
    return Message(sections=tuple(sections), ephemeral=True, tone=tone, question_id=item.id)


def review_summary(
    reviewed: int, next_in: str | None, *, more: int, command: str, stale: bool = False
) -> Message:
    """The end of a /review round: how many, when the next card is due, and "more" if any."""
    if reviewed == 0 and more == 0:
        if next_in is None:
            body = (
                "You have no cards yet. Answer questions (or flashcards) and each one becomes a "
                f"card that comes back just before you would forget it; then use {command}."
            )
        else:
            body = f"Nothing is due right now. Your next card is due in {next_in}."
    else:
        done = f"**{reviewed} reviewed.**"
        if more:
            body = f"{done} {more} more card{'s are' if more != 1 else ' is'} due now."
        elif next_in is None:
            body = f"{done} Nothing more is due."
        else:
            body = f"{done} Next due in {next_in}."
    if stale:
        body = "That card was already graded. " + body
    buttons: tuple[Button, ...] = ()
    if more:
        buttons = (
            Button(
                Action.REVIEW, 0, review_value("more", 0, 0), "Review more", ButtonStyle.PRIMARY
            ),
        )
    return Message(
        title="🔁 Review", sections=(Section(body=body),), buttons=buttons, ephemeral=True
    )
