"""Question packs as members and admins handle them in chat.

``pack list`` shows every pack with whether it is on *in this channel*; ``pack enable NAME`` /
``pack disable NAME`` switch one pack for one channel (admins). A pack file uploaded in chat
is checked with exactly the linter's words (:func:`bot.questions.lint.validate_upload`, the
code behind ``studybot questions lint``), and installed when an admin uploaded it and it is
valid: written to ``packs_dir/<slug>.yaml`` atomically, then synced like a restart would.

Why the rules look the way they do:

* Permissions live here, not in the adapters: ``ctx.is_admin`` is the adapter's reading of
  the platform; everyone may list packs and check a file, only admins change anything.
* The switch is per channel (the ``channel_packs`` table, no row = on), because one study
  group often shares a server across several subjects. The question picker already leaves
  switched-off packs out (:meth:`bot.storage.packs.PackStore.candidates`), for ``quiz`` and
  for schedules alike.
* An upload is untrusted input from any member: its name and size are checked before it is
  read or parsed; the check runs in a child process with a memory cap and a deadline
  (:mod:`bot.questions.isolated_check`), outside any lock, so a hostile file can neither take
  the bot down nor keep other admins waiting; and packs with more than
  :data:`MAX_UPLOAD_ITEMS` items are refused. Only the install itself is serialised, and a
  check made against packs that changed meanwhile is made again.
* The installed file's name comes from the validated ``pack:`` slug, never from the upload's
  name, so no upload can write outside the packs folder or over another pack's file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from bot.core.errors import BadInput, Forbidden, NotFound, UsageError
from bot.core.messages import Attachment, Message, Section, Tone, escape_markup, neutralise
from bot.core.models import ChatContext
from bot.core.schedule_spec import decode_spec
from bot.core.snippets import RunGate
from bot.core.snippets import SnippetRunner as CodeRunner
from bot.log import get_logger
from bot.questions.check import check_items, check_targets
from bot.questions.importers import Format, import_bytes, to_yaml
from bot.questions.isolated_check import CheckFailed, check_isolated
from bot.questions.loader import LoadedPack, Problem, load_pack_text
from bot.questions.schema import Item
from bot.questions.written import (
    COMMUNITY_FILE,
    COMMUNITY_PACK,
    FormProblem,
    WrittenQuestion,
    community_pack_replacing,
    community_pack_text,
    community_pack_without,
)
from bot.sandbox.errors import SandboxUnavailable
from bot.sandbox.result import RunResult
from bot.services.audit import AuditLog, audited

if TYPE_CHECKING:
    from bot.services.catalogue import Catalogue
    from bot.services.places import Places
    from bot.services.reports import QuestionReports
    from bot.storage.community import CommunityOwners
    from bot.storage.directory import ChannelRow
    from bot.storage.packs import PackSummary, SyncReport
    from bot.storage.schedule_store import ScheduleStore

__all__ = [
    "MAX_UPLOAD_BYTES",
    "MAX_UPLOAD_ITEMS",
    "PACK_SUFFIXES",
    "SHOWN_PROBLEMS",
    "PackAdmin",
    "UploadCheck",
    "WrittenCheck",
]

log = get_logger(__name__)

MAX_UPLOAD_BYTES = 1024 * 1024
"""The largest pack file accepted from chat (the shipped 42-item pack is about 50 KiB)."""
MAX_UPLOAD_ITEMS = 500
"""Items in one pack uploaded in chat; a bigger pack belongs in the packs folder."""
CHECK_ATTEMPTS = 3
"""Checks of one upload at most, when other uploads keep changing the packs meanwhile."""
PACK_SUFFIXES = (".yaml", ".yml")
TABLE_SUFFIXES = (".csv", ".tsv")  # made into a pack first (the admin web page's upload)
MAX_NAME_CHARS = 120
SHOWN_PROBLEMS = 15
"""Problem lines shown in the chat reply; the rest go into the attached text file."""
SHOWN_LINE_CHARS = 300
ATTACHED_MAX_BYTES = 512 * 1024
"""The attached full list is capped too: chat platforms limit file sizes."""

_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")
_FORBIDDEN_SWITCH = (
    "Only admins can turn packs on or off in a channel (workspace admins, or members of the "
    "configured admin role or user group). Everyone can use `pack list`."
)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _shown_name(text: str, limit: int = 64) -> str:
    """A member-typed name, safe to echo: no pings, no code-span breakouts, not too long."""
    one_line = " ".join(text.split()).replace("`", "'")
    cut = one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
    return neutralise(cut)


def _where_label(ctx: ChatContext) -> str:
    """``#general``, as prose: a channel name is platform text, so Markdown in it is escaped."""
    return (
        f"#{escape_markup(_shown_name(ctx.channel_name))}" if ctx.channel_name else "this channel"
    )


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MiB".replace(".0 ", " ")
    if count >= 1024:
        return f"{count / 1024:.0f} KiB"
    return f"{count} bytes"


