"""``studybot doctor``: is this machine ready to run the bot? Each check says exactly what is
wrong and how to fix it, and the exit code says whether anything failed.

Secrets are inspected only for their shape (a Discord bot token has three dot-separated
parts; Slack tokens start with ``xoxb-`` / ``xapp-``); their values are never printed.
"""

from __future__ import annotations

import enum
import ipaddress
import re
import socket
import sqlite3
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import SecretStr

from bot.questions.lint import lint_packs
from bot.settings import Platform, Settings
from bot.storage.migrate import available_migrations
from bot.text import shown_path

__all__ = ["Check", "Status", "rewards_checks", "run_checks", "web_checks"]


class Status(enum.StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "FAIL"


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str

    def __str__(self) -> str:
        return f"[{self.status.value:>4}] {self.name}: {self.detail}"


_DISCORD_TOKEN = re.compile(r"^[A-Za-z0-9_-]{18,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}$")
_SIGNING_SECRET = re.compile(r"^[0-9a-f]{32}$")


def _shape(name: str, secret: SecretStr | None, ok: bool, expected: str) -> Check:
    if secret is None:
        return Check(name, Status.FAIL, "not set")
    if not ok:
        return Check(name, Status.FAIL, f"set, but does not look like {expected}")
    return Check(name, Status.OK, f"set ({len(secret.get_secret_value())} characters)")


def _admin_role_check(setting: str) -> Check:
    """Admin roles are ids: a name would make whoever can create a role of that name an admin."""
    from bot.adapters.discord.identity import COPY_ROLE_ID, AdminRoleNames, admin_role_ids

    try:
        ids = admin_role_ids(setting)
    except AdminRoleNames as exc:
        names = ", ".join(repr(n) for n in exc.names)
        return Check(
            "DISCORD_ADMIN_ROLE",
            Status.FAIL,
            f"{names} is not a role id; admin roles are ids only, and the bot refuses to start "
            f"(naming the ids of roles with that name). Copy the id: {COPY_ROLE_ID}",
        )
    return Check("DISCORD_ADMIN_ROLE", Status.OK, f"{len(ids)} role id(s)")


def platform_check(settings: Settings, *, platform_set: bool, terminal: bool) -> Check:
    """The platform a server must choose: console is the default, and `studybot run` refuses
    it without a terminal (a container from `.env.example` would otherwise restart in a
    loop). A warning, not a failure: the console in a terminal is a fine way to try the bot."""
    if settings.platform is not Platform.CONSOLE:
        return Check("settings", Status.OK, f"platform {settings.platform.value}")
    server = "a server sets STUDYBOT_PLATFORM=discord or STUDYBOT_PLATFORM=slack"
    if not platform_set:
        return Check(
            "settings",
            Status.WARN,
            "platform console (STUDYBOT_PLATFORM is not set): `studybot run` chats in a "
            f"terminal and refuses without one; {server}",
        )
    if not terminal:
        return Check(
            "settings",
            Status.WARN,
            "platform console (STUDYBOT_PLATFORM=console): no terminal here, so `studybot "
            f"run` would refuse to start; {server}",
        )
    return Check("settings", Status.OK, "platform console (STUDYBOT_PLATFORM=console)")


def settings_checks(
    settings: Settings, *, http: bool = False, platform_set: bool = True, terminal: bool = True
) -> list[Check]:
    """What the chosen platform needs, judged by shape only."""
    checks = [platform_check(settings, platform_set=platform_set, terminal=terminal)]
    if settings.platform is Platform.DISCORD:
        token = settings.discord_token
        checks.append(
            _shape(
                "DISCORD_TOKEN",
                token,
                token is not None and bool(_DISCORD_TOKEN.match(token.get_secret_value())),
                "a bot token (three parts separated by dots)",
            )
        )
        if settings.discord_application_id is None:
            checks.append(
                Check("DISCORD_APPLICATION_ID", Status.WARN, "not set; invite-url needs it")
            )
        if settings.discord_admin_role:
            checks.append(_admin_role_check(settings.discord_admin_role))
    elif settings.platform is Platform.SLACK:
        bot = settings.slack_bot_token
        checks.append(
            _shape(
                "SLACK_BOT_TOKEN",
                bot,
                bot is not None and bot.get_secret_value().startswith("xoxb-"),
                "a bot token (xoxb-...)",
            )
        )
        app, secret = settings.slack_app_token, settings.slack_signing_secret
        if app is not None or not http:
            checks.append(
                _shape(
                    "SLACK_APP_TOKEN",
                    app,
                    app is not None and app.get_secret_value().startswith("xapp-"),
                    "an app-level token (xapp-...) for Socket Mode",
                )
            )
        if http or (app is None and secret is not None):
            checks.append(
                _shape(
                    "SLACK_SIGNING_SECRET",
                    secret,
                    secret is not None and bool(_SIGNING_SECRET.match(secret.get_secret_value())),
                    "a signing secret (32 hex characters)",
                )
            )
    return checks


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def web_checks(settings: Settings) -> list[Check]:
    """The admin web page's port and public URL, and its Discord / Slack sign-in: said only
    when one of them is set (the page's loopback default needs none)."""
    checks: list[Check] = []
    if settings.web_port:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", settings.web_port))
            except OSError as exc:
                checks.append(
                    Check(
                        "WEB_PORT",
                        Status.WARN,
                        f"{settings.web_port} is taken ({exc.strerror}); is the page already "
                        "running? Choose another port or stop it.",
                    )
                )
            else:
                checks.append(Check("WEB_PORT", Status.OK, f"{settings.web_port} is free"))
    clients = (
        ("Discord", "DISCORD", settings.discord_client_id, settings.discord_client_secret),
        ("Slack", "SLACK", settings.slack_client_id, settings.slack_client_secret),
    )
    wanted = [c for c in clients if c[2] or c[3]]
    for name, prefix, client_id, secret in wanted:
        if not client_id or secret is None:
            missing = f"{prefix}_CLIENT_ID" if not client_id else f"{prefix}_CLIENT_SECRET"
            checks.append(
                Check(f"{name} sign-in", Status.FAIL, f"{missing} is not set; both are needed")
            )
    url = settings.web_public_url
    if url is None:
        if wanted:
            checks.append(
                Check(
                    "WEB_PUBLIC_URL",
                    Status.FAIL,
                    "not set: sign-in needs the page's public https base URL (the redirect "
                    "URIs are made from it), e.g. https://admin.example.org",
                )
            )
        return checks
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme not in ("http", "https") or not host:
        problem = "is not an http(s) URL with a host"
    elif parts.scheme != "https" and not _loopback(host):
        problem = (
            "must be https (http only on loopback): cookies and codes must not travel in clear"
        )
    elif parts.query or parts.fragment or parts.username or parts.password:
        problem = "must be a base URL (no query, fragment or user); redirect URIs are built on it"
    elif parts.path not in ("", "/"):
        problem = "must be the site's root (the page's paths start at /); no path"
    else:
        problem = ""
    if problem:
        checks.append(Check("WEB_PUBLIC_URL", Status.FAIL, f"{url!r} {problem}"))
        return checks
    base = url.rstrip("/")
    uris = ", ".join(
        f"{base}/signin/{name.lower()}/callback" for name, _, cid, sec in wanted if cid and sec
    )
    detail = f"{base}" + (f"; register the redirect URI(s) {uris}" if uris else "")
    checks.append(Check("WEB_PUBLIC_URL", Status.OK, detail))
    if settings.discord_sign_in and settings.discord_token is None:
        checks.append(
            Check(
                "Discord sign-in",
                Status.WARN,
                "DISCORD_TOKEN is not set: rights cannot be checked through the bot, so every "
                "change on the page is refused",
            )
        )
    if settings.slack_sign_in and settings.slack_bot_token is None:
        checks.append(
            Check(
                "Slack sign-in",
                Status.WARN,
                "SLACK_BOT_TOKEN is not set: rights cannot be checked through the bot, so no "
                "one administers a workspace on the page",
            )
        )
    return checks


def database_check(path: Path) -> Check:
    """Reachable, intact, and at the schema version this studybot expects (read-only)."""
    latest = available_migrations()[-1].version
    if not path.exists():
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.exists():
            return Check("database", Status.FAIL, f"{path}: folder {parent} does not exist")
        return Check("database", Status.WARN, f"{path} does not exist yet; created at start")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            quick = str(conn.execute("PRAGMA quick_check").fetchone()[0])
    except sqlite3.Error as exc:
        return Check("database", Status.FAIL, f"{path}: {exc}")
    if quick != "ok":
        return Check("database", Status.FAIL, f"{path}: {quick} (run `studybot db check`)")
    return _schema_check(str(path), version, latest, ok=f"schema {version}, intact")


def _schema_check(name: str, version: int, latest: int, *, ok: str) -> Check:
    """The same verdict for either engine: a newer schema fails (an older studybot must not
    write to it), an older one is migrated at the next start."""
    if version > latest:
        return Check(
            "database", Status.FAIL, f"{name}: schema {version} is newer than this studybot"
        )
    if version < latest:
        return Check(
            "database",
            Status.WARN,
            f"{name}: schema {version}, migrated to {latest} at the next start",
        )
    return Check("database", Status.OK, f"{name}: {ok}")


async def postgres_check(url: str) -> Check:
    """PostgreSQL (``DATABASE_URL``): reachable, and at the schema version this studybot
    expects. Read-only: it connects and reads ``studybot_schema``, nothing is migrated."""
    import asyncpg

    from bot.storage.postgres import redact

    name = redact(url)
    latest = available_migrations("postgresql")[-1].version
    try:
        conn = await asyncpg.connect(url, timeout=5)
    except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
        return Check("database", Status.FAIL, f"{name}: cannot connect: {exc}")
    try:
        version = await conn.fetchval("SELECT max(version) FROM studybot_schema")
    except asyncpg.UndefinedTableError:
        version = 0
    finally:
        await conn.close()
    version = int(version or 0)
    if version == 0:
        return Check("database", Status.WARN, f"{name}: empty; the schema is created at start")
    return _schema_check(name, version, latest, ok=f"schema {version}")


def timezone_checks(path: Path, default: str) -> list[Check]:
    """Workspaces whose timezone is not ``STUDYBOT_TIMEZONE``: the setting only seeds new ones.

    A group that set ``STUDYBOT_TIMEZONE`` after its first start would otherwise believe it
    applies; the line says which zone each workspace really uses and how to change it.
    """
    if not path.exists():
        return []
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
            rows = conn.execute(
                "SELECT platform, external_id, coalesce(name, ''), timezone FROM workspaces "
                "WHERE timezone != ? ORDER BY id",
                (default,),
            ).fetchall()
    except sqlite3.Error:
        return []  # an old or broken database: database_check reports it
    if not rows:
        return []
    shown = ", ".join(
        f"{_workspace_name(platform, name or external)} uses {tz}"
        for platform, external, name, tz in rows[:5]
    )
    more = f" (and {len(rows) - 5} more)" if len(rows) > 5 else ""
    return [
        Check(
            "timezone",
            Status.WARN,
            f"STUDYBOT_TIMEZONE={default} only applies to new workspaces: {shown}{more}; "
            "an admin changes it with /settings timezone NAME",
        )
    ]


def _workspace_name(platform: str, name: str) -> str:
    """ "discord workspace Physics club"; the console's one workspace is named after its
    platform, and "console console" read like a typo."""
    if name == platform:
        return f"the {platform} workspace"
    return f"{platform} workspace {name}"


def packs_check(packs_dir: Path, uploads_dir: Path | None = None) -> list[Check]:
    """The packs a start loads: ``packs_dir`` (bundled or STUDYBOT_PACKS) and the group's own,
    uploaded or written in chat, in ``uploads_dir`` beside the database."""
    result = lint_packs(packs_dir)
    uploaded = None
    if uploads_dir is not None and uploads_dir.is_dir() and any(uploads_dir.iterdir()):
        uploaded = lint_packs(uploads_dir)
        result.problems.extend(uploaded.problems)
    bundled = len(result.packs)
    items = sum(len(p.pack.items) for p in result.packs)
    where = f" in {packs_dir}"
    if uploaded is not None:
        items += sum(len(p.pack.items) for p in uploaded.packs)
        where = (
            f": {bundled} in {packs_dir}, {len(uploaded.packs)} uploaded or written in chat "
            f"in {uploads_dir}"
        )
        result.packs.extend(uploaded.packs)
    if result.errors:
        first = result.errors[0]
        more = f" (and {len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        return [
            Check(
                "packs",
                Status.FAIL,
                f"{first}{more}; see `studybot questions lint {packs_dir}`",
            )
        ]
    warnings = [p for p in result.problems if p.severity == "warning"]
    status = Status.WARN if warnings else Status.OK
    note = ""
    if warnings:
        more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
        note = f"; {warnings[0]}{more}; see `studybot questions lint {packs_dir}`"
    return [Check("packs", status, f"{len(result.packs)} pack(s), {items} item(s){where}{note}")]


