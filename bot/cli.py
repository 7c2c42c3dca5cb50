"""The ``studybot`` command line (typer).

Commands parse their arguments and hand over to the wiring object (:class:`bot.app.Wiring`)
that :func:`main` puts in ``ctx.obj``; nothing here builds storage, services or adapters itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import re
import signal
import sqlite3
import sys
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bot.app import Wiring
from bot.backups import backup_target
from bot.core.startup import StartupError
from bot.log import get_logger, logs_as_json
from bot.questions.importers import Format
from bot.questions.loader import load_packs
from bot.sandbox.client.cli import sandbox_app, snippet_app
from bot.settings import Platform, Settings
from bot.text import shown_path

if TYPE_CHECKING:
    from bot.services.score_import import ScoreImports
    from bot.storage.database import Database

__all__ = ["app", "main"]

log = get_logger("bot")

HELP_OPTIONS = ["-h", "--help"]

app = typer.Typer(
    name="studybot",
    help="An async study bot for Discord and Slack. Run `studybot console` to try it locally.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": HELP_OPTIONS},
)
questions_app = typer.Typer(
    help="Question packs: lint, list, check, import and export (Anki too).", no_args_is_help=True
)
db_app = typer.Typer(
    help="The database: backup and restore (with the packs), integrity check, migration.",
    no_args_is_help=True,
)
app.add_typer(questions_app, name="questions")
app.add_typer(snippet_app, name="snippet")
app.add_typer(sandbox_app, name="sandbox")
review_app = typer.Typer(
    help="Spaced repetition: fit FSRS parameters, set the retention aimed for.",
    no_args_is_help=True,
)
app.add_typer(db_app, name="db")
scores_app = typer.Typer(
    help="Scores: export them for a spreadsheet, import points from another bot.",
    no_args_is_help=True,
)
app.add_typer(scores_app, name="scores")
stats_app = typer.Typer(
    help="Statistics for teachers: the gradebook and each question's figures, as CSV.",
    no_args_is_help=True,
)
app.add_typer(stats_app, name="stats")
app.add_typer(review_app, name="review")

DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="SQLite file (default: STUDYBOT_DB or ./studybot.sqlite3)."),
]


def _platform_id(value: str | None) -> str | None:
    """Every ``--workspace`` option's check, where the value enters: an id with NUL or another
    control character is refused with the character named (PostgreSQL refuses NUL in a
    query's value, and such an id names no workspace anyway)."""
    from bot.text import id_problem

    problem = None if value is None else id_problem(value, repr(value))
    if problem is not None:
        raise typer.BadParameter(problem)
    return value


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"studybot {metadata.version('studybot')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print the version and exit.",
            metavar="",  # a flag: typer would show it as taking a <bool>
        ),
    ] = False,
) -> None:
    """An async study bot for Discord and Slack. Run `studybot console` to try it locally."""


def _wiring(ctx: typer.Context) -> Wiring:
    wiring: Wiring = ctx.obj
    return wiring


def _packs_dir(ctx: typer.Context, path: Path | None) -> Path:
    """The packs folder, as messages should name it: relative to where the user stands."""
    return Path(shown_path(path if path is not None else _wiring(ctx).settings().packs_dir))


@app.command()
def run(
    ctx: typer.Context,
    platform: Annotated[
        Platform | None,
        typer.Option("--platform", help="console, discord or slack (default: STUDYBOT_PLATFORM)."),
    ] = None,
    health_port: Annotated[
        int | None, typer.Option("--health-port", help="Serve /healthz and /metrics here.")
    ] = None,
    http: Annotated[
        int | None,
        typer.Option("--http", help="Slack only: serve HTTP events on this port (/slack/events)."),
    ] = None,
    shards: Annotated[
        str | None,
        typer.Option(
            "--shards",
            metavar="<range>",
            help="Discord only: the shards this process runs, e.g. 0-3 or 0,2,5 "
            "(default: DISCORD_SHARDS; none: every server).",
        ),
    ] = None,
    shard_count: Annotated[
        int | None,
        typer.Option(
            "--shard-count",
            min=1,
            help="Discord only: the number of shards across all processes, the same in each "
            "(default: DISCORD_SHARD_COUNT).",
        ),
    ] = None,
    db: DbOption = None,
    web_port: Annotated[
        int | None,
        typer.Option(
            "--web-port",
            min=0,
            max=65535,
            help="Serve the admin web page in this process too, on this port "
            "(default: WEB_PORT; unset: no page).",
        ),
    ] = None,
    web_host: Annotated[
        str | None,
        typer.Option(
            "--web-host",
            help="Where the page listens (default: WEB_HOST, else 127.0.0.1); beyond loopback "
            "only with Discord or Slack sign-in configured (behind a reverse proxy).",
        ),
    ] = None,
) -> None:
    """Run the bot on the configured platform (the console when no platform is set).

    The console needs a terminal: without one (a container, a service) `run` refuses instead
    of reading nothing and exiting, and says which platform to set. Scripts pipe commands to
    `studybot console`.

    On Discord, --shards and --shard-count split the servers over several processes: start one
    process per shard range, all with the same count (e.g. --shards 0-3 --shard-count 8 and
    --shards 4-7 --shard-count 8). Each then answers only its own servers.
    """
    wiring = _wiring(ctx)
    settings = wiring.settings(
        platform=platform,
        health_port=health_port,
        discord_shards=shards,
        discord_shard_count=shard_count,
        db_path=db,
    )
    _check_shards(settings, shards=shards, shard_count=shard_count)
    if settings.platform is Platform.CONSOLE and not sys.stdin.isatty():
        raise StartupError(console_without_terminal(platform_source(wiring, platform)))
    wiring.configure_logging(settings, quiet=settings.platform is Platform.CONSOLE)
    asyncio.run(
        wiring.serve(
            settings,
            http_port=http,
            web_port=web_port if web_port is not None else settings.web_port,
            web_host=web_host or settings.web_host,
        )
    )


