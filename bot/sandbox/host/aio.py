"""Small non-blocking pipe helpers for the manager's event loop (raw fds, no transports).

Raw descriptors rather than asyncio transports because each jail has six of them whose exact
numbers are handed through bwrap to the worker, and because a reader must be able to keep the
first N bytes and throw the rest away while still draining the pipe.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

__all__ = [
    "ByteBudget",
    "CappedBuffer",
    "close_fd",
    "drain_capped",
    "read_chunk",
    "read_line",
    "wait_readable",
    "write_all",
]


def close_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


async def _wait(fd: int, *, write: bool) -> None:
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not fut.done():
            fut.set_result(None)

    if write:
        loop.add_writer(fd, ready)
    else:
        loop.add_reader(fd, ready)
    try:
        await fut
    finally:
        if write:
            loop.remove_writer(fd)
        else:
            loop.remove_reader(fd)


async def wait_readable(fd: int) -> None:
    """Until ``fd`` is readable (a pipe with data or EOF, an exited process's pidfd)."""
    await _wait(fd, write=False)


async def read_chunk(fd: int, size: int = 65536) -> bytes:
    """One read from a non-blocking fd; b"" at EOF."""
    while True:
        try:
            return os.read(fd, size)
        except BlockingIOError:
            await _wait(fd, write=False)


async def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            await _wait(fd, write=True)
            continue
        view = view[n:]


async def read_line(fd: int, pending: bytearray, limit: int = 4096) -> bytes | None:
    """The next ``\\n``-terminated line (without it); None at EOF or past ``limit`` bytes."""
    while b"\n" not in pending:
        if len(pending) > limit:
            return None
        chunk = await read_chunk(fd)
        if not chunk:
            return None
        pending += chunk
    line, _, rest = bytes(pending).partition(b"\n")
    pending[:] = rest
    return line


class ByteBudget:
    """Bytes that may still be kept, shared by the buffers drawing on it (a run's two streams)."""

    def __init__(self, total: int) -> None:
        self.left = max(0, total)


class CappedBuffer:
    """Keeps what it is fed while its budget lasts; remembers whether more came.

    ``CappedBuffer(cap)`` has a budget of its own; buffers given the same ``budget=`` keep at
    most its total between them, first come first kept.
    """

    def __init__(self, cap: int = 0, *, budget: ByteBudget | None = None) -> None:
        self.budget = budget if budget is not None else ByteBudget(cap)
        self.data = bytearray()
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        kept = chunk[: self.budget.left]
        self.data += kept
        self.budget.left -= len(kept)
        if len(kept) < len(chunk):
            self.truncated = True


async def drain_capped(fd: int, buffer: CappedBuffer) -> None:
    """Read ``fd`` to EOF into ``buffer``; past the cap the bytes are read and dropped.

    Draining (rather than stopping) keeps a chatty but finite snippet from blocking on a full
    pipe until the wall clock kills it.
    """
    while chunk := await read_chunk(fd):
        buffer.feed(chunk)