def time_check(tz_name: str) -> Check:
    zones = zoneinfo.available_timezones()
    if not zones:
        return Check("time", Status.FAIL, "no IANA timezone data (install tzdata)")
    try:
        zone = zoneinfo.ZoneInfo(tz_name)
    except zoneinfo.ZoneInfoNotFoundError:
        return Check("time", Status.FAIL, f"timezone {tz_name!r} is not in the timezone data")
    now = datetime.now(UTC)
    if now.year < 2024:
        return Check("time", Status.FAIL, f"the system clock says {now:%Y-%m-%d}; fix the clock")
    local = now.astimezone(zone)
    return Check(
        "time",
        Status.OK,
        f"{len(zones)} timezones; {tz_name} is {local:%Y-%m-%d %H:%M %Z} now",
    )


async def sandbox_check(settings: Settings) -> Check:
    """Start the real sandbox manager (a warm pool is not needed) and report its verdict."""
    from bot.sandbox import Sandbox, SandboxConfig

    if not settings.sandbox_enabled:
        return Check("sandbox", Status.WARN, "turned off (SANDBOX_ENABLED=false); /run disabled")
    config = SandboxConfig.from_settings(settings, pool_size=1, forks_ahead=1)
    from bot.sandbox.host.probe import bwrap_check

    usable, said = bwrap_check(config)  # which bwrap, and whether the jail's uid can run it
    if not usable:
        return Check("sandbox", Status.FAIL, f"{said}; /run disabled")
    async with Sandbox(config) as sandbox:
        if not sandbox.available:
            return Check("sandbox", Status.FAIL, f"{sandbox.unavailable_reason}; /run disabled")
        result = await sandbox.run("print(6 * 7)")
    if result.stdout.strip() != "42":
        return Check("sandbox", Status.FAIL, f"a test snippet gave {result.outcome.value}")
    return Check(
        "sandbox", Status.OK, f"isolation works; a test snippet ran in {result.duration_ms:.0f} ms"
    )


