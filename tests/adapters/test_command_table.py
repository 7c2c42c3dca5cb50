"""The command table against the platforms: each one has every command and option it declares.

The table (:mod:`bot.adapters.commands`) says what every platform accepts; this test walks it
and looks at what each platform really does: the app commands Discord's cog registers (their
options and choices), Slack's ``parse_study`` (a line typed with every argument must parse)
and the console's handlers (the same line, typed into a console, must not be a usage error).
"""

from __future__ import annotations

import io
import json
from datetime import time
from pathlib import Path
from typing import Any, cast

import pytest
from discord import AppCommandOptionType, app_commands

from bot.adapters.commands import (
    ALL,
    COMMANDS,
    Arg,
    Command,
    Kind,
    Platform,
    discord_options,
    help_lines,
    prefix,
    recap_request,
    remind_request,
    round_request,
    settings_request,
    suggestions_request,
    usage,
)
from bot.adapters.console import ConsoleAdapter
from bot.adapters.discord.cogs import COGS
from bot.adapters.discord.routed import routed_commands
from bot.adapters.dispatch import routed
from bot.adapters.slack.commands import parse_study
from bot.core.clock import SimulatedClock
from bot.core.errors import StudyError, UsageError
from bot.core.requests import (
    RecapNow,
    RecapOff,
    RecapOn,
    RecapShow,
    Remind,
    RemindOff,
    RoundStart,
    RoundStop,
    SettingChange,
    SettingsHistory,
    SettingShow,
    SuggestionApprove,
    SuggestionReject,
    SuggestionsList,
)
from bot.core.workspace_settings import Setting
from bot.services.bundle import Services
from tests.helpers import FRESH

# Gaps the table test has found and that are not closed yet: (platform, command, what).
KNOWN_GAPS: set[tuple[str, str, str]] = set()


def _leaves(platform: Platform) -> list[tuple[Command, Command | None]]:
    """Every (command, subcommand or None) the table declares for ``platform``."""
    found: list[tuple[Command, Command | None]] = []
    for cmd in COMMANDS:
        if not cmd.on(platform):
            continue
        if cmd.bare:
            found.append((cmd, None))
        found.extend((cmd, sub) for sub in cmd.subcommands if sub.on(platform))
    return found


def _typed(platform: Platform, cmd: Command, sub: Command | None, file: Path) -> str:
    """A line with every argument the table declares for it, each given its example."""
    words = [cmd.name] + ([sub.name] if sub else [])
    for arg in (sub or cmd).args_on(platform):
        value = str(file) if arg.kind is Kind.FILE else arg.example
        if arg.kind is Kind.FLAG:
            words.append(f"--{arg.name}" if arg.option else arg.name)
        elif value and arg.option:
            words += [f"--{arg.name}", value]
        elif value:
            words.append(value)
    return " ".join(words)


# --- Discord -------------------------------------------------------------------------------------


def _discord_tree() -> dict[str, app_commands.Command[..., object] | app_commands.Group]:
    """The cogs' app commands and the one front door's, as the client registers them."""
    tree: dict[str, app_commands.Command[..., object] | app_commands.Group] = {
        c.name: c for cog in COGS for c in cog.__cog_app_commands__
    }
    tree.update({c.name: c for c in routed_commands(cast(Any, None), tree)})
    return tree


def _options(command: object) -> dict[str, app_commands.Parameter]:
    assert isinstance(command, app_commands.Command), command
    return {p.display_name: p for p in command.parameters}


