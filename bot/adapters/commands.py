"""THE command table: every chat command, declared once, as data.

Before this table the commands lived in four places (the console's own list, Slack's parser,
Discord's decorators and the core's help list) and drifted: ``/quiz`` took pack and difficulty
on Discord, a pack only on Slack, and ``--difficulty --tag`` in the console. Now a command's
name, subcommands, typed arguments, help line and admin-only flag are written here once, and
what a member sees is generated from it: the usage line in each platform's style
(:func:`usage`) and ``/help`` (:func:`help_lines`). ``tests/adapters/test_command_table.py``
walks the table and fails when a platform lacks a command or an option.

The table is plain frozen data with no imports from the platforms, so every adapter (and the
test) can read it without loading discord.py or slack-bolt.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import time
from typing import Any, Literal

from bot.core.errors import UsageError
from bot.core.recap import parse_when
from bot.core.requests import (
    MAX_REASON,
    MAX_TYPED,
    RecapNow,
    RecapOff,
    RecapOn,
    RecapRequest,
    RecapShow,
    Remind,
    RemindOff,
    RemindRequest,
    RemindShow,
    RewardAdd,
    RewardRemove,
    RewardsList,
    RewardsPreview,
    RewardsRequest,
    RoundRequest,
    RoundSkip,
    RoundStart,
    RoundStop,
    SettingChange,
    SettingsHistory,
    SettingShow,
    SettingsRequest,
    SuggestionApprove,
    SuggestionReject,
    SuggestionsList,
    SuggestionsRequest,
)
from bot.core.rewards import MAX_THRESHOLD, Metric, parse_threshold
from bot.core.rounds import (
    MAX_QUESTIONS,
    MAX_SECONDS,
    MAX_TALK,
    MAX_TEAMS,
    MIN_SECONDS,
    MIN_TALK,
    MIN_TEAMS,
    Scoring,
)
from bot.core.workspace_settings import Setting

__all__ = [
    "ALL",
    "COMMANDS",
    "CONSOLE",
    "DISCORD",
    "SLACK",
    "TEXT",
    "Arg",
    "Command",
    "DiscordOption",
    "HelpLine",
    "HistoryRequest",
    "Kind",
    "LeaderboardRequest",
    "Platform",
    "PostRequest",
    "QuestionRequest",
    "QuizRequest",
    "ReportRequest",
    "Request",
    "Values",
    "command",
    "discord_options",
    "help_lines",
    "help_rows",
    "leading_options",
    "parse",
    "parse_subcommand",
    "prefix",
    "recap_request",
    "remind_request",
    "rewards_request",
    "round_of",
    "round_request",
    "settings_request",
    "suggestions_of",
    "suggestions_request",
    "synopsis",
    "usage",
]

Platform = Literal["discord", "slack", "console"]
DISCORD: frozenset[Platform] = frozenset({"discord"})
SLACK: frozenset[Platform] = frozenset({"slack"})
CONSOLE: frozenset[Platform] = frozenset({"console"})
TEXT: frozenset[Platform] = frozenset({"slack", "console"})  # commands typed as words
ALL: frozenset[Platform] = frozenset({"discord", "slack", "console"})

_PREFIX: dict[Platform, str] = {"discord": "/", "slack": "/study ", "console": "/"}


class Kind(enum.StrEnum):
    """What an argument's value is: how it is typed, checked and shown in a usage line."""

    WORD = "word"  # one word: a pack's slug, a timezone, a day
    INT = "int"  # a whole number: an id, a count
    CHOICE = "choice"  # one of :attr:`Arg.choices`
    DURATION = "duration"  # 90m, 2h, 1d
    TIME = "time"  # HH:MM, local to a timezone
    TEXT = "text"  # the rest of the line, spaces and all (a reason, code)
    FLAG = "flag"  # there or not: ``here``, ``--force``
    MEMBER = "member"  # a member: a mention on Slack and Discord, a name in the console
    ROLE = "role"  # a role (or user group) to notify
    FILE = "file"  # a file: an attachment in chat, a path in the console
    POST = "post"  # a question's number written with its #: ``#12``


@dataclass(frozen=True, slots=True)
class Arg:
    """One typed argument of a command.

    ``option`` arguments are typed ``--name VALUE`` on the text platforms (a ``FLAG`` option
    is ``--name`` alone); the others are positional, in declaration order. On Discord every
    argument is an app-command option named :attr:`discord_name`: one declaration gives both.
    """

    name: str
    kind: Kind
    help: str = ""
    choices: tuple[str, ...] = ()
    default: str | int | bool | None = None
    required: bool = False
    option: bool = False
    repeat: bool = False  # an option that may be given more than once (``--tag a --tag b``)
    admin: bool = False  # only admins give it: a member's usage line leaves it out
    metavar: str = ""  # the placeholder in a text usage line (default: the name in capitals)
    discord: str = ""  # Discord's option name, when it differs from ``name``
    platforms: frozenset[Platform] = ALL
    example: str = ""  # a value that parses; the table test types it on every platform
    low: int | None = None  # Discord checks it: a number's least value
    high: int | None = None  # a number's greatest value; a text's greatest length

    @property
    def discord_name(self) -> str:
        """The app-command option that carries this argument on Discord."""
        return self.discord or self.name

    @property
    def placeholder(self) -> str:
        """How the value is shown in a usage line: its metavar, else its choices or name."""
        if self.metavar:
            return self.metavar
        if self.kind is Kind.CHOICE and self.choices:
            return "|".join(self.choices)
        return self.name.upper()


@dataclass(frozen=True, slots=True)
class Command:
    """A command, or a subcommand of one: what it is called, takes and does.

    A command with :attr:`subcommands` may still be used alone when :attr:`bare` is true
    (``/review`` and ``/review remind``). Discord cannot invoke a command that has
    subcommands, so a subcommand of a bare command is declared :attr:`discord_flat`: on
    Discord its arguments are options of the parent, and :attr:`discord_choice` names the
    parent's option whose value picks it (``/recap action:on``). The parent says what that
    option means (:attr:`discord_choice_help`) and which value is the bare command, when
    one is (:attr:`discord_bare`: ``/recap action:show``).
    """

    name: str
    help: str
    args: tuple[Arg, ...] = ()
    subcommands: tuple[Command, ...] = ()
    admin: bool = False
    admin_help: str = ""  # a second /help line, for admins: what the command does for them
    platforms: frozenset[Platform] = ALL
    bare: bool = True
    discord_flat: bool = False
    discord_choice: str = ""
    discord_choice_help: str = ""
    discord_bare: str = ""

    def on(self, platform: Platform) -> bool:
        return platform in self.platforms

    def args_on(self, platform: Platform, *, admin: bool = True) -> tuple[Arg, ...]:
        """The arguments this command takes on ``platform`` (a member's, without admin ones)."""
        return tuple(a for a in self.args if platform in a.platforms and (admin or not a.admin))

    def subcommand(self, name: str) -> Command | None:
        return next((s for s in self.subcommands if s.name == name.lower()), None)


