"""Neutral :class:`~bot.core.messages.Message` -> Slack Block Kit, within Slack's limits.

Three rules shape everything here:

* **Nothing can mention anyone.** Slack resolves ``<!channel>``, ``<@U…>`` and ``<#C…>`` in
  mrkdwn and in a message's top-level ``text``; escaping ``&``, ``<`` and ``>`` (Slack's own
  rule, and the only escaping it wants) turns them into plain characters. mrkdwn objects are
  also marked ``verbatim`` so Slack does not link-ify bare ``@here`` or ``#channel`` words.
  ``plain_text`` objects (header, buttons) are never parsed for mentions, so they stay as is.
* **Never fail on size.** Slack rejects a whole message over its limits (50 blocks, 3000
  characters a section, 150 a header, 75 a button, and about 12,000 characters of text in all
  its blocks, ``msg_blocks_too_long``), so long prose and code are split into several sections,
  and :func:`fit` keeps a message to :data:`MAX_BLOCKS_TEXT`: what does not fit moves, whole,
  into continuation messages (a thread, further private replies, or a file: the adapter picks),
  and the first message says where the rest is. Nothing is lost without a word.
* **Always a text fallback**: notifications and screen readers use ``text``, and slack_sdk warns
  when blocks come without it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from bot.adapters.slack.manifest import (
    ANSWER_MODAL_CALLBACK,
    RUN_MODAL_CALLBACK,
    SOLVE_MODAL_CALLBACK,
    WRITE_MODAL_CALLBACK,
)
from bot.core.messages import (
    BOLD,
    Button,
    ButtonStyle,
    Message,
    Section,
    defuse_fences,
    neutralise,
    unescape_markup,
)

__all__ = [
    "MAX_BLOCKS",
    "MAX_BLOCKS_TEXT",
    "MAX_BUTTON_TEXT",
    "MAX_HEADER_TEXT",
    "MAX_SECTION_TEXT",
    "SlackMessage",
    "answer_modal",
    "blocks_text_length",
    "escape",
    "fit",
    "home_view",
    "inline_attachments",
    "mrkdwn",
    "render",
    "run_modal",
    "solve_modal",
    "write_modal",
]

Block = dict[str, Any]

MAX_BLOCKS = 50
MAX_SECTION_TEXT = 3000
MAX_HEADER_TEXT = 150
MAX_BUTTON_TEXT = 75
MAX_ACTIONS = 25  # elements in one actions block
MAX_CONTEXT_TEXT = 2000
MAX_FALLBACK_TEXT = 3000  # Slack allows 40k, but this is a notification preview
MAX_MODAL_INPUT = 3000  # plain_text_input max_length
MAX_INLINE_ATTACHMENT = 2500
MAX_METADATA = 3000  # a view's private_metadata
#: The bot's budget of text in one message's blocks. Slack's own cut-off is undocumented
#: (refusals were seen from 11,341 characters, slackapi/bolt-js #2867 and #2509): 10,000 keeps
#: every message well clear of it.
MAX_BLOCKS_TEXT = 10_000
#: Room kept in a shortened message for the note that says where the rest is.
NOTE_ROOM = 300
#: Room the last guard in render_blocks keeps for its own note (less than NOTE_ROOM less the
#: note fit adds, so a fitted message never meets the guard).
GUARD_NOTE_ROOM = 100
#: Longest line the fitter moves as one piece; longer lines are split at a separator first.
MAX_LINE = 1500
CUT = "…"


def escape(text: str) -> str:
    """Slack's escaping for mrkdwn and ``text``: only ``&``, ``<`` and ``>``, in that order."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn(text: str) -> str:
    """The core's tiny markup (``**bold**``, backtick spans) as escaped Slack mrkdwn."""
    return unescape_markup(BOLD.sub(r"*\1*", escape(text)))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(CUT)].rstrip() + CUT


def _mrkdwn_object(text: str) -> Block:
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def _section(text: str) -> Block:
    return {"type": "section", "text": _mrkdwn_object(text)}