def _line(problem: Problem) -> int:
    return problem.line


def check_upload_name(filename: str, size: int | None, max_bytes: int) -> str:
    """The upload's name if it may be read at all; :class:`BadInput` says why not.

    Checked before a byte is downloaded or parsed: a plain file name (no folders, no hidden
    files, printable), ending in ``.yaml`` or ``.yml``, and not over ``max_bytes``.
    """
    name = filename.strip()
    if (
        not name
        or len(name) > MAX_NAME_CHARS
        or any(c in name for c in "/\\")
        or name.startswith(".")
        or not name.isprintable()
    ):
        raise BadInput(
            f"`{_shown_name(filename) or '(no name)'}` is not a plain file name; upload the pack "
            "as NAME.yaml."
        )
    if PurePath(name).suffix.lower() not in PACK_SUFFIXES:
        raise BadInput(
            f"`{_shown_name(name)}` is not a pack file: packs are YAML files whose names end in "
            "`.yaml` or `.yml`."
        )
    if size is not None and size > max_bytes:
        raise BadInput(
            f"`{_shown_name(name)}` is {_size(size)}; a pack file uploaded in chat can be at "
            f"most {_size(max_bytes)}."
        )
    return name


@dataclass(frozen=True, slots=True)
class WrittenCheck:
    """A question written in chat, checked: the private report, the id it has (or would have)
    in the ``community`` pack, whether it is valid, and whether it was added."""

    report: Message
    item_id: str
    valid: bool
    added: bool


@dataclass(frozen=True, slots=True)
class UploadCheck:
    """What the linter says about an upload: the pack if it is valid, and every problem."""

    name: str
    pack: LoadedPack | None
    problems: tuple[Problem, ...]
    # What running the code items in the sandbox said (errors: they disagree), and a note when
    # they could not be run at all.
    ran: tuple[Problem, ...] = ()
    not_run: str = ""

    @property
    def disagreements(self) -> list[Problem]:
        return list(self.ran)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity != "error"]


def _write_atomically(target: Path, raw: bytes) -> None:
    """Write ``raw`` to ``target`` via a temporary file in the same folder and a rename.

    A reader (or a crash) sees the old file or the new one, never half of one. The temporary
    name starts with a dot and ends in ``.tmp``, so the pack loader never picks it up.
    """
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(0o644)
        tmp.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where possible
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return a.resolve() == b.resolve()


class _Background:
    """The sandbox as pack checks use it: every run in the background, after members' runs."""

    def __init__(self, runner: CodeRunner) -> None:
        self._runner = runner

    @property
    def available(self) -> bool:
        return self._runner.available

    @property
    def unavailable_reason(self) -> str | None:
        return self._runner.unavailable_reason

    async def run(
        self,
        code: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109
        graph: tuple[str, ...] | None = None,
        background: bool = True,
    ) -> RunResult:
        return await self._runner.run(code, timeout=timeout, graph=graph, background=True)


