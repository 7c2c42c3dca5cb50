"""The terminal chat: the whole bot, locally, with no tokens.

Interactive on a TTY; on a pipe it reads one command per line, so a session can be scripted
and its ``--json`` output asserted on. With a simulated clock (``--clock``) time only moves on
``/clock advance`` or ``/clock set``, which makes days, streaks and windows testable.
Every outbound message is printed, public ones as posts, private ones marked as such.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import signal
import sys
import textwrap
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final
from zoneinfo import ZoneInfo

from bot.adapters.commands import (
    SolveRequest,
    command,
    help_lines,
    leading_options,
    parse,
    parse_subcommand,
    remind_request,
    rewards_request,
    synopsis,
    usage,
)
from bot.adapters.dispatch import dispatch, read_text, routed
from bot.adapters.text_commands import VERBS, run_schedule_command
from bot.core import srs
from bot.core.clock import Clock, SimulatedClock, check_simulated
from bot.core.durations import format_duration, parse_duration
from bot.core.errors import APOLOGY, BadInput, Forbidden, StudyError, UsageError
from bot.core.messages import Action, Attachment, Message, terminal_safe
from bot.core.models import ChatContext
from bot.core.replies import GRADES, OVERRIDE, TYPE_IT, grade_buttons, review_value
from bot.core.rewards import Power
from bot.core.uploads import CONSOLE, fit_attachments
from bot.log import get_logger
from bot.questions.written import parse_console_form
from bot.services.bundle import Services
from bot.services.review import ReviewTurn
from bot.text import id_problem

if TYPE_CHECKING:
    from bot.scheduler import Scheduler

__all__ = ["ConsoleAdapter"]

log = get_logger(__name__)
PLATFORM: Final = "console"
WORKSPACE = "console"
HELP_WIDTH = 80  # /help fits a standard terminal
_HELP_COLUMN = 20  # where each command's description starts
# By verb, for the usage line of a schedule command that does not parse. Still written by
# hand: tests/test_scheduler.py pins these words (`[options]` for add's many options).
_SCHEDULE_USAGE = {  # from the command table, short enough for one error line
    sub.name: usage(PLATFORM, "schedule", sub.name, brief=True)
    for sub in command("schedule").subcommands
}


@dataclass(frozen=True, slots=True)
class _Command:
    usage: str
    help: str
    handler: Callable[[list[str]], Awaitable[None]]


class ConsoleAdapter:
    """Runs console commands against a :class:`Services` and prints what it says."""

    def __init__(
        self,
        service: Services,
        clock: Clock,
        *,
        out: IO[str] | None = None,
        json_mode: bool = False,
        member: str = "me",
        admin: bool = True,
        channel: str = "general",
        scheduler: Scheduler | None = None,
        files_dir: Path | None = None,
    ) -> None:
        self.services = service
        service.quiz.connect(self)  # rules that read the chat (a round's role teams)
        # Where attachments are saved (figures, files, graphs); None = only name them.
        self.files_dir = files_dir
        self._saved = 0
        # Set when a scheduler runs with this console as its gateway: every command then waits
        # for it to settle, and /clock steps through due times, so output is deterministic.
        self.scheduler = scheduler
        self.clock = clock
        self.out = out or sys.stdout
        self.json_mode = json_mode
        self.member = member
        self.admin = admin
        # Who was made an admin this session: `/as me` after `/as bob` is the admin again.
        self._admins = {member.casefold()} if admin else set()
        self.channel = channel
        self.running = True
        self._snippet: list[str] | None = None  # lines of a fenced /run block being typed
        self._solving: tuple[int, list[str]] | None = None  # /solve's post and lines, to /end
        self._graph_of: tuple[str, ...] | None = None  # set while that block is a /graph
        self._reviewing: dict[str, ReviewTurn] = {}  # by member: the /review card shown
        self._typed_last: dict[str, int] = {}  # by member: the typed card last graded
        self.closed_dms: set[str] = set()  # members whose DMs are closed (`/dms closed`)
        # The console's roles, by member: given and taken back by role rewards (`/roles`).
        self.roles: dict[str, set[str]] = {}
        self._lines: asyncio.Queue[str | None] | None = None  # stdin, read by a daemon thread
        self._prompt: Any = None  # the interactive prompt session while it runs
        handlers: dict[str, Callable[[list[str]], Awaitable[None]]] = {
            "as": self._as,
            "channel": self._channel,
            "review": self._review,
            "stats": self._stats,
            "rewards": self._rewards,
            "roles": self._roles,
            "write": self._write_usage,
            "pack": self._pack,
            "schedule": self._schedule,
            "run": self._run_usage,
            "graph": self._run_usage,
            "solve": self._solve,
            "try": self._try,
            "clock": self._clock,
            "dms": self._dms,
            "help": self._help,
            "quit": self._quit,
        }
        # Usage and help come from the one command table; only the handlers are the console's.
        self._commands: dict[str, _Command] = {
            name: _Command(synopsis(PLATFORM, name), command(name).help, handler)
            for name, handler in handlers.items()
        }

    # --- identity ----------------------------------------------------------------------------

    def context(self) -> ChatContext:
        return ChatContext(
            platform=PLATFORM,
            workspace=WORKSPACE,
            channel=self.channel,
            member=self.member.casefold(),  # `/as Alice` and `/as alice` are one person
            member_name=self.member,
            is_admin=self.admin,
            channel_name=self.channel,
            workspace_name="console",
            command_prefix="/",
        )

    # --- the loop ----------------------------------------------------------------------------

    async def run(self, lines: Iterable[str] | None = None) -> None:
        """Read commands until EOF or ``/quit``: given lines, a TTY prompt, or a pipe.

        Standard input is read in a daemon thread so the event loop keeps running while the
        console waits for a line (scheduled posts still appear on time), and a stop never
        waits for a key press.
        """
        if self.scheduler is not None:
            await self.scheduler.settle()  # start-up posts and reveals come first
        if lines is not None:
            for line in lines:
                await self.handle_line(line)
                if not self.running:
                    return
            return
        interactive = sys.stdin.isatty()
        if interactive and sys.stdout.isatty() and not self.json_mode:
            self._print_welcome()
            await self._prompt_loop()
            return
        if interactive:
            _enable_line_editing()
            self._print_welcome()
        self._lines = asyncio.Queue()
        loop = asyncio.get_running_loop()
        wanted = threading.Event()  # one line at a time, so the prompt shows after the output

        def reader() -> None:
            assert self._lines is not None
            lines = self._lines
            while True:
                wanted.wait()
                wanted.clear()
                prompt = self._prompt_text() if interactive else None
                typed = _read_line(prompt)
                loop.call_soon_threadsafe(lines.put_nowait, typed)
                if typed is None:
                    return

        # A daemon thread, not to_thread(): a stop (SIGTERM) must not wait for an Enter key.
        threading.Thread(target=reader, name="console-stdin", daemon=True).start()
        while self.running:
            wanted.set()
            typed = await self._lines.get()
            if typed is None or not self.running:
                return
            await self.handle_line(typed)

    async def _prompt_loop(self) -> None:
        """The interactive prompt (a terminal on both ends): line editing and history, output
        printed above the prompt as it arrives, and Ctrl-C clearing the line being typed (or
        the code block being collected) instead of stopping the bot; Ctrl-D or /quit leave.
        """
        from prompt_toolkit import PromptSession
        from prompt_toolkit.patch_stdout import patch_stdout

        session: PromptSession[str] = PromptSession()
        self._prompt = session
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            # Ctrl-C while a command runs (the terminal is not in raw mode then): a hint.
            loop.add_signal_handler(signal.SIGINT, self._interrupted)
        real_out = self.out
        try:
            with patch_stdout(raw=True):
                self.out = sys.stdout  # the proxy: output goes above the prompt
                while self.running:
                    prompt = self._prompt_text()
                    try:
                        line = await session.prompt_async(prompt)
                    except KeyboardInterrupt:  # Ctrl-C at the prompt: the line is gone
                        if self._snippet is not None:
                            self._snippet = None
                            self._graph_of = None
                            self.note("(code block cancelled)")
                        elif self._solving is not None:
                            self._solving = None
                            self.note("/solve cancelled; nothing was submitted")
                        continue
                    except EOFError:  # Ctrl-D, or stop()
                        return
                    await self.handle_line(line)
        finally:
            self.out = real_out
            self._prompt = None

    def _prompt_text(self) -> str:
        """``... `` while the lines typed are code (a /run block, a /solve up to /end), as a
        Python prompt does; the channel and member otherwise."""
        if self._snippet is not None or self._solving is not None:
            return "... "
        return f"[#{self.channel} as {self.member}] > "

    def _interrupted(self) -> None:
        self.note("(Ctrl-C: type /quit or press Ctrl-D to leave)")

    async def stop(self) -> None:
        self.running = False
        if self._lines is not None:
            self._lines.put_nowait(None)  # wake run() if it is waiting for a line
        if self._prompt is not None and self._prompt.app.is_running:
            self._prompt.app.exit(exception=EOFError)  # wake the interactive prompt

    def is_connected(self) -> bool:
        return self.running

    async def handle_line(self, line: str) -> None:
        if self._snippet is not None:
            await self._collect_snippet(line)
            return
        if self._solving is not None:
            await self._collect_solution(line)
            return
        text = line.strip()
        if not text or text.startswith("#"):
            return
        if not text.startswith("/"):
            self.error("commands start with /; try /help")
            return
        head, _, rest = text[1:].partition(" ")
        if head.lower() in ("run", "graph"):  # code is taken as typed, not split into words
            await self._guarded(text, self._run(rest, graph=head.lower() == "graph"))
            return
        if head.lower() == "write":  # prose with apostrophes: taken as typed too
            await self._guarded(text, self._write(rest), usage(PLATFORM, "write"))
            return
        try:
            words = shlex.split(text[1:])
        except ValueError as exc:
            self.error(f"cannot read that line: {exc}")
            return
        if not words:
            self.error("try /help")
            return
        name, args = words[0].lower(), words[1:]
        command = self._commands.get(name)
        if command is None and routed(name, PLATFORM):  # the one front door's commands
            await self._guarded(text, self._dispatch(name, args), synopsis(PLATFORM, name))
            return
        if command is None:
            self.error(f"unknown command /{name}; try /help")
            return
        await self._guarded(text, command.handler(args), command.usage)

    async def _dispatch(self, name: str, args: list[str]) -> None:
        """An ordinary command: the table reads the words, the dispatch answers, and the
        console shows the reply (private or public as it says), then any question drafted."""
        typed = read_text(PLATFORM, name, args)
        outcome = await dispatch(
            self.services, self.context(), typed.path, typed.values, self, typed.request
        )
        if outcome.message is not None:
            self.reply(outcome.message)
        if outcome.draft is not None:
            await self.services.posting.publish(outcome.draft, self)

    async def _guarded(self, text: str, work: Awaitable[None], usage: str = "") -> None:
        """Run one command; every failure becomes a reply, never a traceback."""
        try:
            await work
            if self.scheduler is not None:
                # Everything due by now (questions, reveals, recaps, reminders), after the
                # command's own output: the one timer loop, as on every platform.
                await self.scheduler.settle()
        except UsageError as exc:  # the console's own or the core's: the command's usage
            self.error(exc.shown(usage))
        except StudyError as exc:
            self.note(str(exc))
        except Exception:
            log.exception(
                "console command failed: %s (as %s in #%s)", text, self.member, self.channel
            )
            self.error(APOLOGY)

    # --- output ------------------------------------------------------------------------------

    def _emit(self, payload: dict[str, object], human: str) -> None:
        payload["at"] = self.clock.now().isoformat()
        if self.json_mode:
            self.out.write(json.dumps(payload, ensure_ascii=False) + "\n")
        else:
            self.out.write(terminal_safe(human) + "\n")
        self.out.flush()

    def post(self, channel: str, message: Message, *, kind: str = "post") -> None:
        message = fit_attachments(message, CONSOLE)
        payload: dict[str, object] = {
            "kind": kind,
            "channel": channel,
            "member": None,
            "ephemeral": False,
            "text": message.plain_text(),
            "post_id": message.post_id,
            "question_id": message.question_id,
        }
        how = answered_with(message) if kind in ("post", "edit") else None
        if kind == "post":
            payload["choices"] = list(message.choices)
            if message.mention:
                payload["mention"] = message.mention
            if how:
                payload["answer_with"] = how
        label = "edited" if kind == "edit" else "post"
        if message.post_id is not None:
            label += f" #{message.post_id}"
        elif message.title:  # a recap: no question number to show
            label = message.title
        rule = f"── #{channel} · {label} " + "─" * 20
        body = message.plain_text() + (f"\n→ {how}" if how else "")
        body += self._attached(message, payload)
        self._emit(payload, f"{rule}\n{body}\n")

    def _attached(self, message: Message, payload: dict[str, object]) -> str:
        """Save the message's attachments, list them in ``payload``; the lines to print."""
        if not message.attachments:
            return ""
        saved = [self._save(a) for a in message.attachments]
        payload["attachments"] = [
            {"filename": a.filename, "bytes": len(a.content)}
            | ({"path": str(path)} if path else {})
            for a, path in zip(message.attachments, saved, strict=True)
        ]
        return "".join(
            f"\n(attached: {a.filename}, {len(a.content):,} bytes"
            + (f", saved to {path})" if path else ")")
            for a, path in zip(message.attachments, saved, strict=True)
        )

    def reply(self, message: Message, *, text: str | None = None) -> None:
        message = fit_attachments(message, CONSOLE)
        body = text if text is not None else message.plain_text()
        payload: dict[str, object] = {
            "kind": "reply",
            "channel": self.channel,
            "member": self.member,
            "ephemeral": message.ephemeral,
            "text": body,
        }
        if message.post_id is not None:
            payload["post_id"] = message.post_id
        if message.choices:
            payload["choices"] = list(message.choices)
        tries = [b for b in message.buttons if b.action is Action.TRY]
        if tries:  # an answer's private reply: its code can be tried now
            which = "|".join(b.value for b in tries if b.value != "code")
            body += f"\n→ try the code with /try #{tries[0].post_id}" + (
                f" [{which}]" if which else ""
            )
        body += self._attached(message, payload)
        prefix = f"(only {self.member} sees this) " if message.ephemeral else ""
        self._emit(payload, f"{prefix}{body}")

    def _save(self, attachment: Attachment) -> Path | None:
        """Write an attachment under ``files_dir`` (numbered, never overwriting); its path."""
        if self.files_dir is None:
            return None
        self._saved += 1
        name = Path(attachment.filename).name or "file"
        try:
            self.files_dir.mkdir(parents=True, exist_ok=True)
            # Named by the console's clock: under --clock, the simulated day the file is of.
            stamp = self.clock.now().strftime("%Y%m%d-%H%M%S")
            path = self.files_dir / f"{stamp}-{self._saved}-{name}"
            with open(path, "xb") as fh:
                fh.write(attachment.content)
        except OSError as exc:
            log.warning("cannot save %s: %s", attachment.filename, exc)
            return None
        return path

    def note(self, text: str) -> None:
        """A short private reply (confirmations, and domain errors such as a closed post)."""
        self.reply(Message(ephemeral=True), text=text)

    def error(self, text: str) -> None:
        payload: dict[str, object] = {
            "kind": "error",
            "channel": self.channel,
            "member": self.member,
            "ephemeral": True,
            "text": text,
        }
        self._emit(payload, f"! {text}")

    # ChatGateway: what the scheduler and reveals use to publish in this chat.
    async def send_post(self, channel: str, message: Message) -> str:
        self.post(channel, message)
        return f"console:{message.post_id}"

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        self.post(channel, message, kind="edit")

    # DirectMessenger: review reminders. Members named in ``closed_dms`` do not take DMs.
    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        if member in self.closed_dms:
            return False
        payload: dict[str, object] = {
            "kind": "dm",
            "channel": None,
            "member": member,
            "ephemeral": True,
            "text": message.plain_text(),
        }
        self._emit(payload, f"(DM to {member}) {message.plain_text()}")
        return True

    # RoleManager: role rewards. The console's roles are names, kept in memory and printed.
    async def can_manage_role(self, workspace: str, role: str) -> str | None:
        return None

    async def role_powers(self, workspace: str, role: str) -> frozenset[Power]:
        """No powers: the console's roles carry no permissions, and its admins are named by
        ``/as NAME --admin``, never by a role, so no role of its can make an admin."""
        return frozenset()

    async def grant_role(self, workspace: str, member: str, role: str) -> str | None:
        self.roles.setdefault(member, set()).add(role)
        self._role_line(member, f"(role {role} given to {member})")
        return None

    async def revoke_role(self, workspace: str, member: str, role: str) -> str | None:
        self.roles.get(member, set()).discard(role)
        self._role_line(member, f"(role {role} taken from {member})")
        return None

    # RoleReader: teams from roles. A console role exists while some member holds it.
    async def find_role(self, workspace: str, typed: str) -> tuple[str, str] | None:
        wanted = typed.strip().removeprefix("@").casefold()
        for role in sorted({r for held in self.roles.values() for r in held}):
            if role.casefold() == wanted:
                return role, f"@{role}"
        return None

    async def roles_held(self, workspace: str, member: str, roles: Sequence[str]) -> frozenset[str]:
        return frozenset(self.roles.get(member.casefold(), set()) & set(roles))

    def _role_line(self, member: str, text: str) -> None:
        payload: dict[str, object] = {
            "kind": "role",
            "channel": None,
            "member": member,
            "ephemeral": False,
            "text": text,
        }
        self._emit(payload, text)

    # --- commands ----------------------------------------------------------------------------

    async def _as(self, args: list[str]) -> None:
        values = parse(PLATFORM, args, "as")
        self.member = _name(values.one("name") or "", "@", usage(PLATFORM, "as"))
        if values.flag("admin"):
            self._admins.add(self.member.casefold())
        self.admin = self.member.casefold() in self._admins
        role = " (admin)" if self.admin else ""
        self.note(f"you are now {self.member}{role}")

    async def _channel(self, args: list[str]) -> None:
        typed = parse(PLATFORM, args, "channel").one("name") or ""
        self.channel = _name(typed, "#", usage(PLATFORM, "channel"))
        self.note(f"now in #{self.channel}")

    async def _write(self, rest: str) -> None:
        """``/write [--difficulty D] [--tag T] PROMPT | *RIGHT | WRONG [| why: ...]``."""
        values, form = leading_options(PLATFORM, rest, "write")
        difficulty, tags = (values.one("difficulty") or "medium").lower(), list(values.all("tag"))
        form = form.strip()
        if "|" not in form:
            raise UsageError(reason="separate the prompt and the choices with |")
        question = parse_console_form(form, difficulty=difficulty, tags=tuple(tags))
        self.reply(await self.services.suggestions.write(self.context(), question))

    async def _rewards(self, args: list[str]) -> None:
        request = rewards_request(PLATFORM, args)
        self.reply(await self.services.rewards.command(self.context(), request, self))

    async def _roles(self, args: list[str]) -> None:
        values = parse(PLATFORM, args, "roles")
        typed = values.one("name")
        who = _name(typed, "@", usage(PLATFORM, "roles")) if typed is not None else self.member
        give, take = values.one("give"), values.one("take")
        if (give or take) and not self.admin:
            raise Forbidden("Only admins give or take roles (`/as NAME --admin` plays one).")
        if give:  # a teacher trying teams made from roles sets them up here
            self.roles.setdefault(who.casefold(), set()).add(give.removeprefix("@"))
        if take:
            self.roles.get(who.casefold(), set()).discard(take.removeprefix("@"))
        held = sorted(self.roles.get(who.casefold(), ()), key=str.casefold)
        shown = ", ".join(held) if held else "no roles"
        self.reply(Message(), text=f"{who}: {shown}")

    async def _write_usage(self, args: list[str]) -> None:
        raise UsageError  # handled as typed in handle_line; this is only for /help

    async def _stats(self, args: list[str]) -> None:
        values = parse(PLATFORM, args, "stats")
        if values.flag("group"):
            self.reply((await self.services.mastery.picture(self.context())).message)
            return
        typed = values.one("member")
        who = _name(typed, "@", usage(PLATFORM, "stats")) if typed is not None else None
        self.reply(await self.services.standings.stats(self.context(), who))

    async def _review(self, args: list[str]) -> None:
        who = self.member.casefold()
        word = args[0].lower() if args else ""
        if word == "remind":
            request = remind_request(PLATFORM, args[1:])
            self.reply(await self.services.reminders.command(self.context(), request))
            return
        if word == "export" and len(args) == 1:
            # The deck is saved beside the database (files_dir) and its path printed.
            self.reply(await self.services.review.export(self.context()))
            return
        shown = self._reviewing.get(who)
        if word == "fix":  # a typed card's grade, changed once
            grade = srs.parse_grade(args[1]) if len(args) == 2 else None
            if grade is None or who not in self._typed_last:
                raise UsageError(reason="after a typed card: /review fix again|hard|good|easy")
            key = self._typed_last.pop(who)
            self.reply(await self.services.review.override(self.context(), key, grade))
            return
        typed = shown is not None and shown.key is not None and _typed_card(shown.message)
        if typed and shown is not None and shown.key is not None and word not in ("", "more"):
            # A typed card: the answer, as typed, graded by the bot.
            turn = await self.services.review.answer_typed(
                self.context(), shown.key, " ".join(args), reviewed=shown.reviewed
            )
            self._typed_last[who] = shown.key
            self._show_turn(who, turn)
            return
        if len(args) > 1:
            raise UsageError
        if word in ("", "more"):
            turn = await self.services.review.next(self.context())
        elif shown is None or shown.key is None:
            raise UsageError(reason="no card is being reviewed; start with /review")
        elif word == "show":
            turn = await self.services.review.click(
                self.context(),
                shown.key,
                review_value("show", shown.reviewed, shown.card_reviews),
            )
            self.reply(turn.message)
            return
        else:
            turn = await self.services.review.grade(
                self.context(), shown.key, args[0], reviewed=shown.reviewed
            )
        self._show_turn(who, turn)

    def _show_turn(self, who: str, turn: ReviewTurn) -> None:
        if turn.feedback is not None:
            self.reply(turn.feedback)
            if any(b.value.startswith(OVERRIDE) for b in turn.feedback.buttons):
                self.note("→ /review fix again|hard|good|easy changes this grade, once")
        if turn.key is None:
            self._reviewing.pop(who, None)
            self.reply(turn.message)
            return
        self._reviewing[who] = turn
        message = turn.message
        how = review_answered_with(message)
        payload: dict[str, object] = {
            "kind": "review",
            "channel": self.channel,
            "member": self.member,
            "ephemeral": True,
            "text": message.plain_text(),
            "question_id": turn.question_id,
            "due": turn.due,
            "choices": list(message.choices),
            "answer_with": how,
        }
        self._emit(payload, f"(only {self.member} sees this) {message.plain_text()}\n→ {how}")

    async def _dms(self, args: list[str]) -> None:
        if len(args) != 1 or args[0].lower() not in ("open", "closed"):
            raise UsageError
        who = self.member.casefold()
        if args[0].lower() == "closed":
            self.closed_dms.add(who)
        else:
            self.closed_dms.discard(who)
        self.note(f"direct messages to {self.member} are {args[0].lower()}")

    async def _pack(self, args: list[str]) -> None:
        verb, values = parse_subcommand(PLATFORM, args, "pack")
        if verb == "list":
            self.reply(await self.services.packs.listing(self.context()))
        elif verb in ("enable", "disable"):
            switch = self.services.packs.enable if verb == "enable" else self.services.packs.disable
            self.reply(await switch(self.context(), values.one("name") or ""))
        else:
            await self._pack_upload(values.one("file") or "", force=values.flag("force"))

    async def _pack_upload(self, typed: str, *, force: bool = False) -> None:
        """The console's stand-in for a file uploaded in chat: a local file, by its name."""
        path, size = await asyncio.to_thread(_local_file, typed)
        self.services.packs.check_file(path.name, size)  # refused before reading, as in chat
        raw = await asyncio.to_thread(_read_local_file, path)
        self.reply(
            await self.services.packs.check_upload(self.context(), path.name, raw, force=force)
        )

    async def _run_usage(self, args: list[str]) -> None:
        raise UsageError  # /run is dispatched before argument splitting; see handle_line

    async def _run(self, rest: str, *, graph: bool = False) -> None:
        code = rest.strip()
        of: tuple[str, ...] | None = None
        if graph:  # /graph [--of NAME[,NAME] | --inputs] CODE, by the table
            values, code = leading_options(PLATFORM, code, "graph")
            names = values.one("of") or ""
            of = ("*",) if values.flag("inputs") else tuple(n for n in names.split(",") if n)
            code = code.strip()
        self._graph_of = of
        if not code:
            self._snippet = []  # the next lines are a fenced block
            return
        if code.startswith("```"):
            raise UsageError("/run CODE on one line, or /run alone then a fenced block")
        await self._run_code(code)

    async def _collect_snippet(self, line: str) -> None:
        assert self._snippet is not None
        fence = line.strip()
        if not self._snippet and not fence.startswith("```"):
            self._snippet = None
            if fence.startswith("/"):  # a command, not code: it is not swallowed
                self.note("/run cancelled: no ``` block followed it")
                await self.handle_line(line)
                return
            self.error("usage: after /run alone, start a fenced block with ``` or ```python")
            return
        if self._snippet and fence == "```":
            code = "\n".join(self._snippet[1:])
            self._snippet = None
            await self._guarded("/run", self._run_code(code))
            return
        self._snippet.append(line.rstrip("\n"))

    async def _run_code(self, code: str) -> None:
        of, self._graph_of = self._graph_of, None
        if of is None:
            self.reply(await self.services.runs.run(self.context(), code))
        else:
            self.reply(await self.services.runs.graph(self.context(), code, of))

    async def _try(self, args: list[str]) -> None:
        """``/try [#ID] [CHOICE]``: the snippet (or a choice's code) shown, then run; without
        ``#ID``, the channel's newest question."""
        values = parse(PLATFORM, args, "try")
        typed = values.one("id")
        post_id = None if typed is None else int(typed)
        choice = (values.one("choice") or "code").upper()
        form = await self.services.quiz.try_it(
            self.context(), post_id, "code" if choice == "CODE" else choice
        )
        self.reply(Message.note(f"{form.title} (to change it, paste it into /run):\n\n{form.code}"))
        self.reply(await self.services.runs.run(self.context(), form.code))

    async def _solve(self, args: list[str]) -> None:
        """``/solve [#ID] [--file PATH]``: the exercise's starter is shown, then the lines up
        to ``/end`` are the solution (or the file is, at once)."""
        request = SolveRequest.parse(PLATFORM, args)
        post_id, path = request.post, request.file
        if request.exercise is not None:  # post that exercise here first
            draft = await self.services.quiz.post_question(
                self.context(), question=request.exercise, kinds=("exercise",)
            )
            await self.services.posting.publish(draft, self)
            post_id = draft.post.id
        form = await self.services.exercises.open_editor(self.context(), post_id)
        if path is not None:
            file, _ = await asyncio.to_thread(_local_file, path)
            raw = await asyncio.to_thread(_read_local_file, file)
            try:
                code = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise BadInput(f"{file.name} is not UTF-8 text.") from None
            self.reply(await self.services.exercises.submit(self.context(), form.post_id, code))
            return
        self._solving = (form.post_id, [])
        self.reply(
            Message.note(
                f"{form.title}. Type or paste your solution, then a line with /end "
                f"(/cancel to stop). The starter code:\n\n{form.starter.rstrip()}"
            )
        )

    async def _collect_solution(self, line: str) -> None:
        assert self._solving is not None
        post_id, lines = self._solving
        word = line.strip().lower()
        if word == "/cancel":
            self._solving = None
            self.note("/solve cancelled; nothing was submitted")
            return
        if word != "/end":
            lines.append(line.rstrip("\n"))
            return
        self._solving = None
        code = "\n".join(lines) + "\n"
        await self._guarded(
            "/solve",
            self._submit_solution(post_id, code),
        )

    async def _submit_solution(self, post_id: int, code: str) -> None:
        self.reply(await self.services.exercises.submit(self.context(), post_id, code))

    async def _clock(self, args: list[str]) -> None:
        if not args:
            self.reply(Message(), text=f"the time is {await self._local_now()}")
            return
        if not isinstance(self.clock, SimulatedClock):
            raise UsageError(
                reason="the clock only moves in a console started with --clock ISO8601"
            )
        verb, rest = args[0], args[1:]
        if verb == "advance" and len(rest) == 1:
            try:
                target = check_simulated(self.clock.now() + parse_duration(rest[0]))
            except ValueError as exc:
                raise UsageError(f"/clock advance DURATION: {exc}") from None
        elif verb == "set" and len(rest) == 1:
            try:
                target = check_simulated(_parse_instant(rest[0]))
            except ValueError as exc:
                raise UsageError(f"/clock set ISO8601: {exc}") from None
        else:
            raise UsageError
        before = self.clock.now()
        if self.scheduler is not None and target > before:
            # As if the bot ran all along: everything due on the way posts, in order.
            await self.scheduler.advance(self.clock, target)
        else:
            self.clock.set(target)
        self.reply(Message(), text=f"the time is now {await self._local_now()}")
        if target < before:
            self.note(
                f"the clock went back {format_duration(before - target)}: nothing already "
                "posted or answered is undone, and schedules post again only from their next "
                "time after the latest one they handled"
            )

    async def _local_now(self) -> str:
        """The clock in the workspace's timezone, as posts show times (and in UTC beside it)."""
        now = self.clock.now()
        tz = await self.services.places.timezone(self.context())
        local = now.astimezone(ZoneInfo(tz))
        shown = f"{local:%a %Y-%m-%d %H:%M} {tz} ({now.astimezone(UTC).isoformat()})"
        days, switch = await self.services.places.days_zone(self.context())
        if switch is not None:  # said once, where the two differ
            at = switch.astimezone(ZoneInfo(tz))
            shown += f"; days still end at midnight {days} until {at:%a %d %b %H:%M} ({tz})"
        return shown

    async def _schedule(self, args: list[str]) -> None:
        if not args:
            raise UsageError
        verb = args[0].lower()
        try:
            reply = await run_schedule_command(
                self.services.schedules, self.context(), verb, args[1:]
            )
        except UsageError:
            raise
        except BadInput as exc:  # the core's "args that do not parse" (its docstring)
            usage_line = _SCHEDULE_USAGE.get(verb, f"/schedule {'|'.join(VERBS)} ...")
            raise UsageError(usage_line, reason=str(exc)) from None
        self.reply(reply.message)
        if reply.draft is not None:
            await self.services.posting.publish(reply.draft, self)

    async def _help(self, args: list[str]) -> None:
        if args:
            raise UsageError
        shown = [h for h in help_lines(PLATFORM) if self.admin or not h.admin]
        lines = [line for h in shown if not h.admin for line in _help_entry(h.usage, h.text)]
        admin = [line for h in shown if h.admin for line in _help_entry(h.usage, h.text)]
        text = "Commands:\n" + "\n".join(lines)
        if admin:
            text += "\nAdmins:\n" + "\n".join(admin)
        self.reply(Message(), text=text)

    async def _quit(self, args: list[str]) -> None:
        self.running = False

    def _print_welcome(self) -> None:
        self.out.write(
            "studybot console: you are 'me' (admin) in #general. Try /quiz, then /answer\n"
            "with the letter you pick. Then /review (your spaced repetition), /stats,\n"
            "/run print(1), /graph for an autograd graph, /as alice to play another member.\n"
            "/help lists everything; Ctrl-C clears a line, /quit or Ctrl-D leaves.\n"
        )