def platform_source(wiring: Wiring, option: Platform | None) -> str:
    """Where the platform came from, for a message about it: the option, the setting, or
    neither (the default, console)."""
    if option is not None:
        return f"--platform {option.value}"
    if "platform" in wiring.settings().model_fields_set:
        return f"STUDYBOT_PLATFORM={wiring.settings().platform.value}"
    return "STUDYBOT_PLATFORM is not set"


def console_without_terminal(source: str) -> str:
    """Why `run` refuses the console with no terminal: one line, what to set instead.

    Reading an empty stdin would end the console at once with exit 0, which a container's
    restart policy turns into a silent restart loop.
    """
    return (
        f"the console platform needs a terminal, and stdin is not one ({source}); "
        "on a server set STUDYBOT_PLATFORM=discord or STUDYBOT_PLATFORM=slack "
        "(or run --platform ...); to script the console, pipe commands to `studybot console`"
    )


def _check_shards(settings: Settings, *, shards: str | None, shard_count: int | None) -> None:
    """Refuse a bad shard range before anything starts, naming where it came from.

    An option's mistake is told like ``--clock``'s (``--shards: ...``, exit 2); one that comes
    from the environment alone like any other setting's (``invalid settings: ...``).
    """
    given = (("--shards", shards), ("--shard-count", shard_count))
    options = [name for name, value in given if value is not None]
    if options and settings.platform is not Platform.DISCORD:
        typer.echo(
            f"{options[0]}: only the Discord adapter runs shards; add --platform discord "
            "(or set STUDYBOT_PLATFORM=discord)",
            err=True,
        )
        raise typer.Exit(2)
    if settings.platform is not Platform.DISCORD:
        return
    from bot.adapters.discord.shards import ShardRangeError, shard_plan

    # A count that is missing altogether is asked of the option when --shards was the option.
    from_env = shard_count is None and (settings.discord_shard_count is not None or not options)
    try:
        shard_plan(
            settings.discord_shards,
            settings.discord_shard_count,
            shards_name="--shards" if shards is not None else "DISCORD_SHARDS",
            count_name="DISCORD_SHARD_COUNT" if from_env else "--shard-count",
        )
    except ShardRangeError as exc:
        if not options:
            raise StartupError(f"invalid settings: {exc}") from None
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None


@app.command()
def console(
    ctx: typer.Context,
    db: DbOption = None,
    packs: Annotated[
        Path | None, typer.Option("--packs", help="Pack folder (default: the bundled questions/).")
    ] = None,
    clock: Annotated[
        str | None,
        typer.Option(
            "--clock",
            help="Start a simulated clock at this ISO8601 time; it moves only with /clock.",
        ),
    ] = None,
    json_lines: Annotated[
        bool,
        typer.Option("--json", help="Print every outbound message as one JSON line.", metavar=""),
    ] = False,
) -> None:
    """Chat with the bot in this terminal: no tokens, a local SQLite file, the bundled packs."""
    from bot.core.clock import SimulatedClock, SystemClock

    wiring = _wiring(ctx)
    settings = wiring.settings(db_path=db, packs_dir=packs)
    wiring.configure_logging(settings, quiet=True)
    sim: SimulatedClock | None = None
    if clock is not None:
        try:
            start = datetime.fromisoformat(clock)
        except ValueError:
            start = None
        if start is None or start.tzinfo is None:
            typer.echo(
                f"--clock: {clock!r} is not an ISO8601 time with an offset, e.g. "
                "2026-03-29T08:00:00+02:00",
                err=True,
            )
            raise typer.Exit(2)
        try:
            sim = SimulatedClock(start)
        except ValueError as exc:
            typer.echo(f"--clock: {exc}", err=True)
            raise typer.Exit(2) from None
    settings = settings.model_copy(update={"platform": Platform.CONSOLE})
    asyncio.run(wiring.serve(settings, clock=sim or SystemClock(), json_lines=json_lines))


web_app = typer.Typer(
    help="The admin web page: serve it (`studybot web`), or print a new sign-in link.",
)
app.add_typer(web_app, name="web")


@web_app.callback(invoke_without_command=True)
def web(
    ctx: typer.Context,
    db: DbOption = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port", min=0, max=65535, help="Port (default: WEB_PORT, else 8765; 0: any free)."
        ),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            help="Address to listen on (default: WEB_HOST, else 127.0.0.1). Beyond loopback "
            "only with Discord or Slack sign-in configured (WEB_PUBLIC_URL and the client id "
            "and secret), behind a reverse proxy.",
        ),
    ] = None,
) -> None:
    """Serve the admin web page on 127.0.0.1 and print a one-time sign-in link.

    The link administers the console workspaces of the database: schedules, reports, boards
    and settings, with the same rules as chat. With Discord or Slack sign-in configured, the
    sign-in page also offers them (see README, "Admin web page"). Stop it with Ctrl-C.
    `studybot web link` prints a new link for a page already serving.
    """
    if ctx.invoked_subcommand is not None:
        return
    wiring = _wiring(ctx)
    settings = wiring.settings(db_path=db)
    if port is None:
        port = settings.web_port if settings.web_port is not None else 8765
    wiring.configure_logging(settings, quiet=True)

    def say(line: str) -> None:
        typer.echo(line)
        sys.stdout.flush()

    stop = _StopOnSignal()
    with stop.installed():
        serve_on = host or settings.web_host
        asyncio.run(stop.run(wiring.web, settings, port=port, host=serve_on, out=say))