def discord_gaps() -> set[tuple[str, str, str]]:
    """What the table declares for Discord that the cog does not register."""
    tree = _discord_tree()
    gaps: set[tuple[str, str, str]] = set()
    for cmd, sub in _leaves("discord"):
        label = cmd.name if sub is None else f"{cmd.name} {sub.name}"
        top = tree.get(cmd.name)
        if top is None:
            gaps.add(("discord", label, "command"))
            continue
        target: object = top
        if sub is not None and not sub.discord_flat:
            assert isinstance(top, app_commands.Group), cmd.name
            target = top.get_command(sub.name)
            if target is None:
                gaps.add(("discord", label, "subcommand"))
                continue
        options = _options(target)
        if sub is not None and sub.discord_choice:
            chosen = options.get(sub.discord_choice)
            if chosen is None or sub.name not in {c.value for c in chosen.choices}:
                gaps.add(("discord", label, f"{sub.discord_choice}:{sub.name}"))
        for arg in (sub or cmd).args_on("discord"):
            option = options.get(arg.discord_name)
            if option is None:
                gaps.add(("discord", label, arg.name))
            elif arg.kind is Kind.CHOICE and not set(arg.choices) <= {
                c.value for c in option.choices
            }:
                gaps.add(("discord", label, f"{arg.name} choices"))
    return gaps


# --- Slack ---------------------------------------------------------------------------------------


def slack_gaps(file: Path) -> set[tuple[str, str, str]]:
    """Lines built from the table that Slack's ``/study`` parser refuses."""
    gaps: set[tuple[str, str, str]] = set()
    for cmd, sub in _leaves("slack"):
        label = cmd.name if sub is None else f"{cmd.name} {sub.name}"
        for arg in (None, *(sub or cmd).args_on("slack")):
            line = _typed("slack", cmd, sub, file) if arg is None else _one(cmd, sub, arg, file)
            try:
                parse_study(line)
            except UsageError:
                gaps.add(("slack", label, "command" if arg is None else arg.name))
    return gaps


def _one(cmd: Command, sub: Command | None, arg: Arg, file: Path) -> str:
    """The command with its required arguments and ``arg``: which option a refusal is about."""
    words = [cmd.name] + ([sub.name] if sub else [])
    args = (sub or cmd).args_on("slack")
    positional = [a for a in args if not a.option and a.kind is not Kind.FLAG]
    # A positional argument comes after the ones before it: `settings NAME VALUE`.
    before = positional[: positional.index(arg)] if arg in positional else []
    for other in args:
        if other is not arg and not other.required and other not in before:
            continue
        if other.kind is Kind.FLAG:
            words.append(f"--{other.name}" if other.option else other.name)
        elif other.option:
            words += [f"--{other.name}", other.example]
        else:
            words.append(str(file) if other.kind is Kind.FILE else other.example)
    return " ".join(w for w in words if w)


# --- the console ---------------------------------------------------------------------------------


async def console_gaps(
    service: Services, clock: SimulatedClock, file: Path
) -> set[tuple[str, str, str]]:
    """Lines built from the table that the console has no handler for, or calls bad usage."""
    out = io.StringIO()
    console = ConsoleAdapter(service, clock, out=out, json_mode=True)
    gaps: set[tuple[str, str, str]] = set()
    # `/pack disable mini` last: the schedule and quiz lines pick from that pack.
    leaves = sorted(
        _leaves("console"), key=lambda leaf: leaf[1] is not None and leaf[1].name == "disable"
    )
    for cmd, sub in leaves:
        label = cmd.name if sub is None else f"{cmd.name} {sub.name}"
        if cmd.name not in console._commands and not routed(cmd.name, "console"):
            gaps.add(("console", label, "command"))
            continue
        console.member, console.admin, console.channel = "me", True, "general"
        start = out.tell()
        await console.handle_line("/" + _typed("console", cmd, sub, file))
        out.seek(start)
        printed = [json.loads(line) for line in out.read().splitlines()]
        out.seek(0, io.SEEK_END)
        errors = [p["text"] for p in printed if p["kind"] == "error"]
        if errors:
            gaps.add(("console", label, str(errors[0])))
    return gaps


# --- the test ------------------------------------------------------------------------------------


@pytest.fixture
def pack_file(tmp_path: Path) -> Path:
    path = tmp_path / "fresh.yaml"
    path.write_text(FRESH)
    return path


async def test_every_platform_has_every_command_and_option(
    service: Services, clock: SimulatedClock, pack_file: Path
) -> None:
    gaps = discord_gaps() | slack_gaps(pack_file)
    gaps |= await console_gaps(service, clock, pack_file)
    assert gaps == KNOWN_GAPS