def _help_entry(usage: str, help: str) -> list[str]:
    """One command for /help, within :data:`HELP_WIDTH` columns: the usage, then what it
    does from column :data:`_HELP_COLUMN` (on the next line when the usage is too long).
    A long usage breaks between its words, the lines after the first indented."""
    lines = textwrap.wrap(
        usage, HELP_WIDTH, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )
    text = textwrap.wrap(help, HELP_WIDTH - _HELP_COLUMN, break_long_words=False)
    indent = " " * _HELP_COLUMN
    if len(lines) == 1 and len(lines[0]) < _HELP_COLUMN - 1:
        first = [f"{lines[0]:<{_HELP_COLUMN}}{text[0]}"]
    else:
        first = [*lines, indent + text[0]]
    return first + [indent + line for line in text[1:]]


def _name(typed: str, mark: str, usage: str) -> str:
    """A member or channel name as typed, without its ``@``/``#``; blank is a usage error.
    The console's names are its ids: one with a control character is refused here, where
    it is typed, rather than by the context of the next command."""
    name = typed.strip().removeprefix(mark).strip()
    if not name:
        raise UsageError(f"{usage}: the name can't be blank")
    problem = id_problem(name, f"the name {name!r}")
    if problem is not None:
        raise UsageError(f"{usage}: {problem}")
    return name