@web_app.command("link")
def web_link(
    ctx: typer.Context,
    db: DbOption = None,
    port: Annotated[
        int | None,
        typer.Option(
            "--port",
            min=1,
            max=65535,
            help="The port the page serves on, for the link (default: WEB_PORT, else 8765).",
        ),
    ] = None,
) -> None:
    """Print a new one-time sign-in link (valid 15 minutes) for the page already serving.

    For when the link `studybot web` printed was used, expired or lost: the page runs on, and
    this link signs in to the same database's console workspaces. With WEB_PUBLIC_URL set the
    link starts with it.
    """
    wiring = _wiring(ctx)
    settings = wiring.settings(db_path=db)
    if settings.database_url is None and not settings.db_path.exists():
        typer.echo(
            f"studybot: no database at {shown_path(settings.db_path)}; start the page "
            "with `studybot web` first (it prints a link itself)",
            err=True,
        )
        raise typer.Exit(1)
    wiring.configure_logging(settings, quiet=True)
    typer.echo(asyncio.run(wiring.web_link(settings, port=port)))


class _StopOnSignal:
    """One Ctrl-C (SIGINT) or SIGTERM stops ``studybot web`` within 2 s, at any moment, quietly.

    Python's default turns SIGINT into a KeyboardInterrupt wherever the main thread is
    (a traceback, and the database's worker thread left open keeps the process alive), and
    uvicorn's own handling only starts once it serves. Here the signal sets an event the
    server's coroutine waits on (a stop while starting ends it as soon as the database is
    open), and a watchdog ends the process at :data:`GRACE_S` whatever is still running; a
    second signal ends it at once.
    """

    GRACE_S = 1.5

    def __init__(self) -> None:
        self.event: asyncio.Event | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.signalled = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        signals = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.getsignal(sig) for sig in signals}
        for sig in signals:
            signal.signal(sig, self._handle)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    async def run(self, serve: Callable[..., Awaitable[None]], *args: Any, **kwargs: Any) -> None:
        self.loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        if self.signalled:
            return
        await serve(*args, stop=self.event, **kwargs)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signalled:  # a second signal: now
            _leave_now(0)
        self.signalled = True
        watchdog = threading.Timer(self.GRACE_S, _leave_now, args=(0,))
        watchdog.daemon = True
        watchdog.start()
        if self.loop is None or self.event is None:
            raise SystemExit(0)  # not serving yet: nothing to close
        self.loop.call_soon_threadsafe(self.event.set)