def test_usage_lines_are_generated_in_each_platforms_style() -> None:
    quiz = "[--difficulty easy|medium|hard] [--tag TAG] [--kinds KIND[,KIND]]"
    assert usage("console", "quiz") == f"/quiz [PACK] {quiz}"
    assert usage("slack", "quiz") == f"/study quiz [PACK] {quiz}"
    assert usage("discord", "quiz") == (
        "/quiz [pack:PACK] [difficulty:easy|medium|hard] [tag:TAG] [kind:KIND]"
    )
    assert usage("discord", "review", "remind") == "/review remind:HH:MM|off [timezone:TZ]"
    assert usage("slack", "pack", "enable") == "/study pack enable NAME"


def test_help_lists_admin_lines_last_and_merges_alike_subcommands() -> None:
    lines = help_lines("slack")
    admin_from = next(i for i, line in enumerate(lines) if line.admin)
    assert all(line.admin for line in lines[admin_from:])
    usages = [line.usage for line in lines]
    assert "/study schedule remove|pause|resume|skip|now ID [--channel NAME]" in usages
    assert "/study pack enable|disable NAME" in usages
    assert not any(line.usage.startswith("/as") for line in lines)  # the console's own


def test_help_lists_the_same_commands_on_every_platform() -> None:
    shared = {cmd.name for cmd in COMMANDS if cmd.platforms == ALL}
    for platform in ("discord", "slack", "console"):
        listed = {
            line.usage.removeprefix(prefix(platform)).split()[0] for line in help_lines(platform)
        }
        assert shared <= listed, (platform, shared - listed)


# --- typed requests: the services never see words -------------------------------------------

REQUESTS = [
    ("recap", "recap", RecapShow()),
    ("recap", "recap on fri 18:00", RecapOn(4, time(18, 0))),
    ("recap", "recap ON Monday 7:05", RecapOn(0, time(7, 5))),
    ("recap", "recap off", RecapOff()),
    ("recap", "recap now", RecapNow()),
    ("settings", "settings", SettingShow()),
    ("settings", "settings tz", SettingShow(Setting.TIMEZONE)),
    ("settings", "settings history", SettingsHistory()),
    ("settings", "settings window 1h 30m", SettingChange(Setting.QUIZ_WINDOW, "1h 30m")),
    ("review", "review remind 8:30 Europe/Berlin", Remind(time(8, 30), "Europe/Berlin")),
    ("review", "review remind 19:00", Remind(time(19, 0))),
    ("review", "review remind off", RemindOff()),
    ("round", "round start", RoundStart()),
    (
        "round",
        "round start mini --questions 5 --seconds 15 --difficulty easy --tag autograd",
        RoundStart("mini", questions=5, seconds=15, difficulty="easy", tags=("autograd",)),
    ),
    ("round", "round stop", RoundStop()),
    ("suggestions", "suggestions", SuggestionsList()),
    ("suggestions", "suggestions approve 3", SuggestionApprove(3)),
    ("suggestions", "suggestions reject #3 too vague", SuggestionReject(3, "too vague")),
]


def _text_request(platform: Platform, line: str) -> object:
    words = line.split()
    if platform == "slack":
        study = parse_study(line)
        return study.typed if study.values is not None else study.request
    if words[0] == "recap":
        return recap_request(platform, words[1:])
    if words[0] == "settings":
        return settings_request(platform, words[1:])
    if words[0] == "round":
        return round_request(platform, words[1:])
    if words[0] == "suggestions":
        return suggestions_request(platform, words[1:])
    return remind_request(platform, words[2:])


@pytest.mark.parametrize("platform", ["console", "slack"])
@pytest.mark.parametrize(("name", "line", "expected"), REQUESTS)
def test_the_text_platforms_make_the_same_typed_request(
    platform: Platform, name: str, line: str, expected: object
) -> None:
    assert _text_request(platform, line) == expected


