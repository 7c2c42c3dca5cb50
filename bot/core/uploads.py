"""Attachments that fit the platform which sends them, and a sentence for those that do not.

A run may return files larger or more numerous than a chat accepts: Discord refuses a file
over 10 MiB on a server without boosts, more than 10 files, or a request over 25 MB, and
then the whole reply is lost, output included. Each adapter therefore passes its message
through :func:`fit_attachments` with its own :class:`UploadLimits` just before sending: what
fits goes, in order, and the message says which files were left out and why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.core.messages import Attachment, Message, Section

__all__ = ["CONSOLE", "DISCORD", "SLACK", "UploadLimits", "fit_attachments", "human_size"]

_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """What one message may carry on a platform."""

    platform: str
    per_file: int
    per_message: int
    max_files: int
    #: Kept free in a request for the message itself (its JSON, the form's boundaries).
    reserve: int = 0


#: An unboosted server's limits (boosts raise the per-file limit; this fits everywhere).
#: A request may be 25,000,000 bytes; the message's own JSON takes part of it.
DISCORD = UploadLimits(
    "Discord", per_file=10 * _MIB, per_message=25_000_000, max_files=10, reserve=_MIB
)
#: ``files.uploadV2`` takes up to 1 GB a file; each file is a request of its own.
SLACK = UploadLimits("Slack", per_file=1_000_000_000, per_message=10**12, max_files=10)
#: The console saves files next to the database; a run cannot fill the disk through it.
CONSOLE = UploadLimits("the console", per_file=50 * _MIB, per_message=100 * _MIB, max_files=20)


def human_size(n: int) -> str:
    if n >= _MIB:
        return f"{n / _MIB:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.0f} KiB"
    return f"{n} bytes"


def fit_attachments(message: Message, limits: UploadLimits) -> Message:
    """``message`` with the attachments that fit ``limits``, in order, and a note naming the
    ones left out (with why); unchanged when everything fits."""
    kept: list[Attachment] = []
    left: list[str] = []
    total = 0
    for attachment in message.attachments:
        size = len(attachment.content)
        if size > limits.per_file:
            left.append(
                f"`{attachment.filename}` ({human_size(size)}: over {limits.platform}'s "
                f"{human_size(limits.per_file)} limit per file)"
            )
        elif len(kept) >= limits.max_files:
            left.append(
                f"`{attachment.filename}` (over {limits.platform}'s {limits.max_files} files "
                "per message)"
            )
        elif total + size > limits.per_message - limits.reserve:
            left.append(
                f"`{attachment.filename}` ({human_size(size)}: the files together would go "
                f"over {limits.platform}'s {human_size(limits.per_message)} per message)"
            )
        else:
            kept.append(attachment)
            total += size
    if not left:
        return message
    shown = left[:10]
    more = f" and {len(left) - len(shown)} more" if len(left) > len(shown) else ""
    note = Section(body=f"Not sent here: {'; '.join(shown)}{more}.")
    return replace(message, attachments=tuple(kept), sections=(*message.sections, note))