async def run_checks(
    settings: Settings, *, http: bool = False, platform_set: bool = True, terminal: bool = True
) -> list[Check]:
    """Every check; ``platform_set``: the platform was chosen (option or STUDYBOT_PLATFORM),
    ``terminal``: stdin is one (what the console needs)."""
    checks = settings_checks(settings, http=http, platform_set=platform_set, terminal=terminal)
    checks.extend(web_checks(settings))
    if settings.database_url is not None:
        checks.append(await postgres_check(settings.database_url.get_secret_value()))
    else:
        checks.append(database_check(Path(shown_path(settings.db_path))))
    checks.extend(
        packs_check(Path(shown_path(settings.packs_dir)), Path(shown_path(settings.uploads_dir)))
    )
    checks.append(time_check(settings.timezone))
    if settings.database_url is None:  # (the workspace timezone hint reads the SQLite file)
        checks.extend(timezone_checks(Path(settings.db_path), settings.timezone))
    checks.extend(await rewards_checks(settings))
    checks.append(await sandbox_check(settings))
    return checks


@dataclass(frozen=True, slots=True)
class _StoredReward:
    id: int
    workspace: str  # the platform's id
    role: str
    role_name: str


_REWARDS_SQL = (
    "SELECT r.id, w.external_id, r.role, r.role_name FROM rewards r"
    " JOIN workspaces w ON w.id = r.workspace_id WHERE w.platform = $1 ORDER BY r.id"
)


