"""What the core needs from a chat platform to publish on its own (scheduled posts, reveals).

Adapters implement this small protocol; the service and the scheduler never see a platform
client, only these two calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from bot.core.messages import Message
from bot.core.rewards import Power

__all__ = [
    "ChatGateway",
    "DirectMessenger",
    "PostFinder",
    "RoleManager",
    "RoleReader",
    "WorkspaceOwner",
    "serves",
]


class ChatGateway(Protocol):
    async def send_post(self, channel: str, message: Message) -> str:
        """Send a public message to a channel; return the platform's message id."""
        ...

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        """Replace a message sent earlier (a question at its reveal)."""
        ...


@runtime_checkable
class PostFinder(Protocol):
    """A gateway that can tell whether a post already shows in a channel.

    After a crash between sending a scheduled question and recording its message id, the
    scheduler asks before sending it again, so members do not see it twice. Platforms that
    cannot tell (without permissions studybot does not ask for) simply do not implement it.
    """

    async def find_post(self, channel: str, post_id: int) -> str | None:
        """The platform message id of ``post_id``'s question in ``channel``, or ``None``."""
        ...


@runtime_checkable
class DirectMessenger(Protocol):
    """A gateway that can message one member privately (``/review remind``). Reminders are
    only ever sent this way, never posted in a channel."""

    async def send_dm(self, workspace: str, member: str, message: Message) -> bool:
        """Send ``message`` to the member privately; ``False`` if they do not take DMs."""
        ...


@runtime_checkable
class WorkspaceOwner(Protocol):
    """A gateway that serves only some workspaces (a Discord process given a shard range).

    The scheduler, reminders and recaps of a process act only for the workspaces it serves;
    the processes serving the other shards act for theirs. A gateway without this method
    serves every workspace.
    """

    def serves(self, workspace: str) -> bool:
        """Whether this process serves ``workspace`` (the platform's id for it)."""
        ...


def serves(gateway: object, workspace: str) -> bool:
    """Whether the process behind ``gateway`` acts for ``workspace`` (only a sharded one may
    not): what the scheduler, reminders and recaps ask before doing anything for it."""
    return not isinstance(gateway, WorkspaceOwner) or gateway.serves(workspace)


@runtime_checkable
class RoleManager(Protocol):
    """A gateway that can give members a role (a Discord role, a Slack user group) and take it
    back: what role rewards (``/rewards``) need. ``role`` is the platform's id for it.

    Each call answers ``None`` when done, or why not in words for an admin ("the role is above
    mine"); a role the bot may not manage is never touched. Which powers a reward's role may
    not carry is the core's rule (:func:`bot.core.rewards.power_problem`): the adapter only
    reads them (:meth:`role_powers`).
    """

    async def role_powers(self, workspace: str, role: str) -> frozenset[Power]:
        """Which of the :class:`~bot.core.rewards.Power` s ``role`` carries now (its
        permissions, and whether the bot's settings make it an admin role); empty for a
        role that does not exist (:meth:`can_manage_role` says so)."""
        ...

    async def can_manage_role(self, workspace: str, role: str) -> str | None:
        """``None`` if the bot may give and take ``role``; else the reason it may not."""
        ...

    async def grant_role(self, workspace: str, member: str, role: str) -> str | None:
        """Give ``member`` the role; ``None`` when done, else why it was not."""
        ...

    async def revoke_role(self, workspace: str, member: str, role: str) -> str | None:
        """Take the role back from ``member``; ``None`` when done, else why it was not."""
        ...


@runtime_checkable
class RoleReader(Protocol):
    """A gateway that can name a workspace's roles (Discord roles, Slack user groups, the
    console's names) and say which of them a member holds: what teams made from roles
    (``round start --teams @Red,@Blue``) need. It reads only; it never gives or takes one."""

    async def find_role(self, workspace: str, typed: str) -> tuple[str, str] | None:
        """The role a member typed (a mention, ``@name`` or ``name``): its platform id and the
        name to show (``@Red``); ``None`` when the workspace has no such role."""
        ...

    async def roles_held(self, workspace: str, member: str, roles: Sequence[str]) -> frozenset[str]:
        """Which of ``roles`` (platform ids) ``member`` holds now."""
        ...