def _leave_now(status: int) -> None:
    """End the process without waiting for threads (the watchdog's last resort)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


@app.command("invite-url")
def invite_url(
    ctx: typer.Context,
    dev_guild: Annotated[
        bool,
        typer.Option(
            "--dev-guild", help="Preselect DISCORD_DEV_GUILD in the invite page.", metavar=""
        ),
    ] = False,
    rewards: Annotated[
        bool,
        typer.Option(
            "--rewards", help="Ask for Manage Roles too, for role rewards (/rewards).", metavar=""
        ),
    ] = False,
) -> None:
    """Print the link that adds the Discord bot to a server (from DISCORD_APPLICATION_ID)."""
    settings = _wiring(ctx).settings()
    if settings.discord_application_id is None:
        typer.echo(
            "DISCORD_APPLICATION_ID is not set; copy the Application ID from the General "
            "Information tab of your app at https://discord.com/developers/applications",
            err=True,
        )
        raise typer.Exit(2)
    from bot.adapters.discord.invite import invite_url as build

    guild = settings.discord_dev_guild if dev_guild else None
    typer.echo(build(settings.discord_application_id, guild_id=guild, rewards=rewards))


@app.command()
def doctor(
    ctx: typer.Context,
    platform: Annotated[
        Platform | None, typer.Option("--platform", help="Check for this platform.")
    ] = None,
    http: Annotated[
        bool,
        typer.Option("--http", help="Slack: check for HTTP mode (signing secret).", metavar=""),
    ] = False,
    db: DbOption = None,
) -> None:
    """Check settings, database, packs, sandbox and time data; exit 1 if anything fails."""
    from bot.doctor import Status, run_checks

    wiring = _wiring(ctx)
    settings = wiring.settings(platform=platform, db_path=db)
    wiring.configure_logging(settings, quiet=True)
    platform_set = platform is not None or "platform" in wiring.settings().model_fields_set
    checks = asyncio.run(
        run_checks(settings, http=http, platform_set=platform_set, terminal=sys.stdin.isatty())
    )
    for check in checks:
        typer.echo(str(check))
    failed = [c for c in checks if c.status is Status.FAIL]
    if failed:
        typer.echo(f"{len(failed)} check(s) failed", err=True)
        raise typer.Exit(1)
    typer.echo("all checks passed")


@db_app.command("backup")
def db_backup(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="Where to write it: a .tar.gz file, or a folder.")],
    db: DbOption = None,
) -> None:
    """Write a complete backup, safe while the bot runs: the database and the packs uploaded or
    written in chat (the folder beside it), together in one .tar.gz.

    PATH may be a file named .tar.gz, or a folder (an existing one, or any path ending in /):
    the backup is then named by date inside it, as the automatic backups are. Restore it with
    `studybot db restore`. On PostgreSQL it holds the packs only: the database is pg_dump's job.
    """
    from bot.backups import BackupError, BackupSummary, write_backup

    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)
    try:
        target = backup_target(path, datetime.now(UTC))
    except BackupError as exc:
        typer.echo(f"studybot: {exc}", err=True)
        raise typer.Exit(2) from None

    async def backup() -> BackupSummary:
        async with await wiring.database(settings) as database:
            return await write_backup(database, settings.uploads_dir, target)

    try:
        summary = asyncio.run(backup())
    except (OSError, sqlite3.Error, BackupError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        typer.echo(f"studybot: cannot write the backup to {shown_path(target)}: {reason}", err=True)
        raise typer.Exit(1) from None
    packs = f"{summary.packs} pack(s) from {shown_path(settings.uploads_dir)}"
    if summary.database:
        typer.echo(f"backed up {shown_path(settings.db_path)} and {packs} to {shown_path(target)}")
    else:
        typer.echo(
            f"PostgreSQL: backed up only the packs ({packs}) to {shown_path(target)}; the "
            "database is not "
            'in it: back it up with pg_dump --format=custom --file FILE "$DATABASE_URL" '
            "(docs/DEPLOY.md)"
        )


@db_app.command("restore")
def db_restore(
    ctx: typer.Context,
    backup: Annotated[Path, typer.Argument(help="A backup: .tar.gz (or an older .sqlite3).")],
    db: DbOption = None,
) -> None:
    """Restore a backup as the database and its packs folder; stop the bot first.

    Everything is checked before anything changes: the database's integrity, foreign keys and
    schema version, and every pack. It refuses while another process (a running bot, a
    console) has the database open. What it replaces is set aside beside the database
    (NAME-before-restore-TIME/), not deleted. On PostgreSQL use pg_restore (docs/DEPLOY.md).
    """
    from bot.backups import BackupError, restore_backup

    settings = _wiring(ctx).settings(db_path=db)
    if settings.database_url is not None:
        typer.echo(
            "db restore: DATABASE_URL is set, and studybot restores SQLite files; restore "
            'PostgreSQL with pg_restore --clean --if-exists --dbname "$DATABASE_URL" FILE '
            f"and the packs with tar -xzf {backup} -C {settings.uploads_dir} "
            "--strip-components=1 packs (docs/DEPLOY.md)",
            err=True,
        )
        raise typer.Exit(2)
    try:
        summary = restore_backup(backup, settings.db_path)
    except BackupError as exc:
        typer.echo(f"db restore: {exc}", err=True)
        raise typer.Exit(1) from None
    except OSError as exc:
        typer.echo(
            f"db restore: cannot restore into {shown_path(settings.db_path)}: {exc}", err=True
        )
        raise typer.Exit(1) from None
    packs = (
        f"{summary.packs} pack(s) in {summary.packs_dir}"
        if summary.packs_dir is not None
        else "no packs (an older backup of the database alone: the packs folder is as it was)"
    )
    typer.echo(
        f"restored {backup} to {summary.database} (schema {summary.schema_version}, checked) "
        f"and {packs}"
    )
    if summary.set_aside is not None:
        typer.echo(f"what it replaced is in {summary.set_aside}")


EXPORT_HEADER = (
    "platform", "workspace_id", "workspace", "member_id", "member", "points", "answers",
    "correct", "current_streak", "best_streak", "last_streak_day", "freezes_held",
    "freezes_used",
)  # fmt: skip


@scores_app.command("export")
def scores_export(
    ctx: typer.Context,
    csv_out: Annotated[
        bool, typer.Option("--csv", help="Comma-separated values with a header.", metavar="")
    ] = False,
    workspace: Annotated[
        str | None,
        typer.Option(
            "--workspace", help="Only this workspace (its id or name).", callback=_platform_id
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Print every member's all-time points, answers and streaks, best first, as CSV.

    The same numbers as the boards and /stats, for a spreadsheet or a grade book.
    """
    import csv

    if not csv_out:
        sys.stderr.write("say the format: --csv (the only one so far)\n")
        raise typer.Exit(2)
    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)

    async def rows() -> list[tuple[object, ...]]:
        async with await wiring.database(settings) as database:
            return await wiring.upkeep(database).export_scores(workspace, datetime.now(UTC))

    from bot.text import spreadsheet_cell

    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(EXPORT_HEADER)
    # Names and workspace names are members' text: never a formula in a spreadsheet.
    writer.writerows(tuple(spreadsheet_cell(c) for c in row) for row in asyncio.run(rows()))