def _chunks(text: str, limit: int) -> list[str]:
    """Split at line ends into pieces of at most ``limit`` characters (hard-split long lines)."""
    pieces: list[str] = []
    current = ""
    for whole in text.split("\n"):
        line = whole
        while len(line) > limit:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(line[:limit])
            line = line[limit:]
        candidate = f"{current}\n{line}" if current else line
        if len(candidate) > limit:
            pieces.append(current)
            current = line
        else:
            current = candidate
    if current or not pieces:
        pieces.append(current)
    return pieces


def _fence_safe(code: str) -> str:
    """Code for a ``` block: escaped, and unable to close the fence early."""
    defused = defuse_fences(code)
    return escape(defused.rstrip("\n"))


def _section_blocks(section: Section) -> list[Block]:
    texts: list[str] = []
    prose = ""
    if section.heading:
        prose = f"*{escape(section.heading)}*"
    if section.body:
        prose = f"{prose}\n{mrkdwn(section.body)}" if prose else mrkdwn(section.body)
    if prose:
        texts.extend(_chunks(prose, MAX_SECTION_TEXT))
    if section.code is not None:
        fence = "```\n{}\n```"
        room = MAX_SECTION_TEXT - len(fence.format(""))
        code = _fence_safe(section.code) or " "
        fenced = [fence.format(piece) for piece in _chunks(code, room)]
        if texts and len(texts[-1]) + 1 + len(fenced[0]) <= MAX_SECTION_TEXT:
            texts[-1] = f"{texts[-1]}\n{fenced.pop(0)}"  # a heading sits on its code block
        texts.extend(fenced)
    return [_section(text) for text in texts if text.strip()]


def _style(button: Button, primary_allowed: bool) -> str | None:
    """Slack has only ``primary`` (green) and ``danger`` (red), and asks for one primary a set."""
    if button.style is ButtonStyle.DANGER:
        return "danger"
    if button.style is ButtonStyle.SUCCESS:
        return "primary"
    if button.style is ButtonStyle.PRIMARY and primary_allowed:
        return "primary"
    return None


def _button(button: Button, primary_allowed: bool) -> Block:
    element: Block = {
        "type": "button",
        "action_id": button.custom_id,  # answer:12:B -- unique within a message
        "value": button.value,
        "text": {"type": "plain_text", "text": _cut(button.label, MAX_BUTTON_TEXT), "emoji": True},
    }
    style = _style(button, primary_allowed)
    if style is not None:
        element["style"] = style
    return element


def _action_blocks(buttons: tuple[Button, ...]) -> list[Block]:
    primaries = sum(1 for b in buttons if b.style is ButtonStyle.PRIMARY)
    elements = [_button(b, primaries == 1) for b in buttons]
    return [
        {
            "type": "actions",
            "block_id": f"studybot-actions-{n}",
            "elements": elements[i : i + MAX_ACTIONS],
        }
        for n, i in enumerate(range(0, len(elements), MAX_ACTIONS))
    ]


def _context(text: str) -> Block:
    return {"type": "context", "elements": [_mrkdwn_object(_cut(text, MAX_CONTEXT_TEXT))]}


def render_blocks(message: Message, *, max_blocks: int = MAX_BLOCKS) -> list[Block]:
    """The message's blocks: header, sections, buttons, footer; never more than ``max_blocks``."""
    head: list[Block] = []
    mention = _mention(message)
    if mention:
        head.append(_section(mention))
    if message.title:
        title = _cut(message.title, MAX_HEADER_TEXT)
        head.append({"type": "header", "text": {"type": "plain_text", "text": title}})
    body = [block for section in message.sections for block in _section_blocks(section)]
    tail = _action_blocks(message.buttons)
    if message.byline is not None:  # the name, not <@U…>: a mention would notify every post
        tail.insert(0, _context(mrkdwn("✍️ " + message.byline.text)))
    if message.footer:
        tail.append(_context(mrkdwn(message.footer)))
    # A last guard: render() fits messages first (see fit), so these cuts happen only to a
    # caller that skips it, and then visibly rather than as a refused message.
    room = max_blocks - len(head) - len(tail)
    text_room = MAX_BLOCKS_TEXT - blocks_text_length([*head, *tail]) - GUARD_NOTE_ROOM
    kept = len(body)
    while kept and (kept > room or blocks_text_length(body[:kept]) > text_room):
        kept -= 1
    if kept < len(body):
        kept = min(kept, max(room - 1, 0))
        dropped = len(body) - kept
        note = _context(f"{CUT} {dropped} more part(s) not shown: too long for one Slack message.")
        body = [*body[:kept], note]
    return [*head, *body, *tail][:max_blocks]