def _local_file(typed: str) -> tuple[Path, int]:
    path = Path(typed).expanduser()
    try:
        info = path.stat()
    except OSError as exc:
        raise UsageError(f"/pack upload PATH: cannot read {path}: {exc.strerror}") from None
    if not path.is_file():
        raise UsageError(f"/pack upload PATH: {path} is not a file")
    return path, info.st_size


def _read_local_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"/pack upload PATH: cannot read {path}: {exc.strerror}") from None


def _parse_instant(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(
            f"{text!r} has no UTC offset; write e.g. 2026-03-29T09:00:00+02:00 or ...Z"
        )
    return moment


def _options(args: list[str], names: set[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Split ``--name value`` pairs from positional words; unknown flags are usage errors."""
    options: dict[str, list[str]] = {}
    rest: list[str] = []
    words = iter(args)
    for word in words:
        if word.startswith("--"):
            if word not in names:
                raise UsageError(reason=f"unknown option {word}")
            value = next(words, None)
            if value is None:
                raise UsageError(reason=f"{word} needs a value")
            options.setdefault(word, []).append(value)
        else:
            rest.append(word)
    return options, rest


def _enable_line_editing() -> None:
    with contextlib.suppress(ImportError):  # not on every platform
        import readline  # noqa: F401 - importing it gives input() line editing and history


def _read_line(prompt: str | None) -> str | None:
    """One line from stdin, or ``None`` at end of input (Ctrl-D) or on Ctrl-C."""
    try:
        if prompt is not None:
            return input(prompt)
        line = sys.stdin.readline()
        return line if line else None
    except (EOFError, KeyboardInterrupt):
        return None


def review_answered_with(message: Message) -> str:
    """The commands that answer a /review card (not ``/answer``, which answers the channel's
    question): ``/review A|B|C``, or ``/review show`` and then the four grades."""
    if any(b.label == "Show answer" for b in message.buttons):
        return "/review show to see the back, then /review " + "|".join(GRADES)
    if _typed_card(message):
        return "type your answer with /review YOUR ANSWER"
    letters = [c for c in message.choices if len(c) == 1]
    return "answer with /review " + "|".join(letters or GRADES)


def _typed_card(message: Message) -> bool:
    """Whether a /review card is a typed one (its button opens a text box elsewhere)."""
    return any(b.value.startswith(f"{TYPE_IT}-") for b in message.buttons)


def answered_with(message: Message) -> str | None:
    """The commands that answer a posted question, from its buttons (the console has none to
    click): ``/answer #12 A|B|C``; for a flashcard, ``/show #12`` and then the grades."""
    buttons, pid = message.buttons, message.post_id
    if pid is None or not buttons:
        return None
    letters = [b.value for b in buttons if b.action is Action.ANSWER]
    parts = []
    if letters:
        parts.append(f"answer with /answer #{pid} {'|'.join(letters)}")
    if any(b.action is Action.SHOW for b in buttons):
        grades = "|".join(b.value for b in grade_buttons(Action.ANSWER, pid))
        parts.append(f"/show #{pid} to see the back, then /answer #{pid} {grades}")
    if any(b.action is Action.TYPE for b in buttons):
        parts.append(f"type your answer with /answer #{pid} YOUR ANSWER")
    if any(b.action is Action.HINT for b in buttons):
        parts.append(f"/hint #{pid} for a hint")
    tries = [b.value for b in buttons if b.action is Action.TRY]
    if tries:
        which = "|".join(v for v in tries if v != "code")
        parts.append(f"try the code with /try #{pid}" + (f" [{which}]" if which else ""))
    if any(b.action is Action.SOLVE for b in buttons):
        parts.append(f"solve with /solve #{pid}, then your code and a line /end")
    return "; ".join(parts) or None