@stats_app.command("export")
def stats_export(
    ctx: typer.Context,
    what: Annotated[
        str,
        typer.Argument(
            help="gradebook: a row per member (Canvas and Moodle import it); "
            "questions: a row per question with its statistics and flags."
        ),
    ] = "gradebook",
    workspace: Annotated[
        str | None,
        typer.Option(
            "--workspace",
            help="The workspace (its platform id, name or row id); needed when there are several.",
            callback=_platform_id,
        ),
    ] = None,
    days: Annotated[
        str, typer.Option("--days", help="Only the last N days (default: all time).")
    ] = "all",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the CSV here (default: stdout).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Print the gradebook CSV, or the per-question statistics CSV, of one workspace.

    Cells that a spreadsheet would run as a formula are written as text.
    """
    from bot.core.errors import StudyError
    from bot.services.item_analysis import Period

    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)

    async def export() -> str:
        async with await wiring.database(settings) as database:
            period = Period(Period.parse_days(days))
            return await wiring.analysis(database).export(what.lower(), workspace, period)

    try:
        text = asyncio.run(export())
    except StudyError as exc:
        typer.echo(f"stats export: {exc}", err=True)
        raise typer.Exit(2) from None
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8", newline="")
    except OSError as exc:
        typer.echo(f"stats export: cannot write {shown_path(out)}: {exc.strerror}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {text.count(chr(10)) - 1} row(s) to {shown_path(out)}", err=True)


@scores_app.command("import")
def scores_import(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="A CSV: member_id, member or name; and points.")],
    workspace: Annotated[
        str | None,
        typer.Option(
            "--workspace",
            help="The workspace's platform id, exactly (as `scores export` prints it), or "
            "PLATFORM:ID; needed when there are several. Never its name.",
            callback=_platform_id,
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show who would get how many points; write nothing."),
    ] = False,
    db: DbOption = None,
) -> None:
    """Bring points over from another bot: each member's points become one score event.

    The CSV has a header row naming a member column (member_id: the platform's id; name: the
    display name; member: either) and a points column. Nothing is written unless every row is
    good: each bad row is printed with its number (the header is row 1) and field. The points
    count in the all-time board, not in this week's or month's, and not in streaks. The same
    file imported again is refused, not counted twice. Each import gets an id, printed here:
    `studybot scores undo-import ID` takes it back.
    """
    from bot.questions.untrusted import MAX_FILE_BYTES
    from bot.services.score_import import (
        ScoresImported,
        ScoresImportRefused,
        parse_points,
        workspace_label,
    )

    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)
    try:
        if file.stat().st_size > MAX_FILE_BYTES:
            typer.echo(f"studybot: {file} is over {MAX_FILE_BYTES:,} bytes", err=True)
            raise typer.Exit(2)
        raw = file.read_bytes()
    except OSError as exc:
        typer.echo(f"studybot: cannot read {file}: {exc.strerror}", err=True)
        raise typer.Exit(2) from None

    async def apply() -> tuple[str, ScoresImported]:
        parsed = parse_points(raw, str(file))
        async with await wiring.database(settings) as database:
            imports = _score_imports(database, settings)
            target = await imports.workspace(workspace, settings.database_name)
            done = await imports.import_file(target, parsed, dry_run=dry_run)
            return workspace_label(target), done

    try:
        label, done = asyncio.run(apply())
    except ScoresImportRefused as exc:
        for problem in exc.problems:
            typer.echo(problem, err=True)
        typer.echo(f"studybot: {file} was not imported; nothing changed", err=True)
        raise typer.Exit(1) from None
    if done.import_id is None:
        for line in done.lines:
            typer.echo(f"  {line.name} ({line.member}): +{line.points:,}")
        typer.echo(
            f"dry run: would import {done.points:,} point(s) for {done.members} member(s) from "
            f"{file} into {label}; nothing was written"
        )
        return
    typer.echo(
        f"imported {done.points:,} point(s) for {done.members} member(s) from {file} into "
        f"{label}: they count in the all-time board (not this week's or month's, not streaks)"
    )
    typer.echo(
        f"import #{done.import_id}; to take it back: studybot scores undo-import {done.import_id}"
    )


@scores_app.command("undo-import")
def scores_undo_import(
    ctx: typer.Context,
    import_id: Annotated[
        int, typer.Argument(help="The import's id, printed when it landed.", metavar="ID")
    ],
    db: DbOption = None,
) -> None:
    """Take back exactly the points one `scores import` added (once): each of its events gets
    its opposite, so the boards are as before it. The same file may then be imported again,
    into the right workspace. Role rewards look again, as after an import."""
    from bot.services.score_import import ImportUndone, ScoresImportRefused, workspace_label

    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)

    async def undo() -> ImportUndone:
        async with await wiring.database(settings) as database:
            return await _score_imports(database, settings).undo(import_id)

    try:
        done = asyncio.run(undo())
    except ScoresImportRefused as exc:
        for problem in exc.problems:
            typer.echo(f"studybot: {problem}", err=True)
        raise typer.Exit(1) from None
    where = workspace_label(done.workspace) if done.workspace else "its workspace"
    typer.echo(
        f"undid import #{import_id} ({done.record.source}, into {where}): took back "
        f"{done.points:,} point(s) from {done.members} member(s)"
    )


def _score_imports(database: Database, settings: Settings) -> ScoreImports:
    """The score import service, wired as the bot wires it (its rewards hook included)."""
    from bot.app import build_services
    from bot.core.clock import SystemClock

    return build_services(
        database, SystemClock(), default_timezone=settings.timezone
    ).services.score_imports


async def _db_problems(wiring: Wiring, database: Database) -> list[str]:
    """What `db check` reports (:meth:`bot.services.upkeep.Upkeep.problems`)."""
    return await wiring.upkeep(database).problems()


@db_app.command("check")
def db_check(ctx: typer.Context, db: DbOption = None) -> None:
    """Run SQLite's integrity and foreign-key checks, re-add the scores and replay the review
    log against the stored card states; exit 1 on a problem."""
    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)

    async def check() -> tuple[list[str], int]:
        async with await wiring.database(settings) as database:
            return await _db_problems(wiring, database), database.schema_version

    problems, version = asyncio.run(check())
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"ok: {settings.database_name} (schema version {version})")


@db_app.command("migrate-to")
def db_migrate_to(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The PostgreSQL database: postgresql://...")],
    db: DbOption = None,
) -> None:
    """Copy the SQLite database into an empty PostgreSQL database, then verify it: the row
    count of every table on both sides, and `db check` on both. Stop the bot first."""
    from bot.storage.database import is_postgres_url
    from bot.storage.postgres import redact

    settings = _existing_db(ctx, db, sqlite=True)
    if not is_postgres_url(url):
        typer.echo(f"migrate-to: expected a postgresql://... URL, got {url!r}", err=True)
        raise typer.Exit(2)
    try:
        problems = asyncio.run(_migrate_to(_wiring(ctx), settings.db_path, url))
    except (ConnectionError, OSError, sqlite3.Error) as exc:
        typer.echo(f"migrate-to: {exc}", err=True)
        raise typer.Exit(1) from None
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo(
        f"ok: {shown_path(settings.db_path)} copied to {redact(url)}; row counts and checks agree"
    )


async def _migrate_to(wiring: Wiring, path: Path, url: str) -> list[str]:
    import asyncpg

    from bot.storage.database import open_database
    from bot.storage.postgres import PostgresDatabase, redact
    from bot.storage.transfer import TransferError, copy_sqlite_to_postgres, row_counts

    async def checked(database: Database, side: str) -> list[str]:
        return [f"{side}: {problem}" for problem in await _db_problems(wiring, database)]

    async with await open_database(path) as source:  # brings the file to the current schema
        problems = await checked(source, "sqlite")
        before = await row_counts(source)
    if problems:
        return [*problems, "migrate-to: fix the SQLite database first (nothing was copied)"]
    try:
        target = await open_database(url)
    except asyncpg.PostgresError as exc:
        raise ConnectionError(f"cannot open {redact(url)}: {exc}") from exc
    assert isinstance(target, PostgresDatabase)
    async with target:
        try:
            await copy_sqlite_to_postgres(
                path, target, lambda table, n: typer.echo(f"  {table}: {n} rows")
            )
        except TransferError as exc:
            return [f"migrate-to: {exc}"]
        after = await row_counts(target)
        problems = [
            f"{table}: {before[table]} rows in SQLite but {after[table]} in PostgreSQL"
            for table in before
            if before[table] != after[table]
        ]
        return problems + await checked(target, "postgresql")


WorkspaceOption = Annotated[
    str | None,
    typer.Option(
        "--workspace",
        help="A workspace: its row id or platform id (default: every one).",
        callback=_platform_id,
    ),
]


def _existing_db(ctx: typer.Context, db: Path | None, *, sqlite: bool = False) -> Settings:
    """The settings, once the SQLite file is known to exist (a command that only reads must
    not create an empty one). With ``DATABASE_URL`` the database is the server's: opening it
    says what is wrong. ``sqlite``: the command needs the file itself (migrate-to)."""
    settings = _wiring(ctx).settings(db_path=db)
    if (sqlite or settings.database_url is None) and not Path(settings.db_path).exists():
        typer.echo(f"no database at {shown_path(settings.db_path)}", err=True)
        raise typer.Exit(1)
    return settings


@review_app.command("optimize")
def review_optimize(
    ctx: typer.Context, workspace: WorkspaceOption = None, db: DbOption = None
) -> None:
    """Fit FSRS parameters to each workspace's review log; keep them only if they predict it
    better (lower log-loss) than the current ones. Runs FSRS's optimizer (torch) here, in
    this process, never in the bot's."""
    from bot.services.optimize import FitReport
    from bot.services.upkeep import WorkspaceNotFound

    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)

    async def fit() -> list[FitReport]:
        async with await wiring.database(settings) as database:
            return await wiring.upkeep(database).fit_reviews(workspace, datetime.now(UTC))

    try:
        reports = asyncio.run(fit())
    except WorkspaceNotFound:
        typer.echo(f"no workspace {workspace!r} in {settings.database_name}", err=True)
        raise typer.Exit(1) from None
    if not reports:
        typer.echo("no reviews yet: nothing to fit")
    for report in reports:
        typer.echo(report.describe())