class PackAdmin:
    """``pack list|enable|disable`` and pack uploads (one of the services in the bundle)."""

    audit: AuditLog | None = None  # set by build_services: changes are recorded there

    def __init__(
        self,
        catalogue: Catalogue,
        packs_dir: Path | None,
        *,
        max_bytes: int = MAX_UPLOAD_BYTES,
        max_items: int = MAX_UPLOAD_ITEMS,
        places: Places,
        schedules: ScheduleStore,
        runner: CodeRunner | None = None,
        runner_starting: asyncio.Future[None] | None = None,
        code_timeout: float = 10.0,
        gate: RunGate | None = None,
        reports: QuestionReports | None = None,
        owners: CommunityOwners | None = None,
    ) -> None:
        self._owners = owners  # which workspace wrote each community question
        self._reports = reports  # the open reports of wrong questions, counted per pack
        self._runner = runner
        # An upload's code checks are runs of its uploader's: they pass the same gate as
        # `/run` (one at a time, the rate per minute), go to the sandbox as background runs
        # (after members' `/run`s), and all members' uploads together hold one slot at most.
        self._gate = gate
        self._member_checks = asyncio.Semaphore(1)
        self._runner_starting = runner_starting
        self._code_timeout = code_timeout
        self._catalogue = catalogue
        self._places = places
        self._schedules = schedules
        self.packs_dir = packs_dir
        self.max_bytes = max_bytes
        self.max_items = max_items
        self._loaded: list[LoadedPack] = []
        # Installs one at a time. Checks run outside it, and a check is only used when the
        # packs it compared against are still the ones the install would join.
        self._lock = asyncio.Lock()

    async def sync(self, loaded: Sequence[LoadedPack]) -> SyncReport:
        """Store the packs loaded at start (new, updated, retired) and remember them: uploads
        are compared against them and installed beside them."""
        report = await self._catalogue.sync(loaded)
        self.remember(loaded)
        return report

    def remember(self, loaded: Sequence[LoadedPack]) -> None:
        """The packs just synced: what uploads are compared against and installed beside."""
        self._loaded = list(loaded)

    @property
    def loaded(self) -> tuple[LoadedPack, ...]:
        return tuple(self._loaded)

    async def _channel(self, ctx: ChatContext) -> ChannelRow:
        return (await self._places.channel(ctx))[1]

    # --- list --------------------------------------------------------------------------------

    async def states(self, ctx: ChatContext) -> list[tuple[PackSummary, bool]]:
        """Every live pack and whether it is on in the caller's channel."""
        summaries = await self._catalogue.summaries()
        off = await self._catalogue.disabled_in((await self._channel(ctx)).id)
        return [(summary, summary.slug not in off) for summary in summaries]

    async def listing(self, ctx: ChatContext | None = None) -> Message:
        """The packs with their question counts and, given a channel, whether each is on there
        (and how many open reports of wrong questions each has)."""
        if ctx is None:
            summaries = await self._catalogue.summaries()
            if not summaries:
                return Message(sections=(Section(body="No packs are loaded."),))
            body = "\n".join(
                f"**{s.slug}** — {s.title} ({_plural(s.questions, 'question')})" for s in summaries
            )
            return Message(title="📚 Question packs", sections=(Section(body=body),))
        states = await self.states(ctx)
        if not states:
            return Message(sections=(Section(body="No packs are loaded."),), ephemeral=True)
        reports: Mapping[str, int] = (
            {} if self._reports is None else await self._reports.counts_by_pack(ctx)
        )
        lines = [
            f"**{s.slug}** — {s.title} ({_plural(s.questions, 'question')}) · "
            + ("on" if on else "**off** here")
            + (f" · 🚩 {_plural(reports[s.slug], 'open report')}" if reports.get(s.slug) else "")
            for s, on in states
        ]
        sections = [Section(body="\n".join(lines))]
        if not any(on for _, on in states):
            sections.append(
                Section(
                    body=f"Every pack is off in this channel, so {ctx.command('quiz')} finds "
                    "nothing here until an admin turns one on with "
                    f"{ctx.command('pack enable NAME')}."
                )
            )
        footer = None
        if ctx.is_admin:
            footer = (
                f"Admins: {ctx.command('pack enable NAME')} / {ctx.command('pack disable NAME')} "
                "switch a pack in this channel only; upload a .yaml pack file to add or update a "
                "pack."
            )
        return Message(
            title=f"📚 Question packs in {_where_label(ctx)}",
            sections=tuple(sections),
            footer=footer,
            ephemeral=True,
        )

    # --- enable / disable --------------------------------------------------------------------

    async def enable(self, ctx: ChatContext, name: str) -> Message:
        """``pack enable NAME``: turn a pack back on in the caller's channel (admins)."""
        return await self.set_enabled(ctx, name, True)

    async def disable(self, ctx: ChatContext, name: str) -> Message:
        """``pack disable NAME``: turn a pack off in the caller's channel only (admins); quiz
        and schedules there skip it."""
        return await self.set_enabled(ctx, name, False)

    @audited("pack enable/disable")
    async def set_enabled(self, ctx: ChatContext, name: str, enabled: bool) -> Message:
        """Switch one pack on or off in the caller's channel (admins only)."""
        verb = "enable" if enabled else "disable"
        if not ctx.is_admin:
            raise Forbidden(_FORBIDDEN_SWITCH)
        slug = name.strip().lower()
        if not slug:
            raise UsageError(
                f"{ctx.command(f'pack {verb} NAME')} ({ctx.command('pack list')} shows the names)"
            )
        channel = await self._channel(ctx)
        was_enabled = await self._catalogue.set_enabled(channel.id, slug, enabled)
        if was_enabled is None:
            close = self._catalogue.closest(slug)
            hint = f" Did you mean `{close}`?" if close else f" See {ctx.command('pack list')}."
            raise NotFound(f"There is no pack called `{_shown_name(name)}`.{hint}")
        where = _where_label(ctx)
        state = "on" if enabled else "off"
        if was_enabled == enabled:
            return Message.note(f"**{slug}** is already {state} in {where}.")
        log.info("pack %s turned %s in channel %d by %s", slug, state, channel.id, ctx.member)
        if enabled:
            return Message.note(
                f"✅ **{slug}** is on in {where} again: {ctx.command('quiz')} and schedules here "
                "can pick its questions.",
                tone=Tone.SUCCESS,
            )
        lines = [
            f"⛔ **{slug}** is off in {where}: {ctx.command('quiz')} and schedules here will not "
            "pick its questions. Other channels are not affected; "
            f"{ctx.command(f'pack enable {slug}')} turns it back on."
        ]
        states = await self.states(ctx)
        if not any(on for _, on in states):
            lines.append(
                f"That was the last pack on here: {ctx.command('quiz')} will find nothing in "
                "this channel until a pack is turned on again."
            )
        schedules = await self._schedules_using(channel.id, slug)
        if schedules:
            ids = ", ".join(f"#{i}" for i in schedules)
            lines.append(
                f"Schedule {ids} here asks for this pack, so it will find nothing to post until "
                "the pack is on again."
            )
        tone = Tone.WARNING if len(lines) > 1 else Tone.SUCCESS
        return Message.note("\n".join(lines), tone=tone)

    async def _schedules_using(self, channel_id: int, slug: str) -> list[int]:
        found = []
        for row in await self._schedules.in_channel(channel_id):
            try:
                spec = decode_spec(row.spec)
            except ValueError:  # ScheduleError is a ValueError; unreadable specs are listed
                continue
            if spec.pack == slug:
                found.append(row.id)
        return found

    # --- uploads -----------------------------------------------------------------------------

    def check_file(self, filename: str, size: int | None) -> str:
        """Refuse an upload by its name and size before anyone downloads or parses it."""
        return check_upload_name(filename, size, self.max_bytes)

    async def check_upload(
        self,
        ctx: ChatContext,
        filename: str,
        raw: bytes,
        *,
        force: bool = False,
        written: str | None = None,
    ) -> Message:
        """Lint an uploaded pack file privately; install it if it is valid and ``ctx`` is an admin.

        A valid pack's code items are also run in the sandbox, as ``questions check`` runs
        them; one that disagrees with its expectation (or never finishes) keeps the pack out
        unless an admin installs it anyway (``force``).

        The reply lists every problem as ``file:line: field: reason`` under the upload's name,
        errors and warnings apart, at most :data:`SHOWN_PROBLEMS` lines (the full list is then
        attached as a text file), and says what happened to the file. ``written`` is the id
        of a question written in chat (``/write``): the verdict then speaks of that question.
        """
        report, _, added = await self._checked_upload(ctx, filename, raw, force, written)
        if added and self.audit is not None:
            await self.audit.record(ctx, "pack upload", f"{filename}: {report.title or ''}")
        return report

    async def check_table_upload(self, ctx: ChatContext, filename: str, raw: bytes) -> Message:
        """A CSV or TSV (a Quizlet export, a spreadsheet) made into a pack, as ``studybot
        questions import`` makes it, then checked and installed like a YAML upload: rows that
        could not become questions are listed at ``file:line`` above the pack's own report."""
        name = filename.strip()
        if not name.lower().endswith(TABLE_SUFFIXES) or "/" in name or name.startswith("."):
            raise BadInput(f"`{name[:60]}` is not a .csv or .tsv file.")
        if len(raw) > self.max_bytes:
            raise BadInput(f"`{name}` is over the {self.max_bytes // 1024} KiB limit for a pack.")
        form = Format.TSV if name.lower().endswith(".tsv") else Format.CSV
        result = await asyncio.to_thread(import_bytes, raw, name, format=form)
        rows = [f"{name}:{p.line}: {p.message}" for p in sorted(result.problems, key=_line)]
        if not result.items:
            shown = "\n".join(rows[:SHOWN_PROBLEMS]) or "the file has no rows"
            raise BadInput(f"{name}: no question could be made of it:\n{shown}")
        yaml_name = f"{Path(name).stem}.yaml"
        report = await self.check_upload(ctx, yaml_name, to_yaml(result).encode())
        if not rows:
            return report
        heading = f"From {name}: {len(rows)} row(s) to look at"
        body = "\n".join(rows[:SHOWN_PROBLEMS])
        return replace(report, sections=(Section(heading=heading, body=body), *report.sections))

    async def _checked_upload(
        self, ctx: ChatContext, filename: str, raw: bytes, force: bool, written: str | None
    ) -> tuple[Message, UploadCheck, bool]:
        """:meth:`check_upload`'s reply, the check it reports, and whether it was installed."""
        name = self.check_file(filename, len(raw))
        for _ in range(CHECK_ATTEMPTS):
            snapshot = self._loaded
            checked = await self._run_code(ctx, await self._check(name, raw, snapshot))
            async with self._lock:
                if self._loaded is snapshot:
                    report, added = await self._answer(ctx, name, raw, checked, force, written)
                    return report, checked, added
        async with self._lock:  # still changing: check once more, holding the lock this time
            checked = await self._run_code(ctx, await self._check(name, raw, self._loaded))
            report, added = await self._answer(ctx, name, raw, checked, force, written)
            return report, checked, added

    async def community(self, ctx: ChatContext) -> tuple[Item, ...]:
        """The ``community`` questions the caller's workspace wrote (data; the admin page
        lists them). Another workspace's are not shown: they are not this one's to change."""
        if self._owners is None:
            return ()
        workspace = await self._places.workspace(ctx)
        mine = await self._owners.owned_by(workspace.id)
        for loaded in self._loaded:
            if loaded.pack.pack == COMMUNITY_PACK:
                return tuple(item for item in loaded.pack.items if item.id in mine)
        return ()

    async def _check_owner(self, ctx: ChatContext, item_id: str) -> None:
        """Refuse a change to a community question this workspace did not write."""
        owner = None if self._owners is None else await self._owners.owner(item_id)
        workspace = await self._places.workspace(ctx)
        if owner == workspace.id:
            return
        if owner is None and not any(item.id == item_id for item in self._community_items()):
            raise NotFound(f"`{item_id}` is not a question of the community pack.")
        raise Forbidden(
            f"`{item_id}` was written in another workspace: only that workspace's admins can "
            "change or retire it."
            if owner is not None
            else f"`{item_id}` has no workspace on record (it was written before the bot kept "
            "one), so no workspace can change it here; the bot's operator can edit "
            f"{COMMUNITY_FILE}."
        )

    def _community_items(self) -> tuple[Item, ...]:
        for loaded in self._loaded:
            if loaded.pack.pack == COMMUNITY_PACK:
                return tuple(loaded.pack.items)
        return ()

    @audited("question retire")
    async def retire_community(self, ctx: ChatContext, item_id: str) -> Message:
        """Take a community question out (admins): it is never posted again; its posts,
        answers and review cards stay."""
        return await self._rewrite_community(ctx, item_id, None)

    @audited("question edit")
    async def edit_community(
        self, ctx: ChatContext, item_id: str, question: WrittenQuestion
    ) -> Message:
        """Replace a community question (admins), checked like ``/write``: the linter, then its
        code in the sandbox; it keeps its id, so its history and review cards stay with it."""
        return await self._rewrite_community(ctx, item_id, question)

    async def _rewrite_community(
        self, ctx: ChatContext, item_id: str, question: WrittenQuestion | None
    ) -> Message:
        if not ctx.is_admin:
            raise Forbidden("Only admins change the community pack.")
        if self.packs_dir is None:
            raise BadInput("This bot has no packs folder, so its packs cannot change here.")
        await self._check_owner(ctx, item_id)
        path = Path(self.packs_dir) / COMMUNITY_FILE
        current = await asyncio.to_thread(_read_if_exists, path)
        if current is None:
            raise NotFound("There is no community pack yet: /write puts questions there.")
        try:
            if question is None:
                raw = community_pack_without(current, item_id)
            else:
                raw = community_pack_replacing(current, item_id, question)
        except FormProblem as exc:
            raise BadInput(f"{exc.field}: {exc.reason}.") from None
        report, _, _ = await self._checked_upload(ctx, COMMUNITY_FILE, raw, False, item_id)
        return report

    async def write_question(self, ctx: ChatContext, question: WrittenQuestion) -> Message:
        """``/write``: the question as a new item of the ``community`` pack, checked like an
        uploaded pack (linter, then its code in the sandbox) and added if ``ctx`` is an admin."""
        return (await self.check_written(ctx, question)).report

    async def check_written(self, ctx: ChatContext, question: WrittenQuestion) -> WrittenCheck:
        """:meth:`write_question` with its verdict as data: whether the question is valid (the
        linter and the sandbox agree with it) and whether it was added to ``community``."""
        current = None
        if self.packs_dir is not None:
            path = Path(self.packs_dir) / COMMUNITY_FILE
            current = await asyncio.to_thread(_read_if_exists, path)
        try:
            raw, item_id = community_pack_text(current, question)
        except FormProblem as exc:
            raise BadInput(f"{exc.field}: {exc.reason}.") from None
        report, checked, added = await self._checked_upload(
            ctx, COMMUNITY_FILE, raw, False, item_id
        )
        valid = checked.pack is not None and not checked.ran
        if added and self._owners is not None:
            await self._owners.claim(item_id, (await self._places.workspace(ctx)).id)
        if added and self.audit is not None:
            await self.audit.record(ctx, "question add", f"{item_id} into {COMMUNITY_FILE}")
        if not ctx.is_admin:
            return WrittenCheck(_member_report(checked, item_id, valid), item_id, valid, added)
        return WrittenCheck(
            replace(report, title=f"✍️ `{item_id}` — {report.title}"), item_id, valid, added
        )

    async def _run_code(self, ctx: ChatContext, checked: UploadCheck) -> UploadCheck:
        """Run a valid pack's code items in the sandbox; their disagreements, as problems.

        In the background (members' `/run`s first); an admin's four at a time, and every
        member's upload one at a time, all members together."""
        if checked.pack is None:
            return checked
        targets = check_targets([replace(checked.pack, path=checked.name)])
        if not targets:
            return checked
        runner = self._runner
        if self._runner_starting is not None:
            await self._runner_starting
        if runner is None or not runner.available:
            why = "the sandbox is not available on this bot"
            return replace(checked, not_run=why)
        key = (ctx.platform, ctx.workspace, ctx.member)
        try:
            checks = _Background(runner)
            with self._gate.admit(key) if self._gate is not None else contextlib.nullcontext():
                if ctx.is_admin:
                    rows = await check_items(targets, checks, timeout=self._code_timeout, jobs=4)
                else:
                    async with self._member_checks:
                        rows = await check_items(
                            targets, checks, timeout=self._code_timeout, jobs=1
                        )
        except SandboxUnavailable as exc:
            return replace(checked, not_run=f"the sandbox failed ({exc.reason})")
        ran = tuple(
            Problem(
                checked.name,
                row.target.line,
                row.item_id,
                (f"check backing {row.target.claim}: " if row.target.claim else "")
                + row.reason
                + (f"; {row.detail}" if row.detail else ""),
            )
            for row in rows
            if not row.ok
        )
        return replace(checked, ran=ran)

    async def _check(self, name: str, raw: bytes, packs: Sequence[LoadedPack]) -> UploadCheck:
        """The linter's verdict on the upload against ``packs``, from a capped child process."""
        existing = [replace(p, path=PurePath(p.path).name) for p in packs]
        try:
            verdict = await check_isolated(raw, name, existing, max_items=self.max_items)
        except CheckFailed as exc:
            log.warning("pack upload %r: check failed: %s; %s", name, exc, exc.detail)
            raise BadInput(f"{exc.message[0].upper()}{exc.message[1:]}.") from None
        if verdict.too_many is not None:
            raise BadInput(
                f"`{_shown_name(name)}` has {verdict.too_many} questions; a pack uploaded in "
                f"chat can have at most {self.max_items}. Split it into smaller packs, or ask "
                "an operator to add it to the packs folder."
            )
        pack = None
        if verdict.valid:
            pack, _ = await asyncio.to_thread(load_pack_text, raw, name)
        return UploadCheck(name, pack, verdict.problems)

    async def _answer(
        self,
        ctx: ChatContext,
        name: str,
        raw: bytes,
        checked: UploadCheck,
        force: bool,
        written: str | None,
    ) -> tuple[Message, bool]:
        """Under the lock: report the check, and install a valid pack an admin uploaded (and
        whether it was installed)."""
        log.info(
            "pack upload %r by %s in %s/%s: %d error(s), %d warning(s)",
            name,
            ctx.member,
            ctx.platform,
            ctx.workspace,
            len(checked.errors),
            len(checked.warnings),
        )
        if written is not None and (checked.pack is None or checked.ran or not ctx.is_admin):
            failed = checked.pack is None or bool(checked.ran)
            tone = Tone.ERROR if failed else Tone.SUCCESS
            return _report(checked, _written_verdict(checked), tone), False
        added = False
        if checked.pack is None:
            verdict = (
                "Not installed: fix the errors and upload the file again."
                if ctx.is_admin
                else "Fix the errors and upload the file again to check it."
            )
            tone = Tone.ERROR
        elif checked.ran and not (ctx.is_admin and force):
            count = _plural(len(checked.ran), "code item")
            verdict = (
                f"Not installed: {count} did not do what the pack says when run in the "
                "sandbox (listed above). Fix them, or install anyway with `--force`."
                if ctx.is_admin
                else f"{count} did not do what the pack says when run in the sandbox."
            )
            tone = Tone.ERROR
        elif not ctx.is_admin:
            verdict = "This pack is valid. Ask an admin to upload it to install it."
            tone = Tone.SUCCESS
        else:
            verdict, tone = await self._install(ctx, checked.pack, raw, name)
            added = tone is Tone.SUCCESS
            if checked.ran and tone is Tone.SUCCESS:
                verdict += " Installed anyway (`--force`), with the disagreements above."
                tone = Tone.WARNING
        if checked.not_run and checked.pack is not None:
            verdict += f" Its code items were not run: {checked.not_run}."
        return _report(checked, verdict, tone), added

    async def _install(
        self, ctx: ChatContext, pack: LoadedPack, raw: bytes, name: str
    ) -> tuple[str, Tone]:
        """Write the pack as ``<slug>.yaml`` in the packs folder and sync; say what changed."""
        if self.packs_dir is None:
            return "Not installed: installing packs from chat is off on this bot.", Tone.WARNING
        slug = pack.pack.pack
        target = Path(self.packs_dir) / f"{slug}.yaml"
        current = next((p for p in self._loaded if p.pack.pack == slug), None)
        if current is not None and not _same_file(Path(current.path), target):
            return (
                f"Not installed: pack `{slug}` lives in `{PurePath(current.path).name}` in "
                f"the packs folder, and packs uploaded in chat are installed as "
                f"`{slug}.yaml`. Ask an operator to rename that file to `{slug}.yaml` (or "
                "to edit it there).",
                Tone.WARNING,
            )
        clash = next(
            (p for p in self._loaded if PurePath(p.path).name == name and name != target.name),
            None,
        )
        if clash is not None:
            return (
                f"Not installed: `{_shown_name(name)}` is the file of pack "
                f"`{clash.pack.pack}`, but this file is pack `{slug}`, which would be "
                f"installed as `{slug}.yaml` beside it. Rename the upload to `{slug}.yaml` "
                f"to add a new pack, or set `pack: {clash.pack.pack}` to replace that one.",
                Tone.WARNING,
            )
        try:
            await asyncio.to_thread(_write_atomically, target, raw)
        except OSError as exc:
            log.warning("cannot install pack %s into %s: %s", slug, target.parent, exc)
            return (
                "Not installed: the packs folder cannot be written on this host "
                f"({exc.strerror or type(exc).__name__}). An operator can copy the file into "
                "the packs folder (`STUDYBOT_PACKS`) instead.",
                Tone.WARNING,
            )
        installed = replace(pack, path=str(target))
        packs = [p for p in self._loaded if p.pack.pack != slug]
        packs.append(installed)
        packs.sort(key=lambda p: PurePath(p.path).name)
        report = await self._catalogue.sync(packs)
        self.remember(packs)
        log.info("pack %s installed from chat as %s", slug, target)
        return _installed_text(ctx, installed, report, new=current is None), Tone.SUCCESS