async def _stored_rewards(settings: Settings) -> list[_StoredReward]:
    """The configured platform's role rewards (read-only; none if the database has no such
    table yet, or cannot be read: the database check says why)."""
    platform = settings.platform.value
    rows: list[tuple[object, ...]] = []
    if settings.database_url is not None:
        import asyncpg

        try:
            conn = await asyncpg.connect(settings.database_url.get_secret_value(), timeout=5)
        except (OSError, TimeoutError, asyncpg.PostgresError):
            return []
        try:
            rows = [tuple(r) for r in await conn.fetch(_REWARDS_SQL, platform)]
        except asyncpg.PostgresError:
            return []
        finally:
            await conn.close()
    else:
        rows = _sqlite_rewards(Path(settings.db_path), platform)
    return [_StoredReward(int(str(r[0])), str(r[1]), str(r[2]), str(r[3])) for r in rows]


def _sqlite_rewards(path: Path, platform: str) -> list[tuple[object, ...]]:
    if not path.exists():
        return []
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            sql = _REWARDS_SQL.replace("$1", "?")
            return [tuple(r) for r in db.execute(sql, (platform,)).fetchall()]
    except sqlite3.Error:
        return []


async def rewards_checks(settings: Settings) -> list[Check]:
    """Every role reward's role can still be given: on Discord below the bot's highest role
    (someone may have moved the roles since it was added), on Slack an enabled user group.
    And it carries no power over the server or the bot (someone may have given it Manage
    Roles, or made it the bot's admin role, since): the core's rule,
    :func:`bot.core.rewards.power_problem`. A reward the bot may not manage is never applied,
    one whose role gained power is suspended at its next grant; this says which and why."""
    rewards = await _stored_rewards(settings)
    if not rewards or settings.platform is Platform.CONSOLE:
        return []
    try:
        if settings.platform is Platform.DISCORD:
            problems = await _discord_reward_problems(settings, rewards)
        else:
            problems = await _slack_reward_problems(settings, rewards)
    except Exception as exc:  # unreachable platform, a refused token: say so, do not fail
        return [Check("role rewards", Status.WARN, f"cannot ask {settings.platform.value}: {exc}")]
    if not problems:
        return [
            Check("role rewards", Status.OK, f"{len(rewards)} reward(s); every role can be given")
        ]
    return [
        Check(
            "role rewards",
            Status.FAIL,
            f"reward #{r.id} ({r.role_name}, workspace {r.workspace}): {reason}; the bot does "
            "not give or take it until this is fixed",
        )
        for r, reason in problems
    ]