_DIFFICULTY = ("easy", "medium", "hard")
#: ``--difficulty``: the filter ``quiz`` and ``schedule add`` both take.
_DIFFICULTY_FILTER = Arg(
    "difficulty",
    Kind.CHOICE,
    "Only questions of this difficulty",
    choices=_DIFFICULTY,
    option=True,
    example="easy",
)
# Shared by ``set`` and ``clear``: on Discord both are options of one flat command.
_EXAM_CHANNEL = Arg(
    "channel",
    Kind.FLAG,
    "For set or clear: this channel's exam only, not the workspace's",
    option=True,
)
_ACCOMMODATED = Arg(
    "member", Kind.MEMBER, "For set or clear: the member", required=True, example="bob"
)
_SCHEDULE_ID = Arg(
    "id", Kind.INT, "The schedule's number (see /schedule list)", required=True, example="1", low=1
)
_CHANNEL = Arg(
    "channel", Kind.WORD, "Another channel's schedule", option=True, metavar="NAME",
    platforms=TEXT, example="general",
)  # fmt: skip
_SCHEDULE_VERB_HELP = "manage a schedule"
#: Which open question a text command is about: its number (``12`` or ``#12``, shown on the
#: post); left out, the channel's newest open question.
_POST_ID = Arg(
    "id",
    Kind.INT,
    "The question's number (default: the newest open one)",
    metavar="#ID",
    example="#1",
)
#: The same where a bare number means something else (``hint 2`` is the second hint): ``#12``.
_POST_REF = Arg(
    "id",
    Kind.POST,
    "The question's number, with its # (default: the newest open one)",
    metavar="#ID",
    example="#1",
)

_SUGGESTION_ID = Arg(
    "id", Kind.INT, "The suggestion's number (see /suggestions)", required=True, example="1", low=1
)
_KINDS = ("multiple_choice", "flashcard", "practice", "open", "exercise", "typed")

