"""Settings, read from the environment and an optional ``.env`` file.

Built once in :mod:`bot.app` (never at import time), then passed down. Tokens are
``SecretStr`` so that a ``repr``, a log line or a traceback shows ``**********``; the sandbox
never receives this object at all. Every field here is documented in ``.env.example``.
"""

from __future__ import annotations

import enum
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from bot.core.durations import parse_duration

__all__ = ["Platform", "Settings", "default_packs_dir", "uploads_dir_for"]


class Platform(enum.StrEnum):
    CONSOLE = "console"
    DISCORD = "discord"
    SLACK = "slack"


def default_packs_dir() -> Path:
    """The bundled ``questions/`` folder next to the package (a source checkout or image)."""
    bundled = Path(__file__).resolve().parent.parent / "questions"
    return bundled if bundled.is_dir() else Path("questions")


def uploads_dir_for(db_path: Path) -> Path:
    """The packs folder beside a database file (``studybot.sqlite3`` -> ``studybot-packs``):
    one rule for the bot that installs packs there and the backups that copy them."""
    return db_path.with_name(f"{db_path.stem}-packs")


CommaList = Annotated[tuple[str, ...], NoDecode]


class Settings(BaseSettings):
    """Every knob of the bot. Field docs are the operator-facing explanation."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        frozen=True,
        # `.env.example` copied as-is leaves `DISCORD_TOKEN=`: empty means "not set".
        env_ignore_empty=True,
    )

    # --- general -----------------------------------------------------------------------------
    platform: Platform = Field(Platform.CONSOLE, validation_alias="STUDYBOT_PLATFORM")
    db_path: Path = Field(Path("studybot.sqlite3"), validation_alias="STUDYBOT_DB")
    # PostgreSQL (postgresql://user:password@host/db) instead of the SQLite file: for several
    # bot processes. A secret: it may carry a password.
    database_url: SecretStr | None = Field(None, validation_alias="DATABASE_URL")
    packs_dir: Path = Field(default_factory=default_packs_dir, validation_alias="STUDYBOT_PACKS")
    timezone: str = Field("UTC", validation_alias="STUDYBOT_TIMEZONE")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", validation_alias="LOG_LEVEL"
    )
    log_format: Literal["text", "json"] = Field("text", validation_alias="LOG_FORMAT")

    # --- discord -----------------------------------------------------------------------------
    discord_token: SecretStr | None = Field(None, validation_alias="DISCORD_TOKEN")
    discord_application_id: int | None = Field(None, validation_alias="DISCORD_APPLICATION_ID")
    discord_dev_guild: int | None = Field(None, validation_alias="DISCORD_DEV_GUILD")
    discord_api_base: str = Field(
        "https://discord.com/api/v10", validation_alias="DISCORD_API_BASE"
    )
    discord_gateway_url: str | None = Field(None, validation_alias="DISCORD_GATEWAY_URL")
    discord_admin_role: str | None = Field(None, validation_alias="DISCORD_ADMIN_ROLE")
    discord_threads: bool = Field(False, validation_alias="DISCORD_THREADS")
    # Several processes: the shards this one runs ("0-3", "0,2,5") out of DISCORD_SHARD_COUNT.
    # Kept as text here; bot/adapters/discord/shards.py parses and checks it (settings import
    # no adapter). Both unset: one process, every server, as without sharding.
    discord_shards: str | None = Field(None, validation_alias="DISCORD_SHARDS")
    discord_shard_count: int | None = Field(None, ge=1, validation_alias="DISCORD_SHARD_COUNT")

    # --- slack -------------------------------------------------------------------------------
    slack_bot_token: SecretStr | None = Field(None, validation_alias="SLACK_BOT_TOKEN")
    slack_app_token: SecretStr | None = Field(None, validation_alias="SLACK_APP_TOKEN")
    slack_signing_secret: SecretStr | None = Field(None, validation_alias="SLACK_SIGNING_SECRET")
    slack_api_url: str = Field("https://slack.com/api/", validation_alias="SLACK_API_URL")
    slack_admin_users: CommaList = Field((), validation_alias="SLACK_ADMIN_USERS")
    slack_admin_usergroup: str | None = Field(None, validation_alias="SLACK_ADMIN_USERGROUP")

    # --- schedules ---------------------------------------------------------------------------
    schedule_grace: timedelta = Field(timedelta(hours=2), validation_alias="SCHEDULE_GRACE")
    quiz_window: timedelta = Field(timedelta(minutes=30), validation_alias="QUIZ_WINDOW")

    # --- snippet sandbox ---------------------------------------------------------------------
    sandbox_enabled: bool = Field(True, validation_alias="SANDBOX_ENABLED")
    sandbox_timeout: float = Field(10.0, gt=0, le=300, validation_alias="SANDBOX_TIMEOUT")
    sandbox_memory_mb: int = Field(512, ge=64, validation_alias="SANDBOX_MEMORY_MB")
    sandbox_pids: int = Field(64, ge=4, validation_alias="SANDBOX_PIDS")
    sandbox_output_bytes: int = Field(65536, ge=1024, validation_alias="SANDBOX_OUTPUT_BYTES")
    sandbox_tmp_mb: int = Field(64, ge=1, validation_alias="SANDBOX_TMP_MB")
    # Whole jails kept warm when the fork server is off (SANDBOX_FORK_SERVER=false).
    sandbox_pool_size: int = Field(2, ge=0, le=32, validation_alias="SANDBOX_POOL_SIZE")
    # One torch-warm zygote forks a child per run; false = one whole jail per run (slower).
    sandbox_fork_server: bool = Field(True, validation_alias="SANDBOX_FORK_SERVER")
    # Fork-server children kept ready for a burst (a few MiB each; they share the torch image).
    sandbox_forks_ahead: int = Field(24, ge=0, le=128, validation_alias="SANDBOX_FORKS_AHEAD")
    # Jails running at once, for all members together; further runs wait (at most their timeout).
    sandbox_max_running: int = Field(4, ge=1, le=64, validation_alias="SANDBOX_MAX_RUNNING")
    # A delegated cgroup directory for the jails (systemd Delegate=yes, a container's own
    # cgroup); empty = the manager's own cgroup.
    sandbox_cgroup_parent: str = Field("", validation_alias="SANDBOX_CGROUP_PARENT")
    # Sandbox hosts (`studybot sandbox serve`), comma-separated; empty = the embedded manager.
    sandbox_urls: str = Field("", validation_alias="SANDBOX_URLS")
    # Shared by the bot and its sandbox hosts; admits runs, nothing else.
    sandbox_token: SecretStr | None = Field(None, validation_alias="SANDBOX_TOKEN")
    run_max_bytes: int = Field(65536, ge=1, le=65536, validation_alias="RUN_MAX_BYTES")
    run_rate_per_minute: int = Field(6, ge=1, validation_alias="RUN_RATE_PER_MINUTE")

    # --- the admin web page (studybot web) ---------------------------------------------------
    # Signs session cookies; unset, a random one per process (sessions end when it stops).
    web_secret: SecretStr | None = Field(None, validation_alias="WEB_SECRET")
    # The page's public base URL (https://admin.example.org): the OAuth redirect URIs are
    # WEB_PUBLIC_URL/signin/discord/callback and WEB_PUBLIC_URL/signin/slack/callback.
    web_public_url: str | None = Field(None, validation_alias="WEB_PUBLIC_URL")
    # The page's port (`studybot web` and `studybot run --web-port` take it as their default).
    web_port: int | None = Field(None, ge=0, le=65535, validation_alias="WEB_PORT")
    # Where the page listens; beyond loopback only with Discord or Slack sign-in configured.
    web_host: str = Field("127.0.0.1", validation_alias="WEB_HOST")
    # Addresses whose X-Forwarded-Proto/For the page believes (the reverse proxy's); "*" only
    # when nothing but the proxy can reach the page's port (as in deploy/compose.yaml).
    web_trusted_proxies: str = Field("127.0.0.1", validation_alias="WEB_TRUSTED_PROXIES")
    # Sign in with Discord (OAuth2, scopes `identify guilds`): the application's OAuth2 client.
    discord_client_id: str | None = Field(None, validation_alias="DISCORD_CLIENT_ID")
    discord_client_secret: SecretStr | None = Field(None, validation_alias="DISCORD_CLIENT_SECRET")
    discord_oauth_url: str = Field(
        "https://discord.com/oauth2/authorize", validation_alias="DISCORD_OAUTH_URL"
    )
    # Sign in with Slack (OpenID Connect): the Slack app's client id and secret.
    slack_client_id: str | None = Field(None, validation_alias="SLACK_CLIENT_ID")
    slack_client_secret: SecretStr | None = Field(None, validation_alias="SLACK_CLIENT_SECRET")
    # Slack's OpenID issuer: its /openid/connect/authorize and /openid/connect/keys are used.
    slack_oidc_url: str = Field("https://slack.com", validation_alias="SLACK_OIDC_URL")

    # --- operations --------------------------------------------------------------------------
    health_port: int | None = Field(None, ge=0, le=65535, validation_alias="HEALTH_PORT")
    health_host: str = Field("127.0.0.1", validation_alias="HEALTH_HOST")
    backup_dir: Path | None = Field(None, validation_alias="BACKUP_DIR")
    backup_keep: int = Field(7, ge=1, validation_alias="BACKUP_KEEP")

    @property
    def uploads_dir(self) -> Path:
        """Where packs uploaded in chat are installed: beside the database, named after it.

        They are members' data like scores, so they live with the
        database, and every start loads them whatever ``--packs``/``STUDYBOT_PACKS`` says.
        """
        return uploads_dir_for(self.db_path)

    @property
    def files_dir(self) -> Path:
        """Where the console saves what runs return (figures, files, graphs): beside the DB."""
        return self.db_path.with_name(f"{self.db_path.stem}-files")

    @property
    def discord_sign_in(self) -> bool:
        """Whether Sign in with Discord is configured (client id, secret and public URL)."""
        return bool(self.discord_client_id and self.discord_client_secret and self.web_public_url)

    @property
    def slack_sign_in(self) -> bool:
        """Whether Sign in with Slack is configured (client id, secret and public URL)."""
        return bool(self.slack_client_id and self.slack_client_secret and self.web_public_url)

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value():
            return None
        from bot.core.database_url import is_postgres_url

        if not is_postgres_url(value.get_secret_value()):
            raise ValueError("expected a postgresql://user:password@host:port/database URL")
        return value

    @property
    def database_target(self) -> Path | str:
        """What ``Database.open`` is given: the PostgreSQL URL if set, else the SQLite file."""
        if self.database_url is not None:
            return self.database_url.get_secret_value()
        return self.db_path

    @property
    def database_name(self) -> str:
        """The database for messages and logs: the file, or the URL without its password."""
        if self.database_url is None:
            return str(self.db_path)
        from bot.core.database_url import redact

        return redact(self.database_url.get_secret_value())

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown IANA timezone {value!r} (e.g. Europe/Berlin)") from exc
        return value

    @field_validator("schedule_grace", "quiz_window", mode="before")
    @classmethod
    def _duration(cls, value: object) -> object:
        if isinstance(value, str):
            return parse_duration(value)
        return value

    @field_validator("slack_admin_users", mode="before")
    @classmethod
    def _comma_list(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value