async def _discord_reward_problems(
    settings: Settings, rewards: list[_StoredReward]
) -> list[tuple[_StoredReward, str]]:
    import aiohttp

    from bot.adapters.discord.identity import AdminRoleNames, admin_role_ids
    from bot.adapters.discord.roles import role_powers, role_problem, roles_from_api
    from bot.core.rewards import power_problem

    if settings.discord_token is None:
        raise RuntimeError("DISCORD_TOKEN is not set")
    try:
        admin_roles = admin_role_ids(settings.discord_admin_role)
    except AdminRoleNames:  # the DISCORD_ADMIN_ROLE check says so
        admin_roles = frozenset()
    base = settings.discord_api_base.rstrip("/")
    headers = {"Authorization": f"Bot {settings.discord_token.get_secret_value()}"}
    found: list[tuple[_StoredReward, str]] = []
    timeout = aiohttp.ClientTimeout(total=10)
    async with aiohttp.ClientSession(headers=headers, timeout=timeout) as http:

        async def get(path: str) -> object:
            async with http.get(base + path) as response:
                if response.status == 404:
                    return None
                response.raise_for_status()
                return await response.json()

        me = await get("/users/@me")
        bot_id = str(me.get("id")) if isinstance(me, dict) else ""
        for reward in rewards:
            roles = await get(f"/guilds/{reward.workspace}/roles")
            member = await get(f"/guilds/{reward.workspace}/members/{bot_id}")
            if not isinstance(roles, list) or not isinstance(member, dict):
                found.append((reward, "the bot is not in that server"))
                continue
            facts = roles_from_api(roles)
            target = int(reward.role) if reward.role.isdigit() else 0
            reason = role_problem(
                target, facts, [int(r) for r in member.get("roles") or []], int(reward.workspace)
            )
            if reason is None and target in facts:
                powers = role_powers(facts[target].permissions, admin_role=target in admin_roles)
                reason = power_problem(reward.role_name, powers)
            if reason is not None:
                found.append((reward, reason))
    return found


async def _slack_reward_problems(
    settings: Settings, rewards: list[_StoredReward]
) -> list[tuple[_StoredReward, str]]:
    from slack_sdk.web.async_client import AsyncWebClient

    from bot.core.rewards import Power, power_problem

    if settings.slack_bot_token is None:
        raise RuntimeError("SLACK_BOT_TOKEN is not set")
    client = AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url
    )
    listed = await client.usergroups_list(include_disabled=True)
    groups = {
        str(g.get("id")): not g.get("date_delete")
        for g in listed.get("usergroups") or []
        if isinstance(g, dict)
    }
    found: list[tuple[_StoredReward, str]] = []
    for reward in rewards:
        if reward.role not in groups:
            found.append((reward, "there is no such user group in this workspace"))
        elif not groups[reward.role]:
            found.append((reward, "that user group is disabled"))
        elif reward.role == settings.slack_admin_usergroup:
            powers = frozenset({Power.BOT_ADMIN})
            found.append((reward, power_problem(reward.role_name, powers) or ""))
    return found
