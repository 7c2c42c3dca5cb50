"""The Discord adapter (discord.py 2.7): slash commands, persistent buttons, the ``/run`` modal.

* :mod:`.adapter` — :class:`DiscordAdapter`: run/stop for the runtime, send/edit for the core;
* :mod:`.client` — the ``commands.Bot``: intents, ``setup_hook``, command sync;
* :mod:`.shards` — which guilds a process serves when run as several (``--shards``);
* :mod:`.cog` — the commands and what a click does;
* :mod:`.components` — the persistent :class:`StudyButton` (a ``DynamicItem``) and the modal;
* :mod:`.render` — neutral messages as embeds and buttons, within Discord's limits;
* :mod:`.errors` — the one error handler; :mod:`.identity` — who is acting, and admin;
* :mod:`.endpoints` — ``DISCORD_API_BASE`` / ``DISCORD_GATEWAY_URL``; :mod:`.invite` — the URL.

Imported only when the platform is Discord (see ``Wiring.adapter``).
"""

from __future__ import annotations

from bot.adapters.discord.adapter import DiscordAdapter
from bot.adapters.discord.invite import invite_url

__all__ = ["DiscordAdapter", "invite_url"]
