"""Where discord.py connects: ``DISCORD_API_BASE`` and ``DISCORD_GATEWAY_URL``.

discord.py 2.7 has no option for either; both are class attributes, so they apply to the whole
process. ``Route.BASE`` builds every REST URL, the interaction callbacks and webhook follow-ups
included. A plain ``Client`` never asks ``GET /gateway/bot``: it connects straight to
``DiscordWebSocket.DEFAULT_GATEWAY``, and comes back to it after a non-resumable session, so the
value must stay set for the life of the process. With the defaults nothing changes.
"""

from __future__ import annotations

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import HTTPClient, Route

from bot.log import get_logger

__all__ = ["DISCORD_API_BASE_DEFAULT", "discover_gateway", "is_default_api", "point_discord_py"]

log = get_logger(__name__)

DISCORD_API_BASE_DEFAULT = "https://discord.com/api/v10"


def is_default_api(api_base: str) -> bool:
    return api_base.rstrip("/") == DISCORD_API_BASE_DEFAULT


def point_discord_py(api_base: str, gateway_url: str | None) -> None:
    """Point REST at ``api_base`` and the gateway at ``gateway_url``; call before login."""
    Route.BASE = api_base.rstrip("/")
    if gateway_url:
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


async def discover_gateway(http: HTTPClient) -> None:
    """Ask a non-default API for its gateway, as Discord intends (``GET /gateway/bot``).

    Used when ``DISCORD_API_BASE`` is changed but ``DISCORD_GATEWAY_URL`` is not, so the bot
    does not log in to one server and connect its websocket to another.
    """
    _, url, _ = await http.get_bot_gateway()
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
    log.info("gateway from %s: %s", Route.BASE, url)