@review_app.command("retention")
def review_retention(
    ctx: typer.Context,
    workspace: Annotated[str, typer.Argument(help="The workspace: row id or platform id.")],
    value: Annotated[
        float, typer.Argument(min=0.70, max=0.97, help="Desired retention, 0.70 to 0.97.")
    ],
    db: DbOption = None,
) -> None:
    """Set the recall probability FSRS schedules for (default 0.90); reschedules the cards."""
    from bot.services.upkeep import WorkspaceNotFound

    wiring = _wiring(ctx)
    settings = _existing_db(ctx, db)

    async def apply() -> int | None:
        async with await wiring.database(settings) as database:
            try:
                return await wiring.upkeep(database).set_retention(workspace, value)
            except WorkspaceNotFound:
                return None

    cards = asyncio.run(apply())
    if cards is None:
        typer.echo(f"no workspace {workspace!r} in {settings.database_name}", err=True)
        raise typer.Exit(1)
    typer.echo(f"desired retention {value:.2f}; {cards} card(s) rescheduled")


@questions_app.command("lint")
def questions_lint(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="A pack file or folder.")] = None,
) -> None:
    """Check packs against the schema; print every problem as file:line: field: reason.

    Near-duplicate questions; explanations, why notes, steps and common mistakes that show
    code no check backs; and choices that are code or a value (or whose why names one) with
    no check that backs them, are printed as warnings; they do not change the exit code.
    """
    from bot.questions.lint import lint_packs

    result = lint_packs(_packs_dir(ctx, path))
    for problem in result.problems:
        typer.echo(str(problem), err=problem.severity == "error")
    items = sum(len(p.pack.items) for p in result.packs)
    if result.errors:
        typer.echo(f"{len(result.errors)} problem(s); {len(result.packs)} pack(s) clean", err=True)
        raise typer.Exit(1)
    typer.echo(f"ok: {len(result.packs)} pack(s), {items} item(s)")


