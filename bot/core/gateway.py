"""What the core needs from a chat platform to publish on its own (scheduled posts, reveals).

Adapters implement this small protocol; the service and the scheduler never see a platform
client, only these two calls.
"""

from __future__ import annotations

from typing import Protocol

from bot.core.messages import Message

__all__ = ["ChatGateway"]


class ChatGateway(Protocol):
    async def send_post(self, channel: str, message: Message) -> str:
        """Send a public message to a channel; return the platform's message id."""
        ...

    async def edit_post(self, channel: str, message_id: str, message: Message) -> None:
        """Replace a message sent earlier (a question at its reveal)."""
        ...
