"""Files members attach to Slack messages, fetched for the core (question pack uploads).

Slack serves a file's bytes at its ``url_private_download`` (or ``url_private``) to a request
that carries the bot token as ``Authorization: Bearer xoxb-…`` and has the ``files:read``
scope. Three things here are deliberate:

* **The file is described by ``files.info``**, not only by the shortcut's payload: some
  payload entries are stubs (``file_access: check_file_info``), and the call also proves the
  bot may read the file, with a readable error when the scope is missing.
* **The bot token goes only to Slack's file host** (``files.slack.com``, or ``files.`` plus
  the ``SLACK_API_URL`` host) or to the ``SLACK_API_URL`` host itself, which is how the test
  fake serves files; never to whatever URL a payload names. Redirects are not followed, since
  a redirect would carry the token to another host.
* **A 200 is not proof of a file**: without a valid token Slack answers with its HTML sign-in
  page and status 200, so an HTML answer is refused rather than linted as a pack.

Downloads stop reading one byte past the size limit, whatever the metadata said.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from yarl import URL

from bot.core.errors import NotFound, Unavailable
from bot.log import get_logger

__all__ = [
    "DOWNLOAD_TIMEOUT",
    "SlackFile",
    "attached_files",
    "download",
    "file_info",
    "may_carry_token",
]

log = get_logger(__name__)

DOWNLOAD_TIMEOUT = 30.0
SLACK_FILE_HOST = "files.slack.com"
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class SlackFile:
    """What the bot needs to know about a file before fetching it."""

    id: str
    name: str
    size: int | None
    url: str | None


def _file(data: dict[str, Any]) -> SlackFile:
    size = data.get("size")
    url = data.get("url_private_download") or data.get("url_private")
    return SlackFile(
        id=str(data.get("id") or ""),
        name=str(data.get("name") or data.get("title") or ""),
        size=size if isinstance(size, int) else None,
        url=url if isinstance(url, str) and url else None,
    )


def attached_files(message: dict[str, Any]) -> list[SlackFile]:
    """The files of a message as a shortcut payload shows them (possibly stubs)."""
    entries = message.get("files") or ()
    return [_file(e) for e in entries if isinstance(e, dict) and e.get("id")]


async def file_info(client: AsyncWebClient, file_id: str) -> SlackFile:
    """``files.info``: the file's real name, size and download URL, or a readable refusal."""
    try:
        response = await client.files_info(file=file_id)
    except SlackApiError as exc:
        error = exc.response.get("error") if exc.response is not None else None
        if error in ("missing_scope", "no_permission", "not_allowed_token_type"):
            raise Unavailable(
                "studybot may not read files in this workspace: reinstall the app from "
                "deploy/slack-manifest.yaml (it needs the `files:read` scope)."
            ) from None
        if error in ("file_not_found", "file_deleted"):
            raise NotFound(
                "That file is gone, or it is not shared where studybot can see it."
            ) from None
        raise
    data = response.get("file")
    if not isinstance(data, dict):
        raise NotFound("Slack did not describe that file; try uploading it again.")
    return _file(data)


def may_carry_token(url: str, api_url: str) -> bool:
    """Whether ``url`` is a Slack file host (or the configured API host) for the bot token."""
    target, api = URL(url), URL(api_url)
    if not target.host:
        return False
    if target.scheme == "https" and target.host in {SLACK_FILE_HOST, f"files.{api.host}"}:
        return True
    return (target.scheme, target.host, target.port) == (api.scheme, api.host, api.port)


async def download(
    file: SlackFile,
    *,
    token: str,
    api_url: str,
    limit: int,
    timeout: float = DOWNLOAD_TIMEOUT,  # noqa: ASYNC109 - one request, one deadline
) -> bytes:
    """The file's bytes, at most ``limit + 1`` of them (so the caller can say "too big")."""
    if file.url is None or not may_carry_token(file.url, api_url):
        log.warning("refusing to send the bot token to %r for file %s", file.url, file.id)
        raise Unavailable("I can't download that file from Slack; try uploading it again.")
    headers = {"Authorization": f"Bearer {token}"}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.get(file.url, headers=headers, allow_redirects=False) as response,
        ):
            if response.status != 200 or response.content_type == "text/html":
                log.warning(
                    "download of file %s failed: HTTP %d (%s)",
                    file.id,
                    response.status,
                    response.content_type,
                )
                raise Unavailable(
                    "Slack would not let studybot download that file (is the app installed "
                    "with the `files:read` scope?)."
                )
            data = bytearray()
            async for chunk in response.content.iter_chunked(_CHUNK):
                data += chunk
                if len(data) > limit:
                    break
    except (aiohttp.ClientError, TimeoutError) as exc:
        log.warning("download of file %s failed: %s", file.id, exc)
        raise Unavailable("I couldn't download that file from Slack; please try again.") from None
    return bytes(data[: limit + 1])