@questions_app.command("list")
def questions_list(
    ctx: typer.Context,
    path: Annotated[Path | None, typer.Argument(help="A pack file or folder.")] = None,
) -> None:
    """List packs and their items (id, kind, difficulty, tags)."""
    result = load_packs(_packs_dir(ctx, path))
    for problem in result.errors:
        typer.echo(str(problem), err=True)
    for loaded in result.packs:
        pack = loaded.pack
        typer.echo(f"{pack.pack}: {pack.title} ({len(pack.items)} items) [{loaded.path}]")
        for item in pack.items:
            tags = ",".join(item.tags)
            typer.echo(f"  {item.id:<28} {item.kind:<16} {item.difficulty:<7} {tags}")
    if result.errors:
        raise typer.Exit(1)


@questions_app.command("import")
def questions_import(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(help="The file to import.")],
    format_: Annotated[
        Format | None,
        typer.Option(
            "--format",
            help="cheatsheet, notes, csv, tsv, opentdb, anki (.apkg) or anki-text "
            "(default: detected).",
        ),
    ] = None,
    pack: Annotated[
        str | None, typer.Option("--pack", help="The pack's slug (default: from the file name).")
    ] = None,
    title: Annotated[
        str | None, typer.Option("--title", help="The pack's title (default: from the file).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write the pack here, e.g. questions/NAME.yaml (default: stdout)."
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite --out if it exists.", metavar="")
    ] = False,
    packs: Annotated[
        Path | None,
        typer.Option("--packs", help="Packs to check for duplicates (default: STUDYBOT_PACKS)."),
    ] = None,
) -> None:
    """Import a cheat sheet, a CSV/TSV (Quizlet) export, an OpenTDB file or an Anki deck (.apkg,
    or Anki's plain-text export) as a pack.

    Every item that could not be imported is printed with its line (exit 1, and --out is not
    written); guesses and near-duplicates of existing questions are printed as warnings. A deck
    exported by `questions export` is matched to its pack by note GUID, as Anki does, and
    reported in one line. A file past a bound (size, items, time, memory) or a damaged deck is
    refused in one line (exit 2).
    """
    from bot.questions.importing import ImportRefused, run_import

    try:
        report = run_import(
            Path(shown_path(file)),
            format_=format_,
            pack=pack,
            title=title,
            out=Path(shown_path(out)) if out is not None else None,
            force=force,
            packs_dir=_packs_dir(ctx, packs),
        )
    except ImportRefused as exc:
        typer.echo(f"studybot: {exc}", err=True)
        raise typer.Exit(2) from None
    for problem in report.problems:
        typer.echo(str(problem), err=True)
    if report.yaml_text is not None and out is None:
        typer.echo(report.yaml_text, nl=False)
    typer.echo(report.summary(), err=True)
    if report.errors:
        raise typer.Exit(1)


@questions_app.command("export")
def questions_export(
    ctx: typer.Context,
    pack: Annotated[
        str, typer.Argument(help="A pack's slug (in the packs folder) or a pack file.")
    ],
    apkg: Annotated[
        Path | None, typer.Option("--apkg", help="Write an Anki deck (.apkg) here.")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite --apkg if it exists.", metavar="")
    ] = False,
    packs: Annotated[
        Path | None,
        typer.Option("--packs", help="Where to find PACK by slug (default: STUDYBOT_PACKS)."),
    ] = None,
) -> None:
    """Export a pack as an Anki deck that Anki opens (File > Import).

    Flashcards become Basic notes; multiple choice shows the choices on the front and the
    answer and explanation on the back; code shows as code. Ids come from the pack's slug, so
    importing a re-exported deck into Anki updates its notes instead of adding copies.
    """
    from bot.questions.anki_export import pack_apkg

    if apkg is None:
        typer.echo("say the format: --apkg OUT.apkg (the only one so far)", err=True)
        raise typer.Exit(2)
    from bot.questions.importing import write_atomically

    apkg = Path(shown_path(apkg))
    if apkg.exists() and not force:
        typer.echo(f"studybot: {apkg} exists; pass --force to overwrite it", err=True)
        raise typer.Exit(2)
    as_file = Path(pack)
    if as_file.suffix.lower() in {".yaml", ".yml"} or as_file.is_file():
        result = load_packs(Path(shown_path(as_file)))
        where = shown_path(as_file)
    else:
        folder = _packs_dir(ctx, packs)
        result = load_packs(folder, Path(shown_path(_wiring(ctx).settings().uploads_dir)))
        where = f"{folder}"
    for problem in result.errors:
        typer.echo(str(problem), err=True)
    found = [p.pack for p in result.packs if p.pack.pack == pack or as_file.is_file()]
    if not found:
        known = ", ".join(sorted(p.pack.pack for p in result.packs)) or "none"
        typer.echo(f"studybot: no pack {pack!r} in {where} (packs there: {known})", err=True)
        raise typer.Exit(1)
    chosen = found[0]
    try:
        write_atomically(apkg, pack_apkg(chosen))
    except OSError as exc:
        typer.echo(f"studybot: cannot write {apkg}: {exc.strerror}", err=True)
        raise typer.Exit(1) from None
    kinds = Counter(item.kind for item in chosen.items)
    listed = ", ".join(f"{kinds[k]} {k}" for k in sorted(kinds))
    typer.echo(f"exported {chosen.pack} ({len(chosen.items)} notes: {listed}) to {apkg}")