_USERGROUP = re.compile(r"<!subteam\^[A-Z0-9]+>")


def _mention(message: Message) -> str | None:
    """The message's ``mention`` as Slack text: a user group pings, anything else is shown.

    Only ``<!subteam^ID>`` (what Slack sends for ``@group`` typed in a slash command) is left
    unescaped; the core has already refused mass mentions, and this refuses everything else.
    """
    if not message.mention:
        return None
    mention = message.mention.strip()
    return mention if _USERGROUP.fullmatch(mention) else escape(mention)


def fallback_text(message: Message) -> str:
    """The plain-text ``text`` that goes with the blocks (escaped: Slack parses it too)."""
    text = _cut(escape(replace(message, mention=None).plain_text()), MAX_FALLBACK_TEXT)
    mention = _mention(message)
    if mention:
        text = f"{mention} {text}" if text else mention
    return text or " "


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """A rendered message: ``text`` + ``blocks``, ready for chat.* calls or a response_url.

    ``rest`` holds the continuation messages of a message too long for one (each within the
    limits on its own); the sender delivers them where the first message's note says.
    """

    text: str
    blocks: list[Block]
    rest: tuple[SlackMessage, ...] = ()

    def kwargs(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": self.blocks}


#: Where a shortened message's rest goes, as its note says it (the adapter delivers it there).
IN_THREAD = "in the thread under this message"
IN_NEXT_MESSAGES = "in the next messages"


def render(
    message: Message, *, rest_where: str = IN_THREAD, keep_rest: bool = True
) -> SlackMessage:
    """``message`` as Slack text and blocks within every limit (see :func:`fit`).

    When it is too long, the first message says how much more there is and ``rest_where`` it
    is; ``keep_rest=False`` leaves the continuations out (the caller sends the whole text some
    other way, such as a file, and ``rest_where`` says so).
    """
    first, rest = fit(message)
    if rest:
        first = replace(
            first, sections=(*first.sections, Section(body=_rest_note(rest, rest_where)))
        )
    parts: tuple[SlackMessage, ...] = ()
    if rest and keep_rest:
        parts = tuple(SlackMessage(fallback_text(part), render_blocks(part)) for part in rest)
    return SlackMessage(fallback_text(first), render_blocks(first), parts)


def _rest_note(rest: tuple[Message, ...], where: str) -> str:
    lines = sum(_line_count(section) for part in rest for section in part.sections)
    return (
        f"✂️ Too long for one Slack message: {lines} more line{'s' if lines != 1 else ''} {where}."
    )


def _line_count(section: Section) -> int:
    return len(_units(section))


def blocks_text_length(blocks: Any) -> int:
    """Every ``text`` string in ``blocks``, at any depth, counted together: what Slack holds
    against its ``msg_blocks_too_long`` budget (sections, headers, context, button labels)."""
    if isinstance(blocks, dict):
        total = 0
        for key, value in blocks.items():
            if key == "text" and isinstance(value, str):
                total += len(value)
            else:
                total += blocks_text_length(value)
        return total
    if isinstance(blocks, list):
        return sum(blocks_text_length(item) for item in blocks)
    return 0


def _split_line(line: str, limit: int = MAX_LINE) -> list[str]:
    """A long line in pieces of at most ``limit``, cut after a separator where there is one
    (``·`` between names, a comma, a space), so a list of names stays readable."""
    pieces: list[str] = []
    while len(line) > limit:
        cut = limit
        for sep in (" · ", ", ", "; ", " "):
            found = line.rfind(sep, limit // 2, limit - len(sep))
            if found > 0:
                cut = found + len(sep)
                break
        pieces.append(line[:cut].rstrip())
        line = line[cut:]
    pieces.append(line)
    return pieces


def _units(section: Section) -> list[tuple[bool, str]]:
    """A section as lines that can move on their own: ``(is_code, line)``."""
    units = [(False, piece) for line in section.body.split("\n") for piece in _split_line(line)]
    if not section.body:
        units = []
    if section.code is not None:
        code = section.code.rstrip("\n")
        units += [(True, piece) for line in code.split("\n") for piece in _split_line(line)]
    return units


def _from_units(
    section: Section, units: list[tuple[bool, str]], *, continued: bool = False
) -> Section:
    body = "\n".join(line for is_code, line in units if not is_code)
    code_lines = [line for is_code, line in units if is_code]
    heading = section.heading
    if continued and heading:
        heading = f"{heading} (continued)"
    return Section(
        body=body,
        heading=heading,
        code="\n".join(code_lines) if code_lines else None,
        language=section.language,
    )


def _cost(sections: list[Section]) -> tuple[int, int]:
    blocks = [block for section in sections for block in _section_blocks(section)]
    return blocks_text_length(blocks), len(blocks)


def _take(
    sections: tuple[Section, ...], room_text: int, room_blocks: int
) -> tuple[tuple[Section, ...], tuple[Section, ...]]:
    """The sections that fit in the room (the last one cut between lines), and the rest."""
    kept: list[Section] = []
    used_text = used_blocks = 0  # sections render independently: their costs add up

    def fits(section: Section) -> tuple[bool, int, int]:
        text, count = _cost([section])
        return used_text + text <= room_text and used_blocks + count <= room_blocks, text, count

    for index, section in enumerate(sections):
        whole, text, count = fits(section)
        if whole:
            kept.append(section)
            used_text, used_blocks = used_text + text, used_blocks + count
            continue
        units = _units(section)
        low, high = 0, len(units) - 1  # the most lines of this section that still fit
        while low < high:
            middle = (low + high + 1) // 2
            if fits(_from_units(section, units[:middle]))[0]:
                low = middle
            else:
                high = middle - 1
        following = sections[index + 1 :]
        if low == 0:
            return tuple(kept), (section, *following)
        kept.append(_from_units(section, units[:low]))
        return tuple(kept), (_from_units(section, units[low:], continued=True), *following)
    return tuple(kept), ()


def fit(
    message: Message, *, budget: int = MAX_BLOCKS_TEXT, max_blocks: int = MAX_BLOCKS
) -> tuple[Message, tuple[Message, ...]]:
    """``message`` cut to Slack's size, and the continuation messages that hold the rest.

    Title, buttons, byline and footer stay on the first message, with as many sections as fit
    (the last one cut between lines, a long line at a separator); every continuation holds the
    next sections that fit and says which part it is. Each message, rendered, stays within
    ``budget`` characters of block text and ``max_blocks`` blocks, with room for a note.
    """
    frame = render_blocks(replace(message, sections=()))
    room_text = budget - blocks_text_length(frame) - NOTE_ROOM
    room_blocks = max_blocks - len(frame) - 2
    kept, rest = _take(message.sections, room_text, room_blocks)
    if not rest:
        return message, ()
    if not kept and room_text < NOTE_ROOM:  # the frame alone is the whole budget
        kept = (Section(body=""),)
    parts: list[tuple[Section, ...]] = []
    while rest:
        taken, rest = _take(rest, budget - NOTE_ROOM, max_blocks - 2)
        if not taken:  # cannot happen with lines of MAX_LINE; never loop forever
            taken, rest = (rest[0],), rest[1:]
        parts.append(taken)
    total = len(parts) + 1
    continuations = tuple(
        Message(
            sections=taken,
            ephemeral=message.ephemeral,
            tone=message.tone,
            footer=f"{_cut(message.title or 'continued', 100)} · part {number} of {total}",
        )
        for number, taken in enumerate(parts, start=2)
    )
    return replace(message, sections=kept), continuations


def inline_attachments(message: Message) -> Message:
    """Attachments as extra code sections, for replies that cannot carry a file (ephemeral)."""
    if not message.attachments:
        return message
    extra = tuple(
        Section(
            heading=a.filename,
            code=_cut(neutralise(a.content.decode("utf-8", "replace")), MAX_INLINE_ATTACHMENT),
        )
        if _is_text(a.content)
        else Section(body=f"(`{a.filename}` is a file or picture that a private reply cannot show)")
        for a in message.attachments
    )
    return replace(message, sections=message.sections + extra, attachments=())


def _is_text(data: bytes) -> bool:
    try:
        data[:4096].decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= 4093 and b"\x00" not in data[:4096]  # a character cut at the end
    return b"\x00" not in data[:4096]


def home_view(home: Message) -> Block:
    """The App Home tab: the member's home (``bot.services.home``), and how to get going."""
    guide = Message(
        sections=(
            Section(
                body=(
                    "Type `/study quiz` in a channel for a question, `/study leaderboard` to see "
                    "who is ahead, `/study run` to try a torch snippet, `/study help` for the rest."
                )
            ),
        )
    )
    header: Block = {"type": "header", "text": {"type": "plain_text", "text": "studybot"}}
    guide_blocks = render_blocks(guide, max_blocks=5)
    room = MAX_BLOCKS_TEXT - blocks_text_length([header, *guide_blocks])
    first, rest = fit(home, budget=room, max_blocks=40)
    if rest:  # a view has no thread: say what is left out, and where the commands show it
        note = _rest_note(rest, "not shown here; the commands below list everything")
        first = replace(first, sections=(*first.sections, Section(body=note)))
    blocks = [header, *render_blocks(first, max_blocks=40), {"type": "divider"}, *guide_blocks]
    return {"type": "home", "callback_id": "studybot_home", "blocks": blocks}


def run_modal(channel_id: str, code: str = "", graph: tuple[str, ...] | None = None) -> Block:
    """The ``/study run`` modal; ``private_metadata`` remembers where to post the output.

    With ``graph`` it is ``/study graph``: the metadata also says which tensors to draw.
    """
    element: Block = {
        "type": "plain_text_input",
        "action_id": "code",
        "multiline": True,
        "max_length": MAX_MODAL_INPUT,
        "placeholder": {"type": "plain_text", "text": "print(torch.ones(2, 3).sum())"},
    }
    notes: list[Block] = []
    if code:
        element["initial_value"] = code[:MAX_MODAL_INPUT]
        if len(code) > MAX_MODAL_INPUT:  # Slack's editor holds no more: say so, never cut silently
            notes.append(
                _context(
                    f"✂️ The code was {len(code):,} characters; this editor holds "
                    f"{MAX_MODAL_INPUT:,}, so it was cut after line "
                    f"{code[:MAX_MODAL_INPUT].count(chr(10)) + 1}. Shorten it, or run it "
                    "in parts."
                )
            )
    metadata = json.dumps(
        {"channel": channel_id} | ({"graph": list(graph)} if graph is not None else {})
    )
    if len(metadata) > MAX_METADATA:
        # Callers check the names first (RunService.check_graph); this is the last guard.
        raise ValueError(f"private_metadata of {len(metadata)} characters")
    return {
        "type": "modal",
        "callback_id": RUN_MODAL_CALLBACK,
        "private_metadata": metadata,
        "title": {
            "type": "plain_text",
            "text": "Draw an autograd graph" if graph is not None else "Run a torch snippet",
        },
        "submit": {"type": "plain_text", "text": "Draw" if graph is not None else "Run"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "code",
                "label": {"type": "plain_text", "text": "Python code"},
                "element": element,
            },
            *notes,
            _context("Runs on CPU in a sandbox with no network; the output is posted here."),
        ],
    }


def solve_modal(channel_id: str, post_id: int, title: str, starter: str, entry: str) -> Block:
    """An exercise's editor, pre-filled with its starter; ``private_metadata`` keeps the
    channel (the verdict is posted there, privately) and the exercise's post."""
    return {
        "type": "modal",
        "callback_id": SOLVE_MODAL_CALLBACK,
        "private_metadata": json.dumps({"channel": channel_id, "post": post_id}),
        "title": {"type": "plain_text", "text": title[:24]},
        "submit": {"type": "plain_text", "text": "Submit"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "code",
                "label": {"type": "plain_text", "text": "Your solution"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "code",
                    "multiline": True,
                    "max_length": MAX_MODAL_INPUT,
                    "initial_value": starter[:MAX_MODAL_INPUT],
                },
            },
            _context(
                f"Define `{entry}`: it runs in the sandbox against the examples and hidden "
                "checks; only you see the verdict."
            ),
        ],
    }


