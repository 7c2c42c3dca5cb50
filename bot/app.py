"""The one place where things are built: settings -> logging -> storage -> sandbox -> service.

:func:`bot.cli.main` (the ``studybot`` console script) runs the typer app with a :class:`Wiring`
object as ``ctx.obj``; commands ask it for settings and a runtime, so nothing is built at
import time, and a start-up error becomes one readable line instead of a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import signal
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import asyncpg
from pydantic import ValidationError

from bot.backups import BackupJob
from bot.core.clock import Clock, SimulatedClock, SystemClock
from bot.core.gateway import ChatGateway, DirectMessenger
from bot.core.lanes import Lanes
from bot.core.snippets import RunGate, RunLimits, SnippetRunner
from bot.core.startup import PlatformAdapter, StartupError
from bot.core.timer import DueSource
from bot.core.wakeup import Wakeup
from bot.health import HealthServer
from bot.log import configure_logging, get_logger
from bot.metrics import Metrics
from bot.questions.loader import load_packs
from bot.runtime import Runtime
from bot.scheduler import SYNC_EVERY, Scheduler
from bot.services.accommodations import Accommodations
from bot.services.audit import Audited, AuditLog
from bot.services.bundle import Services
from bot.services.catalogue import Catalogue
from bot.services.exams import Exams
from bot.services.exercises import Exercises
from bot.services.extra_time import ExtraTime
from bot.services.graphs import ItemGraphs
from bot.services.group_mastery import GroupMastery
from bot.services.hint_log import HintLog
from bot.services.history import QuestionHistory
from bot.services.home import Home
from bot.services.item_analysis import ItemAnalysis
from bot.services.packs import PackAdmin
from bot.services.places import Places
from bot.services.posting import Posting
from bot.services.quiz import Quiz, score_rules
from bot.services.recaps import DEFAULT_GRACE, Recaps
from bot.services.reminders import Reminders
from bot.services.reports import QuestionReports
from bot.services.review import ReviewService
from bot.services.rewards import Rewards
from bot.services.round_rules import RoundRules
from bot.services.rounds import Rounds
from bot.services.runs import SnippetRuns
from bot.services.schedule_book import ScheduleBook
from bot.services.schedule_source import PREPARE_LEAD, PREPARE_MIN
from bot.services.scheduled_sources import LEASE, SchedulerParts, scheduled_questions
from bot.services.score_import import ScoreImports
from bot.services.standings import Standings
from bot.services.suggestions import Suggestions
from bot.services.typed_answers import TypedAnswers
from bot.services.upkeep import Upkeep
from bot.services.web_access import WebAccess
from bot.services.workspace_settings import WorkspaceSettingsService
from bot.settings import Platform, Settings
from bot.storage.accommodations import AccommodationStore
from bot.storage.answers import AnswerWriter
from bot.storage.audit import AuditStore
from bot.storage.community import CommunityOwners
from bot.storage.database import Database, open_database
from bot.storage.directory import Directory
from bot.storage.exams import ExamStore
from bot.storage.exercises import ExerciseStore
from bot.storage.gradebook import GradebookStore
from bot.storage.group_mastery import GroupMasteryStore
from bot.storage.item_flags import ItemFlagStore
from bot.storage.item_stats import ItemStatsStore
from bot.storage.migrate import MigrationError
from bot.storage.packs import PackStore
from bot.storage.posts import PostStore
from bot.storage.recaps import RecapStore
from bot.storage.reminders import ReminderStore
from bot.storage.reports import ReportStore
from bot.storage.reviews import ReviewStore
from bot.storage.rewards import RewardStore
from bot.storage.rounds import RoundStore
from bot.storage.schedule_store import ScheduleStore
from bot.storage.scores import ScoreStore
from bot.storage.suggestions import SuggestionStore
from bot.storage.web_sessions import WebSessionStore
from bot.storage.workspace_settings import SettingsStore

if TYPE_CHECKING:
    from bot.web.oauth import AdminRights, OAuthSettings

__all__ = ["Built", "StartupError", "Wiring", "build_services", "due_sources", "run_until_stopped"]

WORKSPACE_SETTINGS_TTL = 10.0  # seconds: PostgreSQL, several processes (see Directory)

log = get_logger("bot")
ADAPTER_STOP_SECONDS = 3.0  # for the platform connection to close after a stop
DRAIN_SECONDS = 3.0  # for snippet runs in flight before the sandbox is closed


class Wiring:
    """Builds the program's parts on demand: settings once, a runtime per command."""

    def __init__(self) -> None:
        self._settings: Settings | None = None

    def settings(self, **overrides: Any) -> Settings:
        """The settings from the environment and ``.env``, with CLI options applied on top."""
        if self._settings is None:
            try:
                self._settings = Settings()
            except ValidationError as exc:
                raise StartupError(_settings_problem(exc)) from None
        if not overrides:
            return self._settings
        try:
            merged = {
                **self._settings.model_dump(),
                **{k: v for k, v in overrides.items() if v is not None},
            }
            return Settings.model_validate(merged)
        except ValidationError as exc:
            raise StartupError(_settings_problem(exc)) from None

    def configure_logging(self, settings: Settings, *, quiet: bool = False) -> None:
        """Logging with every configured secret registered for redaction."""
        secrets = [
            s.get_secret_value()
            for s in (
                settings.discord_token,
                settings.slack_bot_token,
                settings.slack_app_token,
                settings.slack_signing_secret,
                settings.database_url,
                settings.web_secret,
                settings.discord_client_secret,
                settings.slack_client_secret,
            )
            if s is not None
        ]
        level = "WARNING" if quiet and settings.log_level == "INFO" else settings.log_level
        configure_logging(level, settings.log_format, secrets)

    async def database(self, settings: Settings) -> Database:
        """Open (and migrate) the database, or say in one line why it cannot be opened."""
        try:
            return await open_database(settings.database_target)
        except (MigrationError, sqlite3.Error, OSError, asyncpg.PostgresError) as exc:
            raise StartupError(f"cannot open database {settings.database_name}: {exc}") from None

    def analysis(self, database: Database) -> ItemAnalysis:
        """Item statistics and the exports over ``database`` (``stats export``)."""
        clock = SystemClock()
        directory = Directory(database, self.settings().timezone)
        return ItemAnalysis(
            places=Places(directory, clock),
            catalogue=Catalogue(PackStore(database), clock),
            stats=ItemStatsStore(database),
            flags=ItemFlagStore(database),
            gradebook=GradebookStore(database),
            clock=clock,
            directory=directory,
        )

    def upkeep(self, database: Database) -> Upkeep:
        """The operator's tasks over ``database`` (``scores export``, ``db check``,
        ``review optimize|retention``): the CLI calls this service, never a store."""
        return Upkeep(
            scores=ScoreStore(database),
            reviews=ReviewStore(database),
            integrity=database.integrity_problems,
        )

    @asynccontextmanager
    async def runtime(
        self, settings: Settings, *, clock: Clock | None = None, sandbox_on: bool = True
    ) -> AsyncIterator[Runtime]:
        """Open the database (migrating it), start the sandbox, sync the packs, build the service.

        The sandbox manager starts in the background (it checks the host and warms jails with
        torch imported, which takes seconds); a ``/run`` before it is ready waits for it.
        The manager gets only the sandbox's own settings, never this process's environment.
        """
        from bot.sandbox import Sandbox, SandboxConfig
        from bot.sandbox.client.remote import RemoteSandbox

        clock = clock or SystemClock()
        db = await self.database(settings)
        metrics = Metrics()
        urls = [u.strip() for u in settings.sandbox_urls.split(",") if u.strip()]
        sandbox: Sandbox | RemoteSandbox | None
        if not sandbox_on:  # the admin web page runs no snippets
            sandbox = None
        elif urls:  # snippets run on sandbox hosts (`studybot sandbox serve`), not here
            token = settings.sandbox_token.get_secret_value() if settings.sandbox_token else ""
            sandbox = RemoteSandbox(
                urls, token, timeout=settings.sandbox_timeout, max_bytes=settings.run_max_bytes
            )
        else:
            sandbox = Sandbox(SandboxConfig.from_settings(settings))
        starting = asyncio.create_task(
            sandbox.start() if sandbox is not None else asyncio.sleep(0), name="sandbox-start"
        )
        with contextlib.suppress(OSError):  # unwritable: uploads are checked, not installed
            settings.uploads_dir.mkdir(exist_ok=True)
        try:
            built = build_services(
                db,
                clock,
                default_timezone=settings.timezone,
                quiz_window=settings.quiz_window,
                runner=sandbox,
                runner_starting=starting,
                run_limits=RunLimits(
                    timeout_s=settings.sandbox_timeout,
                    memory_mb=settings.sandbox_memory_mb,
                    max_bytes=settings.run_max_bytes,
                    per_minute=settings.run_rate_per_minute,
                ),
                metrics=metrics,
                packs_dir=settings.uploads_dir,  # where admins' uploaded packs are installed
                schedule_grace=settings.schedule_grace,
            )
            packs = load_packs(settings.packs_dir, settings.uploads_dir)
            for problem in packs.errors:
                log.warning("pack problem (item skipped): %s", problem)
            await built.services.packs.sync(packs.packs)
            yield Runtime(settings, db, built.services, built.timed, clock, packs, metrics)
        finally:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            if sandbox is not None:
                await sandbox.close()
            await db.close()

    def scheduler(
        self, runtime: Runtime, gateway: ChatGateway, *, concurrency: int = 16
    ) -> Scheduler:
        """The one scheduler loop of this process; start it once, at start-up (never from a
        platform's ready event: that fires again on every reconnect)."""
        # On PostgreSQL several bot processes may share the database: claims take a lease.
        # Every loop looks for changes made by other processes: on PostgreSQL other bots, on a
        # SQLite file `studybot web` beside the bot (which runs no scheduler, so no lease).
        several_bots = runtime.db.engine == "postgresql"
        scheduler = timer_loop(
            runtime.timed,
            gateway,
            runtime.clock,
            runtime.settings.schedule_grace,
            concurrency=concurrency,
            lease=LEASE if several_bots else None,
            sync_every=SYNC_EVERY if shares_database(runtime.db, runtime.clock) else None,
        )
        prefix = "/study " if runtime.settings.platform is Platform.SLACK else "/"
        for source in due_sources(runtime.services, gateway, command_prefix=prefix):
            scheduler.add_source(source)
        return scheduler

    async def serve(
        self,
        settings: Settings,
        *,
        http_port: int | None = None,
        clock: Clock | None = None,
        json_lines: bool = False,
        web_port: int | None = None,
        web_host: str = "127.0.0.1",
    ) -> None:
        """Run the configured platform until it stops or a signal asks it to: ``studybot run``.

        ``web_port``: the admin web page too, in this process, over the same services.

        On SIGTERM or SIGINT: stop taking new events, let the scheduler finish the sends in
        flight, let answers commit and snippet runs finish (briefly; then they are cancelled),
        stop the sandbox and close the database, all within about 10 s.
        """
        self.preflight(settings, http_port=http_port)
        async with self.runtime(settings, clock=clock) as runtime:
            adapter = self.adapter(runtime, http_port=http_port, json_lines=json_lines)
            console = settings.platform is Platform.CONSOLE
            # One channel at a time on the console, so a scripted session prints the same
            # lines every time. The adapter is also the scheduler's gateway: its send_post
            # waits until the platform connection is ready.
            scheduler = self.scheduler(runtime, adapter, concurrency=1 if console else 16)
            async with (
                scheduler.running(),
                self.operations(runtime, adapter, scheduler),
                self.embedded_web(runtime, web_host, web_port),
            ):
                if console:
                    from bot.adapters.console import ConsoleAdapter

                    assert isinstance(adapter, ConsoleAdapter)
                    adapter.scheduler = scheduler  # /clock moves it step by step
                # The scheduler stops first: its sends in flight still need the adapter.
                await run_until_stopped(adapter, before_stop=scheduler.stop)
                await runtime.services.drain(DRAIN_SECONDS)

    async def web(
        self,
        settings: Settings,
        *,
        port: int,
        host: str = "127.0.0.1",
        out: Callable[[str], None] = print,
        clock: Clock | None = None,
        stop: asyncio.Event | None = None,
    ) -> None:
        """Serve the admin web page until ``stop`` is set (``studybot web`` sets it on SIGINT
        or SIGTERM), or, without ``stop``, until uvicorn's own signal handling stops it.

        It prints a one-time sign-in link for this database's console workspaces. Without
        OAuth settings it listens on loopback only; with Sign in with Discord or Slack
        configured it may listen on ``host`` (behind the reverse proxy). A stop asked for
        while it starts ends it as soon as the database is open, without serving; once
        serving, open requests get half a second to finish, then the server is cut off, and the
        runtime (the database's worker thread with it) is always closed on the way out.
        """
        async with self.runtime(settings, clock=clock, sandbox_on=False) as runtime:
            if stop is not None and stop.is_set():
                return
            server, sock = self.web_server(runtime, host=host, port=port, embedded=stop is not None)
            bound = sock.getsockname()[1]
            shown = host if host not in ("0.0.0.0", "::") else "127.0.0.1"  # noqa: S104
            web = runtime.services.web
            from bot.services.web_access import Person

            workspaces = await web.console_workspaces()
            token = await web.make_link_token(Person("console", "me", "me"), workspaces)
            out(f"Admin web page: http://{shown}:{bound}/")
            out(
                f"Sign in (one-time link, valid 15 minutes): http://{shown}:{bound}/signin?token={token}"
            )
            if stop is None:
                await server.serve(sockets=[sock])
                return
            serving = asyncio.create_task(server.serve(sockets=[sock]), name="admin-web-page")
            stopping = asyncio.create_task(stop.wait())
            try:
                await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopping.cancel()
                server.should_exit = True
                try:
                    await asyncio.wait_for(asyncio.shield(serving), 0.5)
                except TimeoutError:
                    server.force_exit = True
                    serving.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await serving

    async def web_link(self, settings: Settings, *, port: int | None = None) -> str:
        """A new one-time sign-in link for this database's console workspaces
        (``studybot web link``): the token is stored, so the page already serving honours it.
        The address is WEB_PUBLIC_URL's, else loopback at ``port`` (else WEB_PORT, else 8765)."""
        from bot.services.web_access import Person

        async with self.runtime(settings, sandbox_on=False) as runtime:
            web = runtime.services.web
            workspaces = await web.console_workspaces()
            token = await web.make_link_token(Person("console", "me", "me"), workspaces)
        if settings.web_public_url:
            base = settings.web_public_url.rstrip("/")
        else:
            chosen = port if port is not None else settings.web_port
            base = f"http://127.0.0.1:{chosen or 8765}"
        return f"Sign in (one-time link, valid 15 minutes): {base}/signin?token={token}"

    def web_server(
        self, runtime: Runtime, *, host: str, port: int, embedded: bool = False
    ) -> tuple[Any, Any]:
        """The page over ``runtime``'s services, as a uvicorn server and its bound socket (not
        started). Beyond loopback only with OAuth sign-in configured. ``embedded``: inside
        ``studybot run``, whose own signal handling stops it (``server.should_exit``)."""
        import socket

        import uvicorn

        from bot.web.app import create_app

        settings = runtime.settings
        oauth, rights = web_sign_in(settings)
        loopback = ("127.0.0.1", "localhost", "[::1]", "::1")
        if host not in loopback and oauth is None:
            raise StartupError(
                f"the admin web page listens on loopback only unless Sign in with Discord or "
                f"Slack is configured (WEB_PUBLIC_URL and DISCORD_CLIENT_ID/SECRET or "
                f"SLACK_CLIENT_ID/SECRET); not on {host}. Use an SSH tunnel instead."
            )
        hosts = [*loopback]
        if oauth is not None:
            public = urlsplit(oauth.public_url).hostname
            if public:
                hosts.append(public)
        secret = settings.web_secret.get_secret_value().encode() if settings.web_secret else None
        app = create_app(runtime.services, secret=secret, hosts=hosts, oauth=oauth, rights=rights)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host.strip("[]"), port))
        except OSError as exc:
            sock.close()
            raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        sock.listen(128)  # before a link is printed: a browser that is quick queues
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            # Behind the reverse proxy: its X-Forwarded-Proto makes cookies Secure.
            proxy_headers=True,
            forwarded_allow_ips=settings.web_trusted_proxies,
        )
        if embedded:

            class Embedded(uvicorn.Server):
                @contextlib.contextmanager
                def capture_signals(self) -> Iterator[None]:
                    yield  # the bot's run_until_stopped handles SIGTERM and SIGINT

            return Embedded(config), sock
        return uvicorn.Server(config), sock

    @asynccontextmanager
    async def embedded_web(
        self, runtime: Runtime, host: str, port: int | None
    ) -> AsyncIterator[int | None]:
        """The admin web page inside ``studybot run`` (``--web-port``), stopped on the way out;
        yields the port it listens on (None: no page)."""
        if port is None:
            yield None
            return
        server, sock = self.web_server(runtime, host=host, port=port, embedded=True)
        log.info("admin web page on %s:%d", host, sock.getsockname()[1])
        task = asyncio.create_task(server.serve(sockets=[sock]), name="admin-web-page")
        try:
            yield int(sock.getsockname()[1])
        finally:
            server.should_exit = True
            try:
                await asyncio.wait_for(task, 5)
            except TimeoutError:
                task.cancel()
            except Exception:  # its failure must not hide the bot's own
                log.exception("the admin web page stopped with an error")
            sock.close()

    @staticmethod
    def preflight(settings: Settings, *, http_port: int | None = None) -> None:
        """Refuse settings a platform cannot start with before the database or sandbox start."""
        if settings.platform is Platform.DISCORD:
            from bot.adapters.discord.adapter import discord_token

            discord_token(settings)
        elif settings.platform is Platform.SLACK:
            from bot.adapters.slack.adapter import slack_mode

            slack_mode(settings, http_port)

    @asynccontextmanager
    async def operations(
        self, runtime: Runtime, adapter: PlatformAdapter, scheduler: Scheduler
    ) -> AsyncIterator[None]:
        """What an operator runs beside the bot: health and metrics, daily backups."""
        settings = runtime.settings
        health: HealthServer | None = None
        backups: asyncio.Task[None] | None = None
        if settings.health_port is not None:

            async def database() -> bool:
                return await runtime.db.writable()

            async def scheduler_alive() -> bool:
                return scheduler.is_alive()

            async def gateway() -> bool:
                return adapter.is_connected()

            health = HealthServer(
                runtime.metrics,
                {"gateway": gateway, "scheduler": scheduler_alive, "database": database},
                host=settings.health_host,
                port=settings.health_port,
            )
            await health.start()
        if settings.backup_dir is not None:
            job = BackupJob(
                runtime.db,
                runtime.clock,
                settings.backup_dir,
                settings.backup_keep,
                packs_dir=settings.uploads_dir,  # on PostgreSQL there is no file beside to go by
            )
            backups = asyncio.create_task(job.run(), name="daily-backups")
        try:
            yield
        finally:
            if backups is not None:
                backups.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await backups
            if health is not None:
                await health.stop()

    def adapter(
        self, runtime: Runtime, *, http_port: int | None = None, json_lines: bool = False
    ) -> PlatformAdapter:
        """The adapter for ``settings.platform``; platform libraries are imported only here."""
        platform = runtime.settings.platform
        if platform is Platform.CONSOLE:
            from bot.adapters.console import ConsoleAdapter

            return ConsoleAdapter(
                runtime.services,
                runtime.clock,
                json_mode=json_lines,
                files_dir=runtime.settings.files_dir,
            )
        if platform is Platform.DISCORD:
            from bot.adapters.discord import DiscordAdapter

            return DiscordAdapter(runtime.services, runtime.settings)
        if platform is Platform.SLACK:
            from bot.adapters.slack import SlackAdapter

            return SlackAdapter(runtime.services, runtime.settings, http_port=http_port)
        raise StartupError(f"the {platform.value} adapter is not part of this build yet")


