"""The text grammar of schedule commands, shared by the console and Slack.

Its verbs and ``add``'s options are the command table's (:mod:`bot.adapters.commands`), so
``/help``, Discord's options and this grammar cannot drift apart.

``schedule add 09:00 Europe/Berlin weekdays --pack P``, ``schedule remove 3 --channel
general``: typed words become a :class:`~bot.core.schedule_spec.ScheduleForm` or a schedule id
and options, then one typed call on :class:`~bot.services.schedule_book.ScheduleBook`. Discord
has typed options of its own and calls those methods directly, so the core never parses words
and the platforms cannot drift apart in what they accept: both text platforms use this module.

Usage problems are :class:`~bot.core.errors.BadInput` with the words the core used to say, so
what members read did not change when the grammar moved here.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Sequence
from typing import cast

from bot.adapters.commands import Platform, command, usage
from bot.core.durations import format_duration
from bot.core.errors import BadInput, UsageError
from bot.core.models import ChatContext
from bot.core.schedule_spec import ScheduleError, ScheduleForm, ScheduleSpec, word_kind
from bot.services.schedule_book import (
    PREVIEW_DEFAULT,
    PREVIEW_MAX,
    ScheduleBook,
    ScheduleReply,
)

__all__ = [
    "ADMIN_VERBS",
    "VERBS",
    "parse_schedule_args",
    "run_schedule_command",
    "schedule_form",
    "spec_words",
    "split_args",
]

_SCHEDULE = command("schedule")
#: The verbs and who may use them: the table's subcommands of ``schedule``.
VERBS: tuple[str, ...] = tuple(sub.name for sub in _SCHEDULE.subcommands)
ADMIN_VERBS = frozenset(sub.name for sub in _SCHEDULE.subcommands if sub.admin)
_ADD = _SCHEDULE.subcommand("add")
assert _ADD is not None
# ``schedule add``'s options, as the table declares them, by the ScheduleForm field each
# fills (the field is the option's Discord name: ``--tag`` fills ``tags``).
_OPTION_FIELDS = {f"--{arg.name}": arg.discord_name for arg in _ADD.args if arg.option}
_REPEATABLE = frozenset(f"--{arg.name}" for arg in _ADD.args if arg.option and arg.repeat)
_CRON_FIELDS = 5
_SMART_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def split_args(text: str) -> list[str]:
    """Split a typed command shell-style, so ``--cron "0 9 * * 1-5"`` is one argument.

    Curly quotes are straightened first: chat clients (Slack on macOS, phones) turn ``"``
    into ``“`` as people type. Unbalanced quotes raise :class:`ScheduleError`.
    """
    try:
        return shlex.split(text.translate(_SMART_QUOTES))
    except ValueError as exc:
        raise ScheduleError("args", f"{exc} (a quote is not closed)") from exc


def schedule_form(args: Sequence[str]) -> ScheduleForm:
    """Sort ``TIME [TZ] [DAYS] [--pack P] [--tag T]... [--difficulty D] [--window W]
    [--mention M] [--kinds K,...] [--round NxSs]``, or the same with ``--cron EXPR`` in place
    of ``TIME`` and ``DAYS``, into the form's fields (checked later, by :meth:`ScheduleForm.spec`).

    ``args`` are the words after ``schedule add``, split by :func:`split_args` (so a quoted
    cron expression is one word; an unquoted ``--cron 0 9 * * 1-5`` takes the next five).
    TZ and DAYS are told apart by their form, so their order does not matter. A cron
    expression is only ever given with ``--cron``, never as DAYS, and then TIME and DAYS
    must be left out. ``--opt=value`` works as well as ``--opt value``.
    """
    positional, options = _split_args(list(args))
    words = _classify_positional(positional)

    def one(flag: str) -> str | None:
        return options[flag][0] if flag in options else None

    return ScheduleForm(
        time=words.get("time"),
        timezone=words.get("timezone"),
        days=words.get("days"),
        cron=one("--cron"),
        pack=one("--pack"),
        tags=tuple(options.get("--tag", [])),
        difficulty=one("--difficulty"),
        window=one("--window"),
        mention=one("--mention"),
        kinds=tuple(options.get("--kinds", [])),
        round=one("--round"),
    )


def parse_schedule_args(args: Sequence[str], default_timezone: str) -> ScheduleSpec:
    """:func:`schedule_form` then :meth:`ScheduleForm.spec`: the words as a checked spec."""
    return schedule_form(args).spec(default_timezone)


def spec_words(spec: ScheduleSpec) -> list[str]:
    """The words that :func:`parse_schedule_args` turns back into ``spec``."""
    if spec.time is None:
        args = ["--cron", spec.days.text, spec.timezone]
    else:
        args = [f"{spec.time:%H:%M}", spec.timezone, spec.days.text]
    for flag, value in (("--pack", spec.pack), ("--difficulty", spec.difficulty)):
        if value:
            args += [flag, value]
    for tag in spec.tags:
        args += ["--tag", tag]
    if spec.window is not None:
        args += ["--window", format_duration(spec.window)]
    if spec.mention:
        args += ["--mention", spec.mention]
    if spec.kinds:
        args += ["--kinds", ",".join(spec.kinds)]
    if spec.round:
        args += ["--round", f"{spec.round[0]}x{spec.round[1]}s"]
    return args


def _split_args(args: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    positional: list[str] = []
    options: dict[str, list[str]] = {}
    i = 0
    while i < len(args):
        token = args[i]
        if not token.startswith("--"):
            positional.append(token)
            i += 1
            continue
        flag, eq, inline = token.partition("=")
        flag = flag.lower()
        if flag not in _OPTION_FIELDS:
            raise _unknown_option(flag)
        if flag in options and flag not in _REPEATABLE:
            raise ScheduleError(_OPTION_FIELDS[flag], f"{flag} given twice")
        if eq:
            value, i = inline, i + 1
        else:
            value, i = _option_value(args, i + 1, flag)
        options.setdefault(flag, []).append(value)
    return positional, options


def _option_value(args: list[str], i: int, flag: str) -> tuple[str, int]:
    """The value after ``flag`` and the index after it; an unquoted cron takes five words."""
    if i >= len(args) or args[i].startswith("--"):
        raise ScheduleError(_OPTION_FIELDS[flag], f"{flag} needs a value")
    if flag != "--cron" or len(args[i].split()) > 1:
        return args[i], i + 1
    end = i
    while end < min(len(args), i + _CRON_FIELDS) and not args[end].startswith("--"):
        end += 1
    return " ".join(args[i:end]), end


def _unknown_option(flag: str) -> ScheduleError:
    close = difflib.get_close_matches(flag, _OPTION_FIELDS, n=1, cutoff=0.6)
    hint = f" — did you mean {close[0]}?" if close else f"; known: {', '.join(_OPTION_FIELDS)}"
    return ScheduleError("args", f"unknown option {flag}{hint}", suggestions=close)


def _classify_positional(positional: list[str]) -> dict[str, str]:
    """Sort the bare words into time, timezone and days, each at most once."""
    words: dict[str, str] = {}
    for token in positional:
        if not token.strip():
            continue  # `""` from a shell-style split carries nothing.
        kind = word_kind(token)
        if kind in words:
            raise ScheduleError(kind, f"{kind} given twice: {words[kind]!r} and {token!r}")
        words[kind] = token
    return words


# --- verbs -----------------------------------------------------------------------------------


async def run_schedule_command(
    book: ScheduleBook, ctx: ChatContext, verb: str, args: Sequence[str]
) -> ScheduleReply:
    """``schedule VERB ARGS...`` typed in the console or Slack: parse, then one typed call.

    Raises :class:`~bot.core.errors.Forbidden` (not an admin: checked before the words, as
    a member should hear that first), :class:`BadInput` (words that do not parse; for
    ``add`` the text names the field, the reason and an example) or
    :class:`~bot.core.errors.NotFound` (no such schedule in this workspace).
    """
    name = verb.strip().lower()
    if name not in VERBS:
        close = difflib.get_close_matches(name, VERBS, n=1)
        hint = f" Did you mean `schedule {close[0]}`?" if close else ""
        raise BadInput(
            f"`{verb}` is not a schedule command; use {', '.join(VERBS[:-1])} or {VERBS[-1]}.{hint}"
        )
    if name in ADMIN_VERBS:
        book.require_admin(ctx)
    words = [a for a in args if a.strip()]
    if name == "add":
        try:
            form = schedule_form(words)
        except ScheduleError as exc:
            raise BadInput(str(exc)) from None
        return await book.add(ctx, form)
    line = _usage(ctx, name)
    if name == "list":
        if words:
            raise UsageError(line, reason="too many words")
        return await book.list(ctx)
    if name == "preview":
        words, channel = _channel_option(words, line)
        if len(words) not in (1, 2):
            raise UsageError(line, reason="give the schedule's ID, and how many times to show")
        count = PREVIEW_DEFAULT
        if len(words) == 2:
            if not words[1].isdigit() or not 1 <= int(words[1]) <= PREVIEW_MAX:
                raise BadInput(f"N is how many to show: a number from 1 to {PREVIEW_MAX}.")
            count = int(words[1])
        return await book.preview(ctx, _schedule_id(words[:1], line), count, channel=channel)
    words, channel = _channel_option(words, line)
    schedule_id = _schedule_id(words, line)
    verbs = {
        "remove": book.remove,
        "pause": book.pause,
        "resume": book.resume,
        "skip": book.skip,
        "now": book.now,
    }
    return await verbs[name](ctx, schedule_id, channel=channel)


def _usage(ctx: ChatContext, verb: str) -> str:
    """The verb's usage line, from the table, as this platform types it."""
    platform = cast(Platform, ctx.platform if ctx.platform in ("slack", "console") else "console")
    return usage(platform, "schedule", verb, brief=True)


def _schedule_id(words: list[str], line: str) -> int:
    if len(words) != 1:
        raise UsageError(line, reason="give one schedule ID (`schedule list` shows them)")
    text = words[0].lstrip("#")
    if not text.isdigit() or len(text) > 18:
        raise BadInput(f"`{words[0]}` is not a schedule id; `schedule list` shows the ids.")
    return int(text)


def _channel_option(args: list[str], line: str) -> tuple[list[str], str | None]:
    """``args`` without ``--channel NAME``, and the name (None when not given)."""
    if "--channel" not in args:
        return args, None
    at = args.index("--channel")
    if at + 1 >= len(args):
        raise UsageError(line, reason="--channel needs a channel's name")
    return args[:at] + args[at + 2 :], args[at + 1]