@pytest.mark.parametrize("platform", ["console", "slack"])
@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("recap on someday 18:00", "`someday` is not a day of the week"),
        ("recap on fri 25:00", "`25:00` is not a time of day"),
        ("recap off now", "too many words"),
        ("recap later", "`later` is not a recap action"),
        ("settings colour blue", "`colour` is not a setting"),
        ("review remind soon", "`soon` is not a time of day (HH:MM) or off"),
        ("round start --seconds soon", "--seconds takes a whole number, not `soon`"),
        ("round", "say what to do with round"),
        ("suggestions approve", "ID is missing"),
        ("suggestions approve three", "`three` is not a number"),
        ("suggestions reject 3", "REASON is missing"),
        ("suggestions maybe 3", "`maybe` is not a suggestions action"),
    ],
)
def test_a_bad_request_is_refused_at_the_front_door_with_what_is_wrong(
    platform: Platform, line: str, problem: str
) -> None:
    with pytest.raises(StudyError) as caught:
        _text_request(platform, line)
    assert problem in str(caught.value)


def _discord_paths() -> list[tuple[str, ...]]:
    """Every app command the cog registers, as a table path (``("round", "start")``)."""
    paths: list[tuple[str, ...]] = []
    for name, top in _discord_tree().items():
        if isinstance(top, app_commands.Group):
            paths.extend((name, sub.name) for sub in top.commands)
        else:
            paths.append((name,))
    return paths


_DISCORD_TYPES = {
    Kind.INT: AppCommandOptionType.integer,
    Kind.POST: AppCommandOptionType.integer,
    Kind.FLAG: AppCommandOptionType.boolean,
    Kind.MEMBER: AppCommandOptionType.user,
    Kind.ROLE: AppCommandOptionType.role,
    Kind.FILE: AppCommandOptionType.attachment,
}


def _registered(path: tuple[str, ...]) -> list[tuple[object, ...]]:
    top = _discord_tree()[path[0]]
    target = top.get_command(path[1]) if isinstance(top, app_commands.Group) else top
    return [
        (
            p.name,
            p.type,
            p.description,
            p.required,
            tuple(c.value for c in p.choices),
            p.min_value,
            p.max_value,
        )
        for p in _options(target).values()
    ]


def _declared(path: tuple[str, ...]) -> list[tuple[object, ...]]:
    return [
        (
            o.name,
            _DISCORD_TYPES.get(o.kind, AppCommandOptionType.string),
            o.help or "…",
            o.required,
            o.choices,
            1 if o.kind is Kind.TEXT and o.high is not None else o.low,
            o.high,
        )
        for o in discord_options(*path)
    ]


@pytest.mark.parametrize("path", _discord_paths(), ids=" ".join)
def test_discord_registers_exactly_the_options_the_table_declares(path: tuple[str, ...]) -> None:
    """Each app command's options, in order, with their type, description, choices and
    limits, are the table's: the cog declares none of them itself."""
    assert _registered(path) == _declared(path)


def test_a_bare_command_carries_its_flat_subcommands_as_options() -> None:
    """``/recap action:on when:fri 18:00``: the subcommands' names are one option's choices,
    with the bare command first, and their arguments are optional options of the parent."""
    recap = {o.name: o for o in discord_options("recap")}
    assert recap["action"].choices == ("show", "on", "off", "now")
    assert recap["action"].default == "show"
    assert not recap["when"].required  # required for `on` only: the service says so
    settings = {o.name: o for o in discord_options("settings")}
    assert settings["setting"].choices[-1] == "history"  # the table's choices, then `history`
    report = [o.name for o in discord_options("report")]
    assert report == ["reason", "id"]  # Discord wants required options first


def test_every_discord_command_is_described_by_the_table() -> None:
    """Discord shows the table's help (as a sentence), never a docstring's or a literal's."""
    from bot.adapters.discord.options import description

    described: list[tuple[str, str, str]] = []
    for name, top in _discord_tree().items():
        described.append((name, top.description, description(name)))
        if isinstance(top, app_commands.Group):
            for sub in top.commands:
                described.append(
                    (f"{name} {sub.name}", sub.description, description(name, sub.name))
                )
    assert len(described) > 25
    assert [(n, got) for n, got, want in described if got != want] == []
