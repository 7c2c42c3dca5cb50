"""Check an uploaded pack in a child process with a memory cap and a deadline.

A chat upload comes from any member, and the bot process holds the tokens and serves every
channel. The parse budgets of :mod:`bot.questions.untrusted` bound what a file can cost, but a
bug in a parser or a check must still not take the bot down or stall it, so the check runs in
a short-lived ``python -m bot.questions.isolated_check`` with:

- an address-space cap (:data:`MEMORY_BYTES`), so a runaway allocation fails in the child;
- a deadline (:data:`TIMEOUT_S`), after which the child is killed and the member told so;
- an environment with no tokens: only ``PATH``, ``LANG`` and ``PYTHONPATH`` are passed on.

The packs compared against travel as their validated JSON form; the child answers with the
problems in JSON (never pickle), and whether the pack is valid. The bot then loads the valid
file itself, which the budgets keep quick.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import resource
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePath
from typing import Any

from bot.questions.lint import validate_upload
from bot.questions.loader import LoadedPack, Problem, load_pack_text
from bot.questions.schema import Pack

__all__ = ["MEMORY_BYTES", "TIMEOUT_S", "CheckFailed", "IsolatedVerdict", "check_isolated"]

MEMORY_BYTES = 2 * 1024 * 1024 * 1024
"""Address space of the checking process: numpy and rapidfuzz map about 600 MiB at import."""
TIMEOUT_S = 30.0
"""A 1 MiB pack of 500 items checks in about two seconds."""
_KEPT_ENV = ("PATH", "LANG", "PYTHONPATH")


class CheckFailed(Exception):
    """The check could not finish (deadline, memory, crash); the message is for the member.

    ``detail`` is the end of the child's stderr, for the operator's log only.
    """

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class IsolatedVerdict:
    """What the child found: every problem, and whether the pack loads.

    ``too_many`` is the item count when it was over ``max_items`` (nothing else was checked).
    """

    problems: tuple[Problem, ...]
    valid: bool
    too_many: int | None = None


async def check_isolated(
    raw: bytes,
    name: str,
    existing: Sequence[LoadedPack],
    *,
    max_items: int,
    deadline_s: float = TIMEOUT_S,
    memory_bytes: int = MEMORY_BYTES,
) -> IsolatedVerdict:
    """Lint an upload as the file it would be installed as, in a capped child process.

    The upload replaces the pack in ``<slug>.yaml``, so that pack is left out of the
    comparison; every other pack is compared against, for reused ids and pack names and
    near-duplicates. Raises :class:`CheckFailed` when the child cannot finish.
    """
    request = json.dumps(
        {
            "raw": base64.b64encode(raw).decode("ascii"),
            "name": name,
            "memory": memory_bytes,
            "max_items": max_items,
            "existing": [_pack_json(pack) for pack in existing],
        }
    ).encode("utf-8")
    env = {key: os.environ[key] for key in _KEPT_ENV if key in os.environ}
    env["OPENBLAS_NUM_THREADS"] = "1"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.questions.isolated_check",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(request), deadline_s)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise CheckFailed(
            f"checking `{name}` took longer than {deadline_s:.0f} s and was stopped; "
            "split the pack into smaller files"
        ) from None
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    if process.returncode != 0:
        # Python says MemoryError; pydantic-core's Rust allocator aborts with its own words.
        memory = b"MemoryError" in err or b"memory allocation" in err
        raise CheckFailed(
            f"checking `{name}` needed more than {memory_bytes // 2**20:,} MiB and was stopped"
            if memory
            else f"checking `{name}` failed (exit status {process.returncode}); "
            "an operator can see why in the log",
            err.decode("utf-8", "replace")[-2000:],
        )
    answer = json.loads(out)
    problems = tuple(Problem(**problem) for problem in answer["problems"])
    return IsolatedVerdict(problems, bool(answer["valid"]), answer["too_many"])


def _pack_json(pack: LoadedPack) -> dict[str, Any]:
    return {
        "path": pack.path,
        "pack": pack.pack.model_dump(mode="json"),
        "hash": pack.content_hash,
        "lines": pack.item_lines,
    }


def _pack_from_json(data: dict[str, Any]) -> LoadedPack:
    return LoadedPack(
        data["path"], Pack.model_validate(data["pack"]), data["hash"], dict(data["lines"])
    )


def _main() -> None:
    """The child: read one request on stdin, answer on stdout."""
    request = json.loads(sys.stdin.buffer.read())
    memory = int(request["memory"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    raw, name = base64.b64decode(request["raw"]), request["name"]
    answer: dict[str, Any] = {"problems": [], "valid": False, "too_many": None}
    peek, _ = load_pack_text(raw, name)  # schema only: learns the slug and the item count
    if peek is not None and len(peek.pack.items) > request["max_items"]:
        answer["too_many"] = len(peek.pack.items)
    else:
        replaced = f"{peek.pack.pack}.yaml" if peek is not None else None
        existing = [_pack_from_json(item) for item in request["existing"]]
        others = [pack for pack in existing if PurePath(pack.path).name != replaced]
        loaded, problems = validate_upload(raw, name, existing=others)
        answer["problems"] = [asdict(problem) for problem in problems]
        answer["valid"] = loaded is not None
    sys.stdout.write(json.dumps(answer))


if __name__ == "__main__":
    _main()
