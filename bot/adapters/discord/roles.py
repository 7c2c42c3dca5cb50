"""Which roles the bot may give: Discord's role hierarchy, as one rule.

A bot with Manage Roles (or Administrator) can add and remove only roles *below* its own
highest role, never ``@everyone`` and never a role an integration manages (a bot's own, the
booster role). The adapter asks this before every role change of a role reward, from
discord.py's cache; ``studybot doctor`` asks it from the REST API's answers. Pure.

:func:`role_powers` reads which of the core's :class:`~bot.core.rewards.Power` s a role
carries (its permission bits, and whether ``DISCORD_ADMIN_ROLE`` lists it): the rule that a
reward may carry none is the core's, Discord's bit numbers are only known here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.core.rewards import Power

__all__ = ["POWER_BITS", "RoleFacts", "role_powers", "role_problem", "roles_from_api"]

MANAGE_ROLES = 1 << 28
ADMINISTRATOR = 1 << 3

POWER_BITS: Mapping[Power, int] = {
    Power.ADMINISTRATOR: ADMINISTRATOR,
    Power.MANAGE_SERVER: 1 << 5,  # MANAGE_GUILD
    Power.MANAGE_ROLES: MANAGE_ROLES,
    Power.MANAGE_CHANNELS: 1 << 4,
    Power.MANAGE_WEBHOOKS: 1 << 29,
    Power.MANAGE_MESSAGES: 1 << 13,
    Power.KICK_MEMBERS: 1 << 1,
    Power.BAN_MEMBERS: 1 << 2,
    Power.MODERATE_MEMBERS: 1 << 40,
    Power.MENTION_EVERYONE: 1 << 17,
}
"""Discord's permission bit of each power a reward's role may not carry."""


def role_powers(permissions: int, *, admin_role: bool) -> frozenset[Power]:
    """The powers of a role with these permission bits; ``admin_role``: ``DISCORD_ADMIN_ROLE``
    lists it (so holding it makes a member an admin of the bot)."""
    powers = {power for power, bit in POWER_BITS.items() if permissions & bit}
    if admin_role:
        powers.add(Power.BOT_ADMIN)
    return frozenset(powers)


@dataclass(frozen=True, slots=True)
class RoleFacts:
    id: int
    name: str
    position: int
    permissions: int
    managed: bool = False

    def rank(self) -> tuple[int, int]:
        """Higher is above; at an equal position the older role (smaller id) is above."""
        return (self.position, -self.id)


def roles_from_api(payload: Iterable[Mapping[str, Any]]) -> dict[int, RoleFacts]:
    """``GET /guilds/{id}/roles`` as facts, by id."""
    return {
        int(r["id"]): RoleFacts(
            int(r["id"]),
            str(r.get("name") or ""),
            int(r.get("position") or 0),
            int(r.get("permissions") or 0),
            bool(r.get("managed")),
        )
        for r in payload
    }


def role_problem(
    target: int, roles: Mapping[int, RoleFacts], bot_roles: Iterable[int], guild_id: int
) -> str | None:
    """Why the bot (holding ``bot_roles``) may not give role ``target``; ``None`` if it may."""
    role = roles.get(target)
    if role is None:
        return "there is no such role in this server"
    if role.id == guild_id:
        return "@everyone is every member's role already"
    if role.managed:
        return f"@{role.name} is managed by an integration (a bot's or a booster role)"
    mine = [roles[r] for r in {*bot_roles, guild_id} if r in roles]
    allowed = 0
    for held in mine:
        allowed |= held.permissions
    if not allowed & (MANAGE_ROLES | ADMINISTRATOR):
        return "I do not have the Manage Roles permission here"
    top = max(mine, key=RoleFacts.rank)
    if role.rank() >= top.rank():
        return (
            f"@{role.name} is not below my highest role (@{top.name}); drag my role above it "
            "in Server Settings → Roles"
        )
    return None