async def run_until_stopped(
    adapter: PlatformAdapter, *, before_stop: Callable[[], Awaitable[None]] | None = None
) -> None:
    """Run the adapter until it returns, or until SIGTERM/SIGINT, then stop it cleanly.

    On a signal, ``before_stop`` runs first (the scheduler: it must stop starting posts and
    finish the ones in flight while the adapter can still send them), then the adapter stops.
    An error that ended the adapter (a rejected token, say) propagates; a signal is a normal
    stop, so ``studybot run`` then exits 0.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    handled: list[signal.Signals] = []
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            pass
    running = asyncio.create_task(adapter.run(), name="adapter")
    stopping = asyncio.create_task(stop.wait(), name="stop-signal")
    try:
        await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not running.done():
            log.info("stop requested: no new events; finishing work in flight")
            if before_stop is not None:
                await before_stop()
            await adapter.stop()
            try:
                await asyncio.wait_for(asyncio.shield(running), ADAPTER_STOP_SECONDS)
            except TimeoutError:
                log.warning(
                    "the adapter did not stop in %.0f s; cancelling it", ADAPTER_STOP_SECONDS
                )
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                return
        running.result()
    finally:
        stopping.cancel()
        for sig in handled:
            loop.remove_signal_handler(sig)


def web_sign_in(settings: Settings) -> tuple[OAuthSettings | None, AdminRights]:
    """The admin page's OAuth sign-in (None: not configured) and the rights check every write
    asks, through the bot's tokens (a platform without its bot token: refused, fail closed)."""
    from bot.web.oauth import AdminRights, DiscordClient, OAuthSettings, SlackClient

    discord_check = slack_check = None
    if settings.discord_token is not None:
        from bot.adapters.discord.identity import AdminRoleNames, admin_role_ids
        from bot.adapters.discord.web_rights import DiscordRights

        try:
            roles = admin_role_ids(settings.discord_admin_role)
        except AdminRoleNames as exc:
            raise StartupError(f"DISCORD_ADMIN_ROLE takes role ids, never names: {exc}") from None
        discord_check = DiscordRights(
            settings.discord_api_base, settings.discord_token.get_secret_value(), roles
        )
    if settings.slack_bot_token is not None:
        from bot.adapters.slack.web_rights import SlackRights

        slack_check = SlackRights(
            settings.slack_api_url,
            settings.slack_bot_token.get_secret_value(),
            settings.slack_admin_users,
        )
    rights = AdminRights(discord=discord_check, slack=slack_check)
    if settings.web_public_url is None:
        return None, rights
    discord = slack = None
    if settings.discord_client_id and settings.discord_client_secret:
        discord = DiscordClient(
            settings.discord_client_id,
            settings.discord_client_secret.get_secret_value(),
            settings.discord_oauth_url,
            settings.discord_api_base,
        )
    if settings.slack_client_id and settings.slack_client_secret:
        slack = SlackClient(
            settings.slack_client_id,
            settings.slack_client_secret.get_secret_value(),
            settings.slack_oidc_url,
            settings.slack_api_url,
        )
    if discord is None and slack is None:
        return None, rights
    return OAuthSettings(settings.web_public_url, discord, slack), rights