def _installed_text(ctx: ChatContext, pack: LoadedPack, report: SyncReport, *, new: bool) -> str:
    slug, count = pack.pack.pack, len(pack.pack.items)
    if new:
        return (
            f"✅ Installed **{slug}** — {pack.pack.title} ({_plural(count, 'question')}) as "
            f"`{slug}.yaml`. It is on in every channel: try {ctx.command(f'quiz {slug}')}; "
            f"{ctx.command(f'pack disable {slug}')} turns it off in one channel."
        )
    if not (report.added or report.updated or report.retired):
        return f"**{slug}** is already installed exactly like this; nothing changed."
    unchanged = count - report.added - report.updated
    return (
        f"✅ Updated **{slug}**: {report.added} new, {report.updated} changed, "
        f"{report.retired} retired and {unchanged} unchanged questions. Questions already asked "
        "keep their history."
    )


def _cut_line(line: str) -> str:
    return line if len(line) <= SHOWN_LINE_CHARS else line[: SHOWN_LINE_CHARS - 1] + "…"


def _written_verdict(checked: UploadCheck) -> str:
    """What happened to a question written in chat that was not added."""
    if checked.pack is None:
        return "Not added: fix what is listed above and write the question again."
    if checked.ran:
        return (
            "Not added: its code did not do what you said when run in the sandbox (above). "
            "Fix the code or the expected output and write it again."
        )
    return "Your question is valid."  # a member's: the suggestion queue says what follows