ANSWER_MAX = 200  # bot.core.requests.MAX_TYPED


def answer_modal(channel_id: str, post_id: int, review: tuple[int, int] | None = None) -> Block:
    """A typed question's **Answer**: one line; ``private_metadata`` keeps the channel (the
    verdict is posted there, privately) and the post. "Almost" is shown in the modal itself.
    With ``review`` (the session's and the card's counts) it answers a /review card, whose
    key ``post_id`` then is."""
    meta: dict[str, object] = {"channel": channel_id, "post": post_id}
    if review is not None:
        meta["review"] = list(review)
    return {
        "type": "modal",
        "callback_id": ANSWER_MODAL_CALLBACK,
        "private_metadata": json.dumps(meta),
        "title": {
            "type": "plain_text",
            "text": "Your review card" if review is not None else f"Answer #{post_id}"[:24],
        },
        "submit": {"type": "plain_text", "text": "Answer"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "answer",
                "label": {"type": "plain_text", "text": "Your answer"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "answer",
                    "max_length": ANSWER_MAX,
                    "placeholder": {"type": "plain_text", "text": "x.grad"},
                },
            },
            _context("Only you see it; a spelling slip gets a second look."),
        ],
    }


_WRITE_FIELDS = (
    ("prompt", "Question", "What does x.grad hold after…?", False),
    ("choices", "Choices (or the answer)", "* the right one\nanother choice\n…", False),
    ("explanation", "Why", "Shown when the question closes", True),
    ("code", "Code", "A snippet the question is about", True),
    ("expected", "What the code prints (or the exception)", "tensor([2., 2.])", True),
)


def write_modal(channel_id: str, difficulty: str, tags: tuple[str, ...]) -> Block:
    """The ``/study write`` modal; ``private_metadata`` keeps the channel, difficulty, tags."""
    blocks: list[Block] = [
        {
            "type": "input",
            "block_id": name,
            "optional": optional,
            "label": {"type": "plain_text", "text": label},
            "element": {
                "type": "plain_text_input",
                "action_id": name,
                "multiline": name != "prompt",
                "max_length": MAX_MODAL_INPUT if name == "code" else 1000,
                "placeholder": {"type": "plain_text", "text": placeholder},
            },
        }
        for name, label, placeholder, optional in _WRITE_FIELDS
    ]
    blocks.append(
        _context(
            "Put * before the right choice; one line without * makes a flashcard. Code is run "
            "in the sandbox and must print what you say before the question is added."
        )
    )
    return {
        "type": "modal",
        "callback_id": WRITE_MODAL_CALLBACK,
        "private_metadata": json.dumps(
            {"channel": channel_id, "difficulty": difficulty, "tags": list(tags)}
        ),
        "title": {"type": "plain_text", "text": "Write a question"},
        "submit": {"type": "plain_text", "text": "Check"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": blocks,
    }