def _settings_problem(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"])
        parts.append(f"{field}: {err['msg'].removeprefix('Value error, ')}")
    return "invalid settings: " + "; ".join(parts)


def timer_loop(
    parts: SchedulerParts,
    gateway: ChatGateway,
    clock: Clock,
    grace: timedelta,
    *,
    concurrency: int = 16,
    prepare_lead: timedelta = PREPARE_LEAD,
    prepare_min: int = PREPARE_MIN,
    lease: timedelta | None = None,
    sync_every: timedelta | None = None,
) -> Scheduler:
    """The one timer loop with the scheduled questions' sources added first (re-sends,
    reveals, retries, new posts: the order members see them in); the caller adds the other
    timed work (:func:`due_sources`). ``concurrency``: channels served at once (1 in the
    console, so a scripted session prints the same lines every time)."""
    lanes = Lanes(concurrency)
    questions = scheduled_questions(
        parts,
        gateway,
        clock,
        grace,
        lanes,
        lease=lease,
        prepare_lead=prepare_lead,
        prepare_min=prepare_min,
    )
    scheduler = Scheduler(
        clock,
        parts.wakeup,
        lanes=lanes,
        sync_every=sync_every,
        next_post=questions.schedules.next_post,
    )
    for source in questions.sources:
        scheduler.add_source(source)
    return scheduler


def due_sources(
    services: Services, gateway: ChatGateway, *, command_prefix: str = "/"
) -> list[DueSource]:
    """Every kind of timed work besides the schedules, as sources of the one timer loop:
    weekly recaps, live rounds' next steps, role rewards, and review reminders where the
    gateway can send DMs."""
    sources: list[DueSource] = [
        services.recaps.due_source(gateway, command_prefix=command_prefix),
        services.rounds.due_source(gateway),
        services.rewards.due_source(gateway),
    ]
    if isinstance(gateway, DirectMessenger):
        sources.append(services.reminders.due_source(gateway))
    return sources


@dataclass(frozen=True, slots=True)
class Built:
    """What :func:`build_services` made: the services adapters are handed, and the parts the
    scheduler loop is handed (which include the stores a due batch writes)."""

    services: Services
    timed: SchedulerParts


def shares_database(db: Database, clock: Clock) -> bool:
    """Whether another process may change this database while this one runs: always on
    PostgreSQL (several bots), and on a SQLite file too (``studybot web`` beside the bot),
    except under a simulated clock: a console stepping through time is alone with its file,
    and a look every few seconds would be thousands of steps in a day's ``/clock advance``."""
    return db.engine == "postgresql" or not isinstance(clock, SimulatedClock)


def build_services(
    db: Database,
    clock: Clock,
    *,
    default_timezone: str = "UTC",
    quiz_window: timedelta | None = None,
    rng: random.Random | None = None,
    runner: SnippetRunner | None = None,
    runner_starting: asyncio.Future[None] | None = None,
    run_limits: RunLimits | None = None,
    metrics: Metrics | None = None,
    packs_dir: Path | None = None,
    schedule_grace: timedelta = DEFAULT_GRACE,
) -> Built:
    """Build every store and feature service, each with exactly what it touches. The one place
    the services are wired.

    ``packs_dir`` is where packs uploaded (or questions written) in chat are installed; None:
    they are checked, never installed.
    """
    # Several processes may share the database: re-read workspace settings that are older
    # than a few seconds, so a /settings change made through another process applies.
    shared = shares_database(db, clock)
    directory = Directory(
        db, default_timezone, settings_ttl=WORKSPACE_SETTINGS_TTL if shared else None
    )
    places = Places(directory, clock)
    packs = PackStore(db)
    catalogue = Catalogue(packs, clock)
    posts = PostStore(db)
    scores = ScoreStore(db)
    reviews = ReviewStore(db)
    wakeup = Wakeup()
    rewards = Rewards(
        places=places, directory=directory, store=RewardStore(db), clock=clock, wakeup=wakeup
    )
    answers = AnswerWriter(db, directory, score_rules, reviews, scored=rewards.scored)
    suggestion_store = SuggestionStore(db)
    posting = Posting(catalogue, posts, clock, wakeup, rng, credits=suggestion_store)
    schedule_store = ScheduleStore(db)
    schedules = ScheduleBook(
        schedule_store,
        places=places,
        catalogue=catalogue,
        posting=posting,
        posts=posts,
        directory=directory,
        clock=clock,
        wakeup=wakeup,
    )
    reminders = Reminders(
        places=places,
        directory=directory,
        reviews=reviews,
        store=ReminderStore(db),
        clock=clock,
        wakeup=wakeup,
    )
    gate = RunGate(clock, (run_limits or RunLimits()).per_minute)
    runs = SnippetRuns(
        runner,
        clock,
        runner_starting=runner_starting,
        run_limits=run_limits,
        metrics=metrics,
        gate=gate,
    )
    typed = TypedAnswers(runs)  # one grader (and one cache of reference values) for both
    review = ReviewService(
        places=places,
        directory=directory,
        catalogue=catalogue,
        reviews=reviews,
        clock=clock,
        reminders=reminders,
        scored=rewards.scored,
        typed=typed,
    )
    round_store = RoundStore(db)
    item_stats = ItemStatsStore(db)
    exercise_store = ExerciseStore(db)
    exercises = Exercises(
        places=places,
        catalogue=catalogue,
        posts=posts,
        directory=directory,
        answers=answers,
        store=exercise_store,
        runs=runs,
        clock=clock,
    )
    exercises.accommodations = AccommodationStore(db)  # extra time: a longer time limit
    extra_time = ExtraTime(posts, AccommodationStore(db), directory, wakeup)
    quiz = Quiz(
        places=places,
        catalogue=catalogue,
        posting=posting,
        posts=posts,
        directory=directory,
        answers=answers,
        clock=clock,
        quiz_window=quiz_window,
        metrics=metrics,
        graphs=ItemGraphs(runner, runner_starting=runner_starting),
        review=review,
        rules=(
            RoundRules(round_store, AccommodationStore(db), wakeup),
            extra_time,
            exercises,
            HintLog(item_stats, clock),
        ),
        typed=typed,
    )
    reports = QuestionReports(
        places=places,
        directory=directory,
        catalogue=catalogue,
        posts=posts,
        store=ReportStore(db),
        clock=clock,
    )
    pack_admin = PackAdmin(
        catalogue,
        packs_dir,
        places=places,
        schedules=schedule_store,
        runner=runner,
        runner_starting=runner_starting,
        code_timeout=(run_limits or RunLimits()).timeout_s,
        gate=gate,
        reports=reports,
        owners=CommunityOwners(db),
    )
    standings = Standings(places, directory, scores, clock, reviews, exercise_store)
    suggestions = Suggestions(
        places=places,
        directory=directory,
        packs=pack_admin,
        store=suggestion_store,
        clock=clock,
    )
    settings_service = WorkspaceSettingsService(
        places=places,
        directory=directory,
        store=SettingsStore(db),
        clock=clock,
        default_quiz_window=quiz_window,
        exercises=exercise_store,
    )
    analysis = ItemAnalysis(
        places=places,
        catalogue=catalogue,
        stats=item_stats,
        flags=ItemFlagStore(db),
        gradebook=GradebookStore(db),
        clock=clock,
        directory=directory,
    )
    reports.analysis = analysis  # /reports lists the flags held on questions too
    audit = AuditLog(places, AuditStore(db), clock)
    mastery_store = GroupMasteryStore(db)
    exams = Exams(
        places=places,
        directory=directory,
        catalogue=catalogue,
        store=ExamStore(db),
        reviews=reviews,
        mastery=mastery_store,
        clock=clock,
    )
    accommodations = Accommodations(
        places=places, directory=directory, store=AccommodationStore(db), clock=clock
    )
    audited_services: tuple[Audited, ...] = (
        analysis,
        exams,
        accommodations,
        schedules,
        reports,
        suggestions,
        pack_admin,
        settings_service,
        rewards,
    )
    for audited_service in audited_services:
        audited_service.audit = audit  # their changes are recorded, from chat and the page
    services = Services(
        places=places,
        catalogue=catalogue,
        quiz=quiz,
        posting=posting,
        schedules=schedules,
        history=QuestionHistory(places=places, catalogue=catalogue, posts=posts, clock=clock),
        recaps=Recaps(
            places=places,
            directory=directory,
            catalogue=catalogue,
            scores=scores,
            store=RecapStore(db),
            clock=clock,
            wakeup=wakeup,
            grace=schedule_grace,  # a recap late by more is skipped, as a question is
        ),
        reports=reports,
        settings=settings_service,
        standings=standings,
        review=review,
        reminders=reminders,
        runs=runs,
        exercises=exercises,
        packs=pack_admin,
        suggestions=suggestions,
        audit=audit,
        home=Home(
            places=places,
            directory=directory,
            catalogue=catalogue,
            posts=posts,
            standings=standings,
            schedules=schedules,
            reports=reports,
            suggestions=suggestions,
            clock=clock,
        ),
        rewards=rewards,
        score_imports=ScoreImports(store=scores, clock=clock, scored=rewards.scored),
        rounds=Rounds(
            places=places,
            directory=directory,
            catalogue=catalogue,
            posting=posting,
            store=round_store,
            reviews=reviews,
            clock=clock,
            wakeup=wakeup,
        ),
        web=WebAccess(store=WebSessionStore(db), places=places, clock=clock),
        analysis=analysis,
        mastery=GroupMastery(places, mastery_store, reviews, clock),
        exams=exams,
        accommodations=accommodations,
    )
    services.standings.exams = exams  # /stats counts down to the exam
    services.rounds.accommodations = AccommodationStore(db)  # extra time keeps questions open
    services.review.accommodations = AccommodationStore(db)  # fewer choices on review cards
    services.recaps.exams = exams  # so does the weekly recap
    services.review.exams = exams  # exam prep brings cards forward in /review
    timed = SchedulerParts(
        db=db,
        directory=directory,
        posts=posts,
        packs=packs,
        posting=posting,
        quiz=quiz,
        schedules=schedules,
        wakeup=wakeup,
        metrics=metrics,
        rounds=services.rounds,
        exams=exams,
        extra_time=extra_time,
    )
    return Built(services, timed)