COMMANDS: tuple[Command, ...] = (
    Command(
        "quiz",
        "post a question in this channel",
        (
            Arg("pack", Kind.WORD, "A question pack (default: any)", example="mini"),
            _DIFFICULTY_FILTER,
            Arg(
                "tag",
                Kind.WORD,
                "Only questions with this tag",
                option=True,
                repeat=True,
                example="autograd",
            ),
            Arg(
                "kinds",
                Kind.WORD,
                "Only these kinds: multiple_choice (mc), flashcard, practice, open, exercise",
                option=True,
                metavar="KIND[,KIND]",
                platforms=TEXT,
                example="multiple_choice",
            ),
            Arg(
                "kind",
                Kind.CHOICE,
                "Only these kinds: multiple_choice (mc), flashcard, practice, open, exercise",
                choices=_KINDS,
                metavar="KIND",
                platforms=DISCORD,  # one kind, from a list
                example="multiple_choice",
            ),
        ),
    ),
    Command(
        "leaderboard",
        "who is ahead",
        (
            Arg(
                "window",
                Kind.CHOICE,
                "Which points count (default: this week), or the longest current streaks",
                choices=("week", "month", "all", "streaks"),
                default="week",
                example="month",
            ),
            Arg("here", Kind.FLAG, "Only points from questions in this channel", example="here"),
        ),
    ),
    Command(
        "history",
        "this channel's last questions",
        (
            Arg(
                "count",
                Kind.INT,
                "How many (default 5, up to 20)",
                default=5,
                low=1,
                high=20,
                metavar="N",
                example="3",
            ),
        ),
    ),
    Command(
        "question",
        "a past question with its answer and solution",
        (
            Arg(
                "id",
                Kind.INT,
                "The question's number (#12 in its footer)",
                required=True,
                example="1",
                low=1,
            ),
        ),
    ),
    Command(
        "report",
        "tell the admins a question is wrong",
        (
            Arg(
                "id",
                Kind.INT,
                "The question's number (default: this channel's latest)",
                example="1",
                low=1,
            ),
            Arg(
                "reason",
                Kind.TEXT,
                "What is wrong with the question",
                required=True,
                example="the answer is B",
                high=MAX_REASON,
            ),
        ),
    ),
    Command(
        "stats",
        "points, accuracy and streak",
        (
            Arg("member", Kind.MEMBER, "Whose stats (default: yours)", example="bob"),
            Arg(
                "group",
                Kind.FLAG,
                "The group's mastery by tag and week, and who has cards due (admins)",
                example="group",
                admin=True,
            ),
        ),
    ),
    Command(
        "settings",
        "this workspace's timezone, quiz window and points",
        (
            Arg(
                "name",
                Kind.CHOICE,
                "The setting to see or change (leave empty to list them all), or history",
                discord="setting",
                metavar="NAME",
                choices=tuple(s.value for s in Setting),
                example="timezone",
            ),
            Arg(
                "value",
                Kind.WORD,
                "Its new value (admins): e.g. Europe/Berlin, 45m, 25",
                admin=True,
                example="Europe/Berlin",
            ),
        ),
        subcommands=(
            Command(
                "history",
                "who changed the settings, and when",
                discord_flat=True,
                discord_choice="setting",
            ),
        ),
        admin_help="timezone, quiz-window, points-easy|medium|hard, round-questions|seconds|"
        "pause|speed-bonus|starters; `settings history`",
    ),
    Command(
        "review",
        "your due cards, privately, one at a time (spaced repetition)",
        (
            Arg(
                "grade",
                Kind.WORD,
                "Answer the card shown",
                metavar="CHOICE|show|more",
                platforms=CONSOLE,
                example="more",
            ),
        ),
        discord_choice_help="export: your review cards as an Anki deck (.apkg), only to you",
        subcommands=(
            Command(
                "remind",
                "a DM on days when cards are due",
                (
                    Arg(
                        "at",
                        Kind.TIME,
                        "A daily DM at this local time (HH:MM) when cards are due, or off",
                        required=True,
                        metavar="HH:MM|off",
                        discord="remind",
                        example="08:00",
                    ),
                    Arg(
                        "timezone",
                        Kind.WORD,
                        "The reminder's IANA timezone (default: the server's)",
                        metavar="TZ",
                        example="Europe/Berlin",
                    ),
                ),
                discord_flat=True,
            ),
            Command(
                "export",
                "your review cards as an Anki deck (.apkg), sent only to you",
                discord_flat=True,
                discord_choice="action",
            ),
        ),
    ),
    Command(
        "accommodation",
        "accommodations: a member's extra time in rounds (private: admins and the member)",
        discord_choice_help="show (default), set (admins), or clear (admins)",
        discord_bare="show",
        subcommands=(
            Command(
                "set",
                "give a member extra time in rounds (and one wrong choice removed)",
                (
                    _ACCOMMODATED,
                    Arg(
                        "time",
                        Kind.WORD,
                        "For set: their time factor, over 1 and up to 4 (e.g. 1.5)",
                        option=True,
                        metavar="FACTOR",
                        example="1.5",
                    ),
                    Arg(
                        "fewer-choices",
                        Kind.FLAG,
                        "For set: one wrong choice removed for them",
                        option=True,
                        discord="fewer_choices",
                    ),
                ),
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
            Command(
                "clear",
                "take a member's accommodation away",
                (_ACCOMMODATED,),
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
        ),
    ),
    Command(
        "exam",
        "the exam date the group works toward: the countdown and your readiness per tag",
        discord_choice_help="show (default), set (admins: date, tags), clear (admins), or prep",
        discord_bare="show",
        subcommands=(
            Command(
                "set",
                "set the exam date (YYYY-MM-DD) and the tags it covers, for everyone or here",
                (
                    Arg(
                        "date",
                        Kind.WORD,
                        "For set: the exam day, YYYY-MM-DD",
                        required=True,
                        metavar="YYYY-MM-DD",
                        example="2027-01-15",
                    ),
                    Arg(
                        "tag",
                        Kind.WORD,
                        "For set: a tag the exam covers (none: the whole course)",
                        option=True,
                        repeat=True,
                        example="autograd",
                    ),
                    _EXAM_CHANNEL,
                ),
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
            Command(
                "clear",
                "clear the exam date (with --channel: this channel's)",
                (_EXAM_CHANNEL,),
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
            Command(
                "prep",
                "your reviews aimed at the exam day: cards predicted to slip are brought forward",
                (
                    Arg(
                        "switch",
                        Kind.CHOICE,
                        "For prep: on or off",
                        choices=("on", "off"),
                        required=True,
                        example="on",
                    ),
                ),
                discord_flat=True,
                discord_choice="action",
            ),
        ),
    ),
    Command(
        "recap",
        "this channel's weekly recap: board, streaks, most missed (admins set it)",
        discord_choice_help="show (default), on, off, or now (post this week's recap here)",
        discord_bare="show",
        subcommands=(
            Command(
                "on",
                "post the recap every week at this local day and time",
                (
                    Arg(
                        "day",
                        Kind.WORD,
                        "For on: a day and a local time, e.g. fri 18:00",  # Discord's when:
                        required=True,
                        discord="when",
                        example="fri",
                    ),
                    Arg(
                        "at",
                        Kind.TIME,
                        "A local time",
                        required=True,
                        metavar="HH:MM",
                        discord="when",
                        example="18:00",
                    ),
                ),
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
            Command(
                "off",
                "stop the weekly recap here",
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
            Command(
                "now",
                "post this week's recap here now",
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
        ),
    ),
    Command(
        "write",
        "write a question for the group (checked like a pack; a member's waits for an admin)",
        (
            Arg(
                "difficulty",
                Kind.CHOICE,
                "How hard it is (default: medium)",
                choices=_DIFFICULTY,
                default="medium",
                option=True,
                platforms=CONSOLE,
                example="easy",
            ),
            Arg(
                "tag",
                Kind.WORD,
                "A tag",
                option=True,
                repeat=True,
                platforms=CONSOLE,
                example="autograd",
            ),
            Arg(
                "question",
                Kind.TEXT,
                "PROMPT | *RIGHT | WRONG ... [| why: TEXT]",
                required=True,
                metavar="PROMPT | *RIGHT | WRONG ... [| why: TEXT] (or PROMPT | = ANSWER)",
                platforms=CONSOLE,
                example="2+2? | *4 | 5",
            ),
            Arg(
                "difficulty",
                Kind.CHOICE,
                "How hard it is (default: medium)",
                choices=_DIFFICULTY,
                default="medium",
                platforms=SLACK | DISCORD,
                example="easy",
            ),
            Arg(
                "tags",
                Kind.WORD,
                "Tags, separated by commas (e.g. autograd, leaf)",
                metavar="TAG,TAG",
                platforms=SLACK | DISCORD,
                example="autograd,leaf",
            ),
        ),
    ),
    Command(
        "run",
        "run a Python snippet against torch (CPU) in a sandbox",
        (
            Arg(
                "code",
                Kind.TEXT,
                "The code (or a fenced block after it)",
                metavar="CODE",
                platforms=TEXT,
                example="print(1)",
            ),
        ),
    ),
    Command(
        "try",
        "run a question's snippet, or a choice's code, after you answered (or it closed)",
        (
            replace(_POST_ID, help="The question's number (default: the newest here)"),
            Arg("choice", Kind.WORD, "A choice's letter (default: the snippet)", example="A"),
        ),
        platforms=CONSOLE,
    ),
    Command(
        "solve",
        "solve a coding exercise: your code runs against its checks in the sandbox",
        (
            Arg(
                "id",
                Kind.WORD,
                "The exercise's post number (default: the newest open one), or an exercise's "
                "id to post it here",
                metavar="#ID|EXERCISE",
                example="#1",
            ),
            Arg(
                "file",
                Kind.WORD,
                "Submit this file instead of typing the code",
                option=True,
                metavar="PATH",
                platforms=CONSOLE,
                example="solution.py",
            ),
        ),
    ),
    Command(
        "solutions",
        "an exercise's reference and members' shortest solutions, once solved or closed",
        (replace(_POST_ID, help="The exercise's number (default: the newest open one)"),),
    ),
    Command(
        "graph",
        "run a snippet and draw the autograd graph it built",
        (
            Arg(
                "of",
                Kind.WORD,
                "The tensor(s) to draw, e.g. loss or a,b (default: the last one)",
                option=True,
                metavar="NAME[,NAME]",
                example="y",
            ),
            Arg(
                "inputs",
                Kind.FLAG,
                "Draw every result the snippet assigned, side by side (one function, two inputs)",
                option=True,
            ),
            Arg("code", Kind.TEXT, "The code", metavar="CODE", platforms=TEXT, example="y = 1"),
        ),
    ),
    Command(
        "pack",
        "the question packs",
        bare=False,
        subcommands=(
            Command("list", "the question packs, and which are on in this channel"),
            Command(
                "enable",
                "turn a pack on or off in this channel only",
                (
                    Arg(
                        "name", Kind.WORD, "The pack to turn on here", required=True, example="mini"
                    ),
                ),
                admin=True,
            ),
            Command(
                "disable",
                "turn a pack on or off in this channel only",
                (
                    Arg(
                        "name",
                        Kind.WORD,
                        "The pack to turn off here",
                        required=True,
                        example="mini",
                    ),
                ),
                admin=True,
            ),
            Command(
                "upload",
                "check a question pack file (.yaml) with the linter",
                (
                    Arg(
                        "file",
                        Kind.FILE,
                        "A question pack: a .yaml file of up to 1 MiB",
                        required=True,
                        platforms=DISCORD | CONSOLE,
                        example="pack.yaml",
                    ),
                    Arg(
                        "force",
                        Kind.FLAG,
                        "Install even if some code items disagree",
                        option=True,
                        admin=True,
                        platforms=DISCORD | CONSOLE,
                    ),
                ),
                admin_help="a valid pack file is installed: a new pack, or an update",
            ),
        ),
    ),
    Command(
        "schedule",
        "daily questions (admins change them)",
        bare=False,
        subcommands=(
            Command(
                "add",
                'a daily question (or `--cron "M H DOM MON DOW"` instead of TIME and DAYS)',
                (
                    Arg(
                        "time",
                        Kind.TIME,
                        "Local time to post, HH:MM (e.g. 09:00)",
                        metavar="TIME",
                        example="09:00",
                    ),
                    Arg(
                        "timezone",
                        Kind.WORD,
                        "IANA timezone, e.g. Europe/Berlin (default: the server's)",
                        metavar="TZ",
                        example="Europe/Berlin",
                    ),
                    Arg(
                        "days",
                        Kind.WORD,
                        "daily, weekdays, weekends or e.g. mon,wed,fri (default: daily)",
                        example="weekdays",
                    ),
                    Arg(
                        "pack",
                        Kind.WORD,
                        "Only questions from this pack",
                        option=True,
                        metavar="P",
                        example="mini",
                    ),
                    Arg(
                        "tag",
                        Kind.WORD,
                        "Only questions with these tags (separated by spaces or commas)",
                        option=True,
                        repeat=True,
                        metavar="T",
                        discord="tags",
                        example="autograd",
                    ),
                    _DIFFICULTY_FILTER,
                    Arg(
                        "window",
                        Kind.DURATION,
                        "How long answers stay open, e.g. 90m or 2h (default: until the next one)",
                        option=True,
                        metavar="90m",
                        example="90m",
                    ),
                    Arg(
                        "mention",
                        Kind.ROLE,
                        "A role to notify with each question",
                        option=True,
                        metavar="ROLE",
                    ),
                    Arg(
                        "cron",
                        Kind.TEXT,
                        "A cron expression instead of time and days, e.g. 0 9 * * 1-5",
                        option=True,
                        metavar="EXPR",
                    ),
                    Arg(
                        "kinds",
                        Kind.WORD,
                        "Kinds to post, e.g. open (default: flashcard, multiple_choice, practice)",
                        option=True,
                        repeat=True,
                        metavar="KINDS",
                    ),
                    Arg(
                        "round",
                        Kind.WORD,
                        "A live round instead of one question: QUESTIONSxSECONDS, e.g. 10x20s",
                        option=True,
                        metavar="10x20s",
                        example="5x20s",
                    ),
                ),
                admin=True,
            ),
            Command("list", "this channel's daily questions"),
            *(
                Command(verb, _SCHEDULE_VERB_HELP, (_SCHEDULE_ID, _CHANNEL), admin=True)
                for verb in ("remove", "pause", "resume", "skip", "now")
            ),
            Command(
                "preview",
                "when a schedule posts next",
                (
                    _SCHEDULE_ID,
                    Arg(
                        "count",
                        Kind.INT,
                        "How many times to show",
                        default=5,
                        metavar="N",
                        example="3",
                        low=1,
                        high=25,
                    ),
                    _CHANNEL,
                ),
            ),
        ),
    ),
    Command(
        "reports",
        "open reports and flags on questions; close them once fixed",
        admin=True,
        subcommands=(
            Command(
                "resolve",
                "close a question's open reports once it is fixed",
                (
                    Arg(
                        "item",
                        Kind.WORD,
                        "Close the open reports on this item id (once it is fixed)",
                        required=True,
                        metavar="ITEM_ID",
                        discord="resolve",
                        example="m-1",
                    ),
                ),
                admin=True,
                discord_flat=True,
            ),
            Command(
                "dismiss",
                "dismiss a question's flags when its figures mislead (the question is right)",
                (
                    Arg(
                        "item",
                        Kind.WORD,
                        "Dismiss the flags on this item id (its figures mislead)",
                        required=True,
                        metavar="ITEM_ID",
                        discord="dismiss",
                        example="m-1",
                    ),
                ),
                admin=True,
                discord_flat=True,
            ),
        ),
    ),
    Command(
        "suggestions",
        "the questions members wrote, waiting for an admin",
        admin=True,
        discord_choice_help="list (default), approve, or reject (give the reason)",
        discord_bare="list",
        subcommands=(
            Command(
                "approve",
                "add a suggested question to the community pack, credited to its author",
                (_SUGGESTION_ID,),
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
            Command(
                "reject",
                "turn a suggested question down; its author is told why",
                (
                    _SUGGESTION_ID,
                    Arg(
                        "reason",
                        Kind.TEXT,
                        "Why: the author is told",
                        required=True,
                        example="the answer is ambiguous",
                        high=MAX_REASON,
                    ),
                ),
                admin=True,
                discord_flat=True,
                discord_choice="action",
            ),
        ),
    ),
    Command(
        "rewards",
        "roles given for points, a streak or reviews",
        bare=False,
        subcommands=(
            Command("list", "the role rewards set here"),
            Command(
                "add",
                "give a role to members who reach a threshold; it is taken back below it",
                (
                    Arg(
                        "metric",
                        Kind.CHOICE,
                        "What counts: all-time points, the current streak (days), or reviews",
                        choices=tuple(m.value for m in Metric),
                        required=True,
                        example="points",
                    ),
                    Arg(
                        "threshold",
                        Kind.INT,
                        "How many are needed",
                        required=True,
                        metavar="N",
                        example="100",
                        low=1,
                        high=MAX_THRESHOLD,
                    ),
                    Arg(
                        "role",
                        Kind.ROLE,
                        "The role (Slack: the user group) to give",
                        required=True,
                        example="regulars",
                    ),
                ),
                admin=True,
            ),
            Command(
                "remove",
                "remove a reward; its role is taken back from those who hold it",
                (
                    Arg(
                        "id",
                        Kind.INT,
                        "The reward's number (see /rewards list)",
                        required=True,
                        example="1",
                        low=1,
                    ),
                ),
                admin=True,
            ),
            Command(
                "preview", "who would gain or lose which role now (changes nothing)", admin=True
            ),
        ),
    ),
    Command(
        "round",
        "a live round: timed questions in a row, then a board",
        bare=False,
        subcommands=(
            Command(
                "start",
                "start a live round here: questions one at a time, faster right answers score more",
                (
                    Arg("pack", Kind.WORD, "A question pack (default: any)", example="mini"),
                    Arg(
                        "questions",
                        Kind.INT,
                        "How many questions (default 10, up to 50)",
                        option=True,
                        metavar="N",
                        example="5",
                        low=1,
                        high=MAX_QUESTIONS,
                    ),
                    Arg(
                        "seconds",
                        Kind.INT,
                        "Seconds to answer each (default 20, 5 to 300)",
                        option=True,
                        metavar="S",
                        example="15",
                        low=MIN_SECONDS,
                        high=MAX_SECONDS,
                    ),
                    _DIFFICULTY_FILTER,
                    Arg(
                        "tag",
                        Kind.WORD,
                        "Only questions with this tag",
                        option=True,
                        example="autograd",
                    ),
                    Arg(
                        "teams",
                        Kind.WORD,
                        "Play in teams: how many (2 to 8), or one role (Slack: user group) per "
                        "team, e.g. @red,@blue; a team scores its players' mean",
                        option=True,
                        metavar="N|ROLE,ROLE",
                        platforms=TEXT,
                        example="4",
                    ),
                    Arg(
                        "teams",
                        Kind.INT,
                        "Play in teams: how many (2 to 8); a team scores its players' mean",
                        option=True,
                        metavar="N",
                        platforms=DISCORD,
                        example="4",
                        low=MIN_TEAMS,
                        high=MAX_TEAMS,
                    ),
                    Arg(
                        "talk",
                        Kind.INT,
                        "Team rounds: seconds of team talk before each question (5 to 120)",
                        option=True,
                        metavar="S",
                        example="20",
                        low=MIN_TALK,
                        high=MAX_TALK,
                    ),
                    Arg(
                        "scoring",
                        Kind.CHOICE,
                        "speed: faster right answers score more; accuracy: speed only breaks ties",
                        choices=tuple(s.value for s in Scoring),
                        option=True,
                        example="accuracy",
                    ),
                    Arg(
                        "team-roles",
                        Kind.TEXT,
                        "Teams from roles instead: mention one role per team, e.g. @red @blue",
                        option=True,
                        discord="team_roles",
                        platforms=DISCORD,
                        high=400,
                        example="@red @blue",
                    ),
                ),
            ),
            Command("stop", "end the round here early, with the board so far (starter or admin)"),
            Command(
                "skip",
                "vote to skip the open question: more than half of the last question's players "
                "skip it (it scores nothing)",
            ),
        ),
    ),
    Command("help", "the commands you can use here"),
    # The console's own: it plays every member, channel and clock of a chat.
    Command(
        "as",
        "act as another member",
        (
            Arg("name", Kind.MEMBER, "Who", required=True, metavar="NAME", example="me"),
            Arg("admin", Kind.FLAG, "as an admin", option=True),
        ),
        platforms=CONSOLE,
    ),
    Command(
        "roles",
        "a member's roles (the console keeps them); an admin gives or takes one",
        (
            Arg("name", Kind.MEMBER, "Whose (default: yours)", metavar="NAME", example="me"),
            Arg("give", Kind.WORD, "Give them this role (admins)", option=True, metavar="ROLE"),
            Arg("take", Kind.WORD, "Take this role back (admins)", option=True, metavar="ROLE"),
        ),
        platforms=CONSOLE,
    ),
    Command(
        "channel",
        "switch channel",
        (Arg("name", Kind.WORD, "Which", required=True, metavar="NAME", example="general"),),
        platforms=CONSOLE,
    ),
    Command(
        "answer",
        "answer an open question: a letter, a grade or the answer typed (the newest, or #ID)",
        (
            _POST_ID,
            Arg(
                "choice",
                Kind.TEXT,
                "Your answer: a letter, a grade, or the answer typed",
                required=True,
                metavar="ANSWER",
                discord="answer",
                example="A",
                high=MAX_TYPED,
            ),
        ),
    ),
    Command("show", "see a flashcard's answer privately", (_POST_ID,), platforms=TEXT),
    Command(
        "hint",
        "a hint for an open practice problem (the next one, or hint N)",
        (_POST_REF, Arg("n", Kind.INT, "Which hint", example="1")),
        platforms=TEXT,
    ),
    Command(
        "reveal",
        "close a question and show the answer (the asker or an admin)",
        (_POST_ID,),
        platforms=TEXT,
    ),
    Command(
        "clock",
        "move the simulated clock (what falls due on the way posts in order)",
        platforms=CONSOLE,
        subcommands=(
            Command(
                "advance",
                "move the clock on",
                (
                    Arg(
                        "by",
                        Kind.DURATION,
                        "How far",
                        required=True,
                        metavar="DURATION",
                        example="1h",
                    ),
                ),
                platforms=CONSOLE,
            ),
            Command(
                "set",
                "set the clock",
                (
                    Arg(
                        "to",
                        Kind.WORD,
                        "When",
                        required=True,
                        metavar="ISO8601",
                        example="2026-03-05T09:00:00Z",
                    ),
                ),
                platforms=CONSOLE,
            ),
        ),
    ),
    Command(
        "dms",
        "whether you take direct messages (review reminders)",
        (
            Arg(
                "state",
                Kind.CHOICE,
                "open or closed",
                choices=("open", "closed"),
                required=True,
                example="open",
            ),
        ),
        platforms=CONSOLE,
    ),
    Command("quit", "leave", platforms=CONSOLE),
)


def command(name: str) -> Command:
    """The command called ``name`` (a KeyError names a command the table lacks)."""
    for cmd in COMMANDS:
        if cmd.name == name:
            return cmd
    raise KeyError(name)


def _found(path: Sequence[str]) -> Command:
    """The command or subcommand at ``path`` (a KeyError names one the table lacks)."""
    cmd = command(path[0])
    for name in path[1:]:
        sub = cmd.subcommand(name)
        if sub is None:
            raise KeyError(" ".join(path))
        cmd = sub
    return cmd


def _grouped(args: Sequence[Arg]) -> list[list[Arg]]:
    """``args`` by the Discord option that carries them (``recap when:`` carries two)."""
    grouped: dict[str, list[Arg]] = {}
    for arg in args:
        grouped.setdefault(arg.discord_name, []).append(arg)
    return list(grouped.values())


def prefix(platform: Platform) -> str:
    """What a command starts with on ``platform``: ``/`` or Slack's ``/study ``."""
    return _PREFIX[platform]


def _text_arg(arg: Arg) -> str:
    if arg.kind is Kind.FLAG:
        shown = f"--{arg.name}" if arg.option else arg.name
    elif arg.option:
        shown = f"--{arg.name} {arg.placeholder}"
    else:
        shown = arg.placeholder
    return shown if arg.required else f"[{shown}]"


def _discord_args(args: tuple[Arg, ...]) -> list[str]:
    """``name:VALUE`` per Discord option; arguments sharing one option share its value."""
    shown = []
    for parts in _grouped(args):
        value = " ".join(p.placeholder for p in parts if p.kind is not Kind.FLAG) or "True"
        text = f"{parts[0].discord_name}:{value}"
        shown.append(text if any(p.required for p in parts) else f"[{text}]")
    return shown


def usage(platform: Platform, *path: str, admin: bool = True, brief: bool = False) -> str:
    """The usage line of ``path`` (``"quiz"``, ``"schedule", "add"``) in ``platform``'s style.

    Text style on the console and Slack (``/quiz [PACK] [--difficulty easy|medium|hard]``),
    option style on Discord (``/quiz [pack:PACK] [difficulty:easy|medium|hard]``). Without
    ``admin`` the arguments only admins give are left out. ``brief``: a text command with more
    than two options shows them as one ``[options]`` (an error line stays one line).
    """
    cmd = command(path[0])
    words = [cmd.name]
    for name in path[1:]:
        sub = cmd.subcommand(name)
        if sub is None:
            raise KeyError(" ".join(path))
        parent, cmd = cmd, sub
        if platform == "discord" and sub.discord_flat:
            args = [f"{sub.discord_choice}:{sub.name}"] if sub.discord_choice else []
            args += _discord_args(sub.args_on(platform, admin=admin))
            return prefix(platform) + " ".join([parent.name, *args])
        words.append(sub.name)
    args_on = cmd.args_on(platform, admin=admin)
    if platform == "discord":
        return prefix(platform) + " ".join(words + _discord_args(args_on))
    options = [a for a in args_on if a.option]
    if brief and len(options) > 2:
        shown = [_text_arg(a) for a in args_on if not a.option] + ["[options]"]
    else:
        shown = [_text_arg(a) for a in args_on]
    return prefix(platform) + " ".join(words + shown)


@dataclass(frozen=True, slots=True)
class HelpLine:
    """One line of /help: the usage shown, what it does, and whether only admins see it."""

    usage: str
    text: str
    admin: bool


def _entries(platform: Platform) -> Iterator[tuple[tuple[str, ...], str, bool, bool]]:
    """(path, help, admin, with admin arguments) for everything ``platform`` can do."""
    for cmd in COMMANDS:
        if not cmd.on(platform):
            continue
        if cmd.bare:
            yield (cmd.name,), cmd.help, cmd.admin, cmd.admin
            if cmd.admin_help:
                yield (cmd.name,), cmd.admin_help, True, True
        for sub in cmd.subcommands:
            if sub.on(platform):
                path = (cmd.name, sub.name)
                yield path, sub.help, sub.admin or cmd.admin, sub.admin or cmd.admin
                if sub.admin_help:
                    yield path, sub.admin_help, True, True


def help_lines(platform: Platform) -> list[HelpLine]:
    """/help for ``platform``, generated from the table: members' lines, then admins'.

    Subcommands side by side with the same arguments and help are one line
    (``schedule remove|pause|resume|skip|now ID``), so /help stays short.
    """
    merged: list[tuple[tuple[str, str, bool], list[str]]] = []  # (template, help, admin), names
    for path, text, admin, with_admin in _entries(platform):
        line = usage(platform, *path, admin=with_admin)
        if len(path) == 1:
            merged.append(((line, text, admin), []))
            continue
        words = f"{path[0]} {path[1]}"
        key = (line.replace(words, f"{path[0]} \0", 1), text, admin)
        if merged and merged[-1][0] == key and merged[-1][1]:
            merged[-1][1].append(path[1])
        else:
            merged.append((key, [path[1]]))
    lines = [
        HelpLine(template.replace("\0", "|".join(names)) if names else template, text, admin)
        for (template, text, admin), names in merged
    ]
    return [x for x in lines if not x.admin] + [x for x in lines if x.admin]


def help_rows(platform: Platform) -> list[tuple[str, str, bool]]:
    """:func:`help_lines` as the plain rows the core's ``help_message`` renders."""
    return [(line.usage, line.text, line.admin) for line in help_lines(platform)]


def synopsis(platform: Platform, name: str) -> str:
    """Every form of a command in one line: ``/pack list | enable NAME | disable NAME``."""
    cmd = command(name)
    head = prefix(platform) + cmd.name
    forms = [usage(platform, name)] if cmd.bare else []
    for sub in cmd.subcommands:
        if sub.on(platform):
            form = usage(platform, name, sub.name)
            forms.append(form if not forms else form.removeprefix(head).strip())
    return " | ".join(forms)


# --- text parsing ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Values:
    """The words of one typed command, sorted by the table into its arguments."""

    given: Mapping[str, tuple[str, ...]]

    def one(self, name: str) -> str | None:
        """The argument's value (the last one given), or None when it was left out."""
        values = self.given.get(name, ())
        return values[-1] if values else None

    def all(self, name: str) -> tuple[str, ...]:
        """Every value of a repeatable option, in the order typed."""
        return self.given.get(name, ())

    def flag(self, name: str) -> bool:
        return name in self.given


def parse(platform: Platform, words: Sequence[str], *path: str) -> Values:
    """Sort typed ``words`` (after the command's name) into the arguments the table declares.

    Options (``--name VALUE``, ``--name=VALUE``, ``--flag``) may come anywhere; positional
    words fill the positional arguments in order, a ``TEXT`` one taking the rest of the line;
    a bare flag (``here``) is recognised by its name. Raises the one :class:`UsageError`,
    carrying the usage line generated for ``platform``.
    """
    cmd = _found(path)
    line = usage(platform, *path)
    args = cmd.args_on(platform)
    options = {f"--{a.name}": a for a in args if a.option}
    bare_flags = {a.name: a for a in args if a.kind is Kind.FLAG and not a.option}
    positional = [a for a in args if not a.option and a.kind is not Kind.FLAG]
    given: dict[str, tuple[str, ...]] = {}
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word.startswith("--"):
            _take_option(word, rest, options, given, line)
        elif word.lower() in bare_flags and not (positional and positional[0].kind is Kind.TEXT):
            given[word.lower()] = ("yes",)
        elif not positional:
            raise UsageError(line, reason="too many words")
        else:
            while len(positional) > 1 and not positional[0].required:
                # `/answer 3`: the one word is the required answer, not an optional #ID
                starved = (
                    not rest
                    and not word.startswith("#")
                    and any(a.required for a in positional[1:])
                )
                if _fits(positional[0], word) and not starved:
                    break
                positional.pop(0)  # `/report wrong answer`: no ID, the words are the reason
            arg = positional.pop(0)
            if arg.kind is Kind.TEXT:
                given[arg.name] = (" ".join([word, *rest]),)
                rest = []
            else:
                given[arg.name] = (_checked(arg, word, line),)
    missing = [a for a in positional if a.required]
    if missing:
        raise UsageError(line, reason=f"{missing[0].placeholder} is missing")
    return Values(given)


def _take_option(
    word: str,
    rest: list[str],
    options: Mapping[str, Arg],
    given: dict[str, tuple[str, ...]],
    line: str,
) -> None:
    """``--name VALUE``, ``--name=VALUE`` or ``--flag`` into ``given`` (the value off ``rest``)."""
    flag, eq, inline = word.partition("=")
    arg = options.get(flag.lower())
    if arg is None:
        raise UsageError(line, reason=f"unknown option {flag}")
    if arg.name in given and not arg.repeat:
        raise UsageError(line, reason=f"{flag} given twice")
    if arg.kind is Kind.FLAG:
        given[arg.name] = ("yes",)
        return
    if not eq:
        if not rest or rest[0].startswith("--"):
            raise UsageError(line, reason=f"{flag} needs a value")
        inline = rest.pop(0)
    given[arg.name] = (*given.get(arg.name, ()), inline)


def _fits(arg: Arg, word: str) -> bool:
    """Whether ``word`` can be this argument's value (an optional one is passed over if not)."""
    if arg.kind is Kind.INT:
        return word.lstrip("#").isdigit()
    if arg.kind is Kind.POST:
        return word.startswith("#") and word[1:].isdigit()
    if arg.kind is Kind.CHOICE and arg.choices:
        return word.lower() in arg.choices
    return True


def _checked(arg: Arg, word: str, line: str) -> str:
    """One positional word, checked against its kind (choices are matched ignoring case)."""
    if arg.kind is Kind.CHOICE and arg.choices:
        if word.lower() not in arg.choices:
            raise UsageError(line, reason=f"`{word}` is not a {arg.name}")
        return word.lower()
    if arg.kind in (Kind.INT, Kind.POST):
        digits = word.lstrip("#")
        if not digits.isdigit() or len(digits) > 18:
            raise UsageError(line, reason=f"`{word}` is not a number")
        return digits
    return word


@dataclass(frozen=True, slots=True)
class QuizRequest:
    """``/quiz [PACK] [--difficulty D] [--tag T]...``: the same three filters on every platform."""

    pack: str | None = None
    difficulty: str | None = None
    tags: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()

    @classmethod
    def parse(cls, platform: Platform, words: Sequence[str]) -> QuizRequest:
        return cls.from_values(parse(platform, words, "quiz"))

    @classmethod
    def from_values(cls, values: Values) -> QuizRequest:
        """The request from the table's values, however they were typed or picked."""
        difficulty = values.one("difficulty")
        kinds = values.one("kinds")
        return cls(
            pack=values.one("pack"),
            difficulty=difficulty.lower() if difficulty else None,
            tags=values.all("tag"),
            kinds=tuple(k for k in (kinds or "").split(",") if k.strip()),
        )


@dataclass(frozen=True, slots=True)
class PostRequest:
    """``answer|show|hint|reveal [#ID] ...``: which open question (None: the newest open one in
    the channel), the answer typed and the hint asked for."""

    id: int | None = None
    choice: str = ""
    hint: int | None = None

    @classmethod
    def parse(cls, platform: Platform, words: Sequence[str], name: str) -> PostRequest:
        return cls.from_values(parse(platform, words, name))

    @classmethod
    def from_values(cls, values: Values) -> PostRequest:
        """The request from the table's values (the numbers were checked as they were read)."""
        typed, n = values.one("id"), values.one("n")
        return cls(
            id=int(typed) if typed is not None else None,
            choice=values.one("choice") or "",
            hint=int(n) if n is not None else None,
        )


@dataclass(frozen=True, slots=True)
class SolveRequest:
    """``solve [#ID | EXERCISE] [--file PATH]``: a posted exercise by its number (None: the
    newest open one), or an exercise's id in its pack, to post here and solve."""

    post: int | None = None
    exercise: str | None = None
    file: str | None = None

    @classmethod
    def parse(cls, platform: Platform, words: Sequence[str]) -> SolveRequest:
        values = parse(platform, words, "solve")
        typed, file = values.one("id"), values.one("file")
        if typed is None:
            return cls(file=file)
        number = typed.removeprefix("#")
        if number.isdigit():
            return cls(post=int(number), file=file)
        if typed.startswith("#") or not _SLUG.match(typed):
            raise UsageError(
                usage(platform, "solve"), reason=f"`{typed[:40]}` is no #number or exercise id"
            )
        return cls(exercise=typed.lower(), file=file)


_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True, slots=True)
class LeaderboardRequest:
    """``/leaderboard [week|month|all|streaks] [here]``: which points count, and where; or
    the longest current streaks (``streaks``, the workspace's)."""

    window: str = "week"
    here: bool = False

    @classmethod
    def parse(cls, platform: Platform, words: Sequence[str]) -> LeaderboardRequest:
        return cls.from_values(parse(platform, words, "leaderboard"))

    @classmethod
    def from_values(cls, values: Values) -> LeaderboardRequest:
        return cls(window=values.one("window") or "week", here=values.flag("here"))


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """``/history [N]``: how many of this channel's last questions."""

    count: int = 5

    @classmethod
    def parse(cls, platform: Platform, words: Sequence[str]) -> HistoryRequest:
        count = parse(platform, words, "history").one("count")
        return cls(int(count) if count is not None else 5)


@dataclass(frozen=True, slots=True)
class QuestionRequest:
    """``/question ID``: one past question, by the number in its footer."""

    id: int

    @classmethod
    def parse(cls, platform: Platform, words: Sequence[str]) -> QuestionRequest:
        typed = parse(platform, words, "question").one("id")
        assert typed is not None  # required: parse() raised otherwise
        return cls(int(typed))


@dataclass(frozen=True, slots=True)
class ReportRequest:
    """``/report [ID] REASON``: which question (None: the channel's latest), and why."""

    id: int | None
    reason: str

    @classmethod
    def parse(cls, platform: Platform, words: Sequence[str]) -> ReportRequest:
        values = parse(platform, words, "report")
        typed = values.one("id")
        return cls(int(typed) if typed is not None else None, values.one("reason") or "")


Request = (
    QuizRequest
    | LeaderboardRequest
    | HistoryRequest
    | QuestionRequest
    | ReportRequest
    | PostRequest
    | RecapRequest
    | SettingsRequest
    | RemindRequest
    | RoundRequest
    | SuggestionsRequest
    | RewardsRequest
    | SolveRequest
)
"""A typed request parsed from the table's text grammar."""


# --- requests the services take (bot.core.requests) -------------------------------------------


def recap_request(platform: Platform, words: Sequence[str]) -> RecapRequest:
    """``recap [on DAY HH:MM | off | now]`` into its typed request; a wrong day or time is
    refused with the form expected (:func:`bot.core.recap.parse_when`)."""
    verb = words[0].lower() if words else ""
    if verb in ("", "status"):
        if len(words) > 1:
            raise UsageError(synopsis(platform, "recap"), reason="too many words")
        return RecapShow()
    sub = command("recap").subcommand(verb)
    if sub is None:
        raise UsageError(synopsis(platform, "recap"), reason=f"`{words[0]}` is not a recap action")
    if verb == "on":
        weekday, at = parse_when(list(words[1:]))
        return RecapOn(weekday, at)
    parse(platform, words[1:], "recap", verb)  # off and now take nothing more
    return RecapOff() if verb == "off" else RecapNow()


def settings_request(platform: Platform, words: Sequence[str]) -> SettingsRequest:
    """``settings [NAME [VALUE]]`` or ``settings history`` into its typed request. A name that
    is no setting is refused with the list of settings (:meth:`Setting.named`); the value is
    the rest of the line, checked by the setting's own rule in the service."""
    if not words:
        return SettingShow()
    if len(words) == 1 and words[0].lower() == "history":
        return SettingsHistory()
    setting = Setting.named(words[0])
    if len(words) == 1:
        return SettingShow(setting)
    return SettingChange(setting, " ".join(words[1:]))


def remind_request(platform: Platform, words: Sequence[str]) -> RemindRequest:
    """``review remind [HH:MM [TZ] | off]`` into its typed request."""
    if not words:
        return RemindShow()
    if len(words) == 1 and words[0].lower() == "off":
        return RemindOff()
    values = parse(platform, words, "review", "remind")
    at = values.one("at") or ""
    match = _CLOCK_TIME.match(at)
    if match is None:
        line = usage(platform, "review", "remind")
        raise UsageError(line, reason=f"`{at}` is not a time of day (HH:MM) or off")
    return Remind(time(int(match[1]), int(match[2])), values.one("timezone"))


_CLOCK_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def parse_subcommand(platform: Platform, words: Sequence[str], name: str) -> tuple[str, Values]:
    """``NAME VERB ARGS...`` on a text platform: which subcommand (``""``: the command alone,
    where the table allows it) and its arguments, sorted by the table. An unknown verb is the
    one usage error, with every form of the command."""
    cmd = command(name)
    verb = words[0].lower() if words else ""
    if not verb and cmd.bare:
        return "", parse(platform, (), name)
    sub = cmd.subcommand(verb) if verb else None
    if sub is None or not sub.on(platform):
        reason = f"`{words[0]}` is not a {name} action" if words else f"say what to do with {name}"
        raise UsageError(synopsis(platform, name), reason=reason)
    return sub.name, parse(platform, words[1:], name, sub.name)


def leading_options(platform: Platform, text: str, *path: str) -> tuple[Values, str]:
    """The table's ``--options`` at the start of ``text``, and the rest exactly as typed.

    For commands whose last argument is code or a written question (``graph``, ``write``):
    splitting the whole line into words would lose its spacing, so only the options in front
    are taken word by word; the rest (``TEXT``) is returned untouched.
    """
    cmd = _found(path)
    line = usage(platform, *path)
    options = {f"--{a.name}": a for a in cmd.args_on(platform) if a.option}
    given: dict[str, tuple[str, ...]] = {}
    rest = text.lstrip()
    while rest.startswith("--"):
        word, _, after = rest.partition(" ")
        words = after.lstrip().split(" ", 1) if after.strip() else []
        flag = word.partition("=")[0].lower()
        takes_value = flag in options and options[flag].kind is not Kind.FLAG and "=" not in word
        _take_option(word, words[:1] if takes_value else [], options, given, line)
        rest = (words[1] if len(words) > 1 else "") if takes_value else after
        rest = rest.lstrip()
    return Values(given), rest


@dataclass(frozen=True, slots=True)
class DiscordOption:
    """One option of a Discord app command, as the table declares it.

    Discord's adapter registers exactly these (:mod:`bot.adapters.discord.options`), so an
    option is declared once, here, with its text-platform twin: the same name, help, choices
    and limits.
    """

    name: str
    kind: Kind
    help: str
    choices: tuple[str, ...] = ()
    default: str | int | bool | None = None
    required: bool = False
    low: int | None = None
    high: int | None = None


def _option_of(args: list[Arg], *, required: bool) -> DiscordOption:
    """The option carrying ``args``: one argument's own, or (arguments sharing an option,
    ``recap when:fri 18:00``) one text holding them all, described by the first one's help."""
    first = args[0]
    if len(args) > 1:
        return DiscordOption(first.discord_name, Kind.TEXT, first.help, required=required)
    return DiscordOption(
        first.discord_name,
        first.kind,
        first.help,
        first.choices,
        first.default,
        required,
        first.low,
        first.high,
    )


def discord_options(*path: str) -> tuple[DiscordOption, ...]:
    """The options of the Discord app command at ``path`` (``"quiz"``, ``"round", "start"``).

    A bare command also carries its :attr:`~Command.discord_flat` subcommands: their
    arguments become optional options of its own, and the subcommands' names become the
    choices of the option that picks one (``/recap action:on when:fri 18:00``). Required
    options come first, as Discord wants; otherwise the table's order holds.
    """
    cmd = _found(path)
    options: dict[str, DiscordOption] = {}
    for args in _grouped(cmd.args_on("discord")):
        options[args[0].discord_name] = _option_of(args, required=any(a.required for a in args))
    flat = [s for s in cmd.subcommands if s.discord_flat and s.on("discord")] if cmd.bare else []
    for sub in flat:
        if sub.discord_choice:
            picker = options.get(sub.discord_choice) or DiscordOption(
                sub.discord_choice,
                Kind.CHOICE,
                cmd.discord_choice_help,
                (cmd.discord_bare,) if cmd.discord_bare else (),
                cmd.discord_bare or None,
            )
            options[sub.discord_choice] = DiscordOption(
                picker.name, Kind.CHOICE, picker.help, (*picker.choices, sub.name), picker.default
            )
        for args in _grouped(sub.args_on("discord")):
            options.setdefault(args[0].discord_name, _option_of(args, required=False))
    return tuple(sorted(options.values(), key=lambda option: not option.required))


def round_request(platform: Platform, words: Sequence[str]) -> RoundRequest:
    """``round start [PACK] [--questions N] [--seconds S] [--difficulty D] [--tag T]`` or
    ``round stop`` into its typed request; the numbers' ranges are the round's own rule
    (:class:`bot.core.rounds.RoundSpec`), checked by the service."""
    verb, values = parse_subcommand(platform, words, "round")
    return round_of(platform, verb, values)


def round_of(platform: Platform, verb: str, values: Values) -> RoundRequest:
    """``round start`` or ``round stop`` from the table's values, typed or picked."""
    if verb == "stop":
        return RoundStop()
    if verb == "skip":
        return RoundSkip()
    line = usage(platform, "round", "start")
    tag = (values.one("tag") or "").strip()
    return RoundStart(
        pack=values.one("pack"),
        questions=_number(values, "questions", line),
        seconds=_number(values, "seconds", line),
        difficulty=values.one("difficulty"),
        tags=(tag,) if tag else (),
        scoring=values.one("scoring"),
        talk=_number(values, "talk", line),
        **_teams(values, line),
    )


def _teams(values: Values, line: str) -> dict[str, Any]:
    """``--teams 4`` (how many) or ``--teams @red,@blue`` (one role per team; Discord's
    ``team-roles`` option, whose mentions are separated by spaces)."""
    typed = (values.one("teams") or "").strip()
    roles = (values.one("team-roles") or "").strip()
    if typed and roles:
        raise UsageError(line, reason="give --teams a number or roles, not both")
    if roles:
        return {"team_roles": tuple(re.split(r"[\s,]+", roles))}
    if not typed or typed.isdigit():
        return {"teams": _number(values, "teams", line)}
    if "," not in typed and not typed.startswith(("@", "<")):  # a typo'd number, most likely
        raise UsageError(
            line, reason=f"--teams takes how many (2 to 8) or roles (@red,@blue), not `{typed}`"
        )
    return {"team_roles": tuple(w for w in re.split(r"\s*,\s*", typed) if w)}


def _number(values: Values, name: str, line: str) -> int | None:
    """An option's whole number, or None when it was left out."""
    typed = values.one(name)
    if typed is None:
        return None
    if not typed.isdigit() or len(typed) > 6:
        raise UsageError(line, reason=f"--{name} takes a whole number, not `{typed}`")
    return int(typed)


def suggestions_request(platform: Platform, words: Sequence[str]) -> SuggestionsRequest:
    """``suggestions``, ``suggestions approve ID`` or ``suggestions reject ID REASON`` into its
    typed request; the reason's length is the service's rule."""
    verb, values = parse_subcommand(platform, words, "suggestions")
    return suggestions_of(verb, values)


def suggestions_of(verb: str, values: Values) -> SuggestionsRequest:
    """The suggestions request from its verb and the table's values (the id is required for
    approve and reject, so the table refused a line without it)."""
    if not verb:
        return SuggestionsList()
    typed = values.one("id")
    assert typed is not None  # required: parse() raised otherwise
    if verb == "approve":
        return SuggestionApprove(int(typed))
    return SuggestionReject(int(typed), values.one("reason") or "")


def rewards_request(platform: Platform, words: Sequence[str]) -> RewardsRequest:
    """``rewards list``, ``rewards add points|streak|reviews N ROLE``, ``rewards remove ID`` or
    ``rewards preview`` into its typed request. The role is the word as typed (``role`` and
    ``role_name`` both): each adapter turns it into its platform's id."""
    verb, values = parse_subcommand(platform, words, "rewards")
    if verb == "preview":
        return RewardsPreview()
    if verb == "remove":
        typed = values.one("id")
        assert typed is not None  # required: parse() raised otherwise
        return RewardRemove(int(typed))
    if verb == "add":
        metric, threshold, role = values.one("metric"), values.one("threshold"), values.one("role")
        # All three are required: parse() raised otherwise.
        assert metric is not None
        assert threshold is not None
        assert role is not None
        return RewardAdd(Metric(metric), parse_threshold(threshold), role, role)
    return RewardsList()