@questions_app.command("check")
def questions_check(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Pack files or folders.", show_default=False)
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=1,
            max=300,
            help="Seconds per snippet (torch.compile items need more than the chat default).",
        ),
    ] = 60.0,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", min=1, max=32, help="Snippets at once (default: the pool size)."),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the results as JSON.", metavar="")
    ] = False,
) -> None:
    """Run every code item's snippet and every check in the sandbox against its expectation,
    and every exercise's reference and starter against its checks.

    Prints id (with the texts a check backs), expected, got and verdict per snippet, then one
    line per exercise and each of its problems at file:line; exits 1 on any disagreement or
    broken exercise (or a pack that does not load) and 2 when the sandbox is unavailable.
    Never runs unsandboxed.
    """
    import json

    from bot.questions.check import (
        CheckRow,
        check_items,
        check_targets,
        render_table,
        sandbox_config_for_check,
    )
    from bot.questions.exercise_check import (
        ExerciseRow,
        check_exercises,
        exercise_targets,
        render_exercises,
    )
    from bot.questions.typed_check import (
        TypedValueRow,
        check_typed_values,
        render_typed_values,
        typed_value_targets,
    )
    from bot.sandbox import Sandbox, SandboxConfig, SandboxUnavailable

    wiring = _wiring(ctx)
    settings = wiring.settings()
    first, more = (paths[0], paths[1:]) if paths else (None, [])
    result = load_packs(_packs_dir(ctx, first), *(_packs_dir(ctx, p) for p in more))
    missing = [p for p in more if not p.exists()]
    for path in missing:
        typer.echo(f"{path}: no such file or directory", err=True)
    for problem in result.errors:
        typer.echo(str(problem), err=True)
    targets = check_targets(result.packs)
    exercises = exercise_targets(result.packs)
    values = typed_value_targets(result.packs)
    if not targets and not exercises and not values:
        typer.echo("no code items, checks or exercises to run")
        raise typer.Exit(1 if result.errors or missing else 0)
    base = SandboxConfig.from_settings(settings)
    workers = jobs or max(1, base.pool_size)
    config = sandbox_config_for_check(base, timeout=timeout, jobs=workers * 4)

    async def check_all() -> tuple[list[CheckRow], list[ExerciseRow], list[TypedValueRow]]:
        async with Sandbox(config) as sandbox:
            if not sandbox.available:
                raise SandboxUnavailable(sandbox.unavailable_reason or "sandbox unavailable")
            rows = await check_items(targets, sandbox, timeout=timeout, jobs=workers)
            judged = await check_exercises(exercises, sandbox, jobs=workers)
            return rows, judged, await check_typed_values(values, sandbox, jobs=workers)

    try:
        rows, exercise_rows, value_rows = asyncio.run(check_all())
    except SandboxUnavailable as exc:
        typer.echo(f"sandbox unavailable: {exc.reason}; nothing was run", err=True)
        raise typer.Exit(2) from None
    failed = [row for row in rows if not row.ok]
    broken = [row for row in exercise_rows if not row.ok]
    broken_values = [row for row in value_rows if not row.ok]
    if json_out:
        document = {
            "items": [row.as_dict() for row in rows],
            "checked": len(rows),
            "disagree": len(failed),
            "exercises": [row.as_dict() for row in exercise_rows],
            "broken_exercises": len(broken),
            "typed_values": [row.as_dict() for row in value_rows],
            "broken_typed_values": len(broken_values),
            "load_problems": [str(problem) for problem in result.errors],
        }
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        if rows:
            typer.echo(render_table(rows))
        if exercise_rows:
            typer.echo(("\n" if rows else "") + render_exercises(exercise_rows))
        if value_rows:
            typer.echo("\n" + render_typed_values(value_rows))
    if failed or broken or broken_values or result.errors or missing:
        raise typer.Exit(1)


def _unwrap(text: str) -> str:
    """Docstring paragraphs as single lines, so the help reflows them to the terminal's width.

    A docstring is wrapped at 100 columns in the source; printed as it is, a terminal of another
    width shows lines broken mid-sentence. Lists and indented blocks keep their lines.
    """
    paragraphs = []
    for block in inspect.cleandoc(text).split("\n\n"):
        lines = block.splitlines()
        listed = any(re.match(r"([-*•]|\d+\.)\s|\s", line) for line in lines)
        paragraphs.append(block if listed else " ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def _reflow(command: Any) -> None:
    """Unwrap the help of ``command`` and of every command under it (Typer's own click).

    Also show ``-h``/``--help`` as the flag it is: Typer labels it ``<bool>``, as if it took a
    value (the option is built lazily and cached, so setting its metavar once sticks).
    """
    if getattr(command, "help", None):
        command.help = _unwrap(command.help)
    context = command.context_class(command, help_option_names=HELP_OPTIONS)
    help_option = command.get_help_option(context)
    if help_option is not None:
        help_option.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        _reflow(sub)


def main(argv: list[str] | None = None) -> None:
    """The ``studybot`` console script: a start-up error is one readable line, exit status 2."""
    command = typer.main.get_command(app)
    _reflow(command)
    try:
        command.main(args=argv, obj=Wiring(), prog_name="studybot", standalone_mode=True)
    except KeyboardInterrupt:  # Ctrl-C where no command handles it: quiet, as a shell expects
        raise SystemExit(130) from None
    except StartupError as exc:
        if logs_as_json():  # a log collector reading JSON lines gets this one too
            log.critical("studybot: %s", exc)
        else:
            sys.stderr.write(f"studybot: {exc}\n")
        raise SystemExit(2) from None