def _member_report(checked: UploadCheck, item_id: str, valid: bool) -> Message:
    """A member's ``/write`` reply: only what they can fix in their own question, in the
    form's words (``choices: two choices have the same text``). The pack file's lines, the
    linter's warnings and the other questions of ``community.yaml`` are the reviewing
    admin's (they see them when they approve it)."""
    own = [
        p
        for p in (*checked.errors, *checked.disagreements)
        if p.field == item_id or p.field.startswith(f"{item_id}.")
    ]
    lines = []
    for problem in own:
        field = problem.field.removeprefix(item_id).lstrip(".")
        lines.append(f"• {field}: {problem.message}" if field else f"• {problem.message}")
    if valid:
        return Message(
            title="✍️ Your question is valid",
            sections=(Section(body=_written_verdict(checked)),),
            ephemeral=True,
            tone=Tone.SUCCESS,
        )
    if not lines:  # the file around it failed, not the question: nothing for them to fix
        lines = ["• the community pack could not take a question just now; try again later"]
    return Message(
        title="✍️ Your question needs a fix",
        sections=(
            Section(heading="What to fix", body=neutralise("\n".join(lines))),
            Section(body=_written_verdict(checked)),
        ),
        ephemeral=True,
        tone=Tone.WARNING,
    )


def _report(checked: UploadCheck, verdict: str, tone: Tone) -> Message:
    """The private reply to an upload: a headline, the problems, what happened to the file."""
    errors, warnings = checked.errors, checked.warnings
    name = _shown_name(checked.name, MAX_NAME_CHARS)
    if checked.pack is None:
        title = f"❌ {name}: {_plural(len(errors), 'error')}"
        if warnings:
            title += f", {_plural(len(warnings), 'warning')}"
    else:
        pack = checked.pack.pack
        clean = "no lint problems" if checked.ran else "no problems"
        found = f"{_plural(len(warnings), 'warning')}" if warnings else clean
        title = f"✅ {name}: pack {pack.pack}, {_plural(len(pack.items), 'question')}, {found}"
    sections: list[Section] = []
    room = SHOWN_PROBLEMS
    ran = checked.disagreements
    if ran:
        title = title.replace("✅", "⚠️", 1) + f", {_plural(len(ran), 'code disagreement')}"
    for heading, group in (
        ("Errors", errors),
        ("Run in the sandbox", ran),
        ("Warnings", warnings),
    ):
        shown = group[:room]
        room -= len(shown)
        if shown:
            text = "\n".join(_cut_line(str(p)) for p in shown)
            sections.append(
                Section(heading=f"{heading} ({len(group)})", code=neutralise(text), language="text")
            )
    attachments: tuple[Attachment, ...] = ()
    hidden = len(checked.problems) - SHOWN_PROBLEMS
    if hidden > 0:
        attachment = _full_list(checked)
        attachments = (attachment,)
        sections.append(
            Section(
                body=f"… and {hidden} more not shown: all {len(checked.problems)} are in the "
                f"attached `{attachment.filename}`."
            )
        )
    sections.append(Section(body=verdict))
    return Message(
        title=title, sections=tuple(sections), ephemeral=True, tone=tone, attachments=attachments
    )


def _full_list(checked: UploadCheck) -> Attachment:
    lines = [str(p) for p in (*checked.errors, *checked.warnings)]
    out: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        size = len(line.encode("utf-8")) + 1
        if used + size > ATTACHED_MAX_BYTES:
            out.append(f"… {len(lines) - index} more problems not listed (the list is too long).")
            break
        out.append(line)
        used += size
    stem = _UNSAFE_FILENAME.sub("_", PurePath(checked.name).stem) or "pack"
    return Attachment(
        f"{stem}-problems.txt",
        ("\n".join(out) + "\n").encode("utf-8"),
        f"every problem in {checked.name}",
    )


def _read_if_exists(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
