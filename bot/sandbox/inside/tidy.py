"""A snippet's traceback as a member can read it: the error first, library frames folded, no
host paths, and a word about the network when a socket call failed (issue 29, friction 7).

Why here: only the jail holds the real frames (which file each one is in), so the shaping is
done where the exception is caught (``worker.py``). The same module runs on the host too: the
manager passes every run's output through :meth:`Paths.hide` once more before it answers,
because a jail's report is untrusted and a snippet may print a path itself
(``print(torch.__file__)``). Both sides compute the aliases with :func:`Paths.of` from the
same interpreter's ``sys.path`` and prefixes, so they agree.

Stdlib only: this file is shipped into the jail as source (see ``jail.worker_source``).
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import traceback
from collections.abc import Iterable, Iterator

__all__ = ["NO_NETWORK", "Paths", "format_exception"]

#: Said under the error when a snippet's socket call failed: the jail has no network at all.
NO_NETWORK = (
    "Note: the sandbox has no network, so a snippet cannot connect, resolve names or "
    "download anything (datasets and weights included)."
)
SNIPPET = "<snippet>"
_SITE_NAMES = ("site-packages", "dist-packages")
_STDLIB = re.compile(r"/lib/python\d+\.\d+(?:/lib-dynload)?$|/lib/python\d+\.zip$")
_SANDBOX = "<bot.sandbox.inside."
# A system interpreter's prefix says nothing of this host; hiding it would rewrite every /usr.
_SHARED_PREFIXES = ("/", "/usr", "/usr/local")
_CAUSE = "\nThe above exception was the direct cause of the following exception:\n\n"
_CONTEXT = "\nDuring handling of the above exception, another exception occurred:\n\n"
# Modules whose frames show that an OSError came from a network call.
_NET_FILES = (
    "socket.py",
    "ssl.py",
    "request.py",
    "client.py",
    "connection.py",
    "connectionpool.py",
)


class Paths:
    """Host paths that the jail can see, and what a member is shown instead.

    ``<site>/torch/_tensor.py`` becomes ``<torch>/_tensor.py``; anything in the standard
    library or under the interpreter's prefixes becomes ``<python>/...``.
    """

    def __init__(self, site_dirs: Iterable[str], python_dirs: Iterable[str]) -> None:
        self.site_dirs = _unique(site_dirs)
        self.python_dirs = _unique(python_dirs)
        boundary = r"(?=/|$|[^\w.+-])"
        site = "|".join(re.escape(d) for d in self.site_dirs)
        python = "|".join(re.escape(d) for d in self.python_dirs)
        # Longest first inside each group: a venv's site-packages lies under its prefix.
        self._site = re.compile(rf"(?:{site})(?:/([\w.+-]+))?{boundary}") if site else None
        self._python = re.compile(rf"(?:{python}){boundary}") if python else None

    @classmethod
    def of(cls, path: Iterable[str], prefixes: Iterable[str]) -> Paths:
        """From an interpreter's ``sys.path`` and its prefixes (``sys.prefix`` and kin)."""
        entries = [p for p in path if p and os.path.isabs(p)]
        site = [p for p in entries if os.path.basename(p.rstrip("/")) in _SITE_NAMES]
        python = [p for p in entries if _STDLIB.search(p.rstrip("/"))]
        python += [
            p for p in prefixes if p and os.path.isabs(p) and p.rstrip("/") not in _SHARED_PREFIXES
        ]
        return cls(_with_real(site), _with_real(python))

    def library(self, filename: str) -> str:
        """Which library a frame's file belongs to, in a member's words."""
        if filename.startswith(_SANDBOX):
            return "the sandbox"
        if filename.startswith("<frozen "):
            return "Python"
        for site in self.site_dirs:
            if filename.startswith(site + "/"):
                top = filename[len(site) + 1 :].split("/", 1)[0]
                return top.split(".", 1)[0] if top.endswith((".py", ".so")) else top
        if any(filename.startswith(p + "/") for p in self.python_dirs):
            return "Python"
        return "other code"

    def hide(self, text: str) -> str:
        """``text`` with every host path of the interpreter replaced by its alias."""
        if self._site is not None:
            text = self._site.sub(lambda m: f"<{m.group(1) or 'site-packages'}>", text)
        if self._python is not None:
            text = self._python.sub("<python>", text)
        return text


def _unique(dirs: Iterable[str]) -> tuple[str, ...]:
    cleaned = {d.rstrip("/") for d in dirs if d.rstrip("/")}
    return tuple(sorted(cleaned, key=len, reverse=True))


def _with_real(dirs: list[str]) -> list[str]:
    return dirs + [os.path.realpath(d) for d in dirs]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )


def _is_network_failure(exc: BaseException) -> bool:
    """Whether an error in the chain is a failed socket call (name lookup, connect, socket())."""
    for err in _chain(exc):
        reason = getattr(err, "reason", None)  # urllib's URLError wraps the socket's error
        if isinstance(err, (socket.gaierror, socket.herror)) or isinstance(
            reason, (socket.gaierror, socket.herror, ConnectionError)
        ):
            return True
        if isinstance(err, OSError):
            frames = traceback.extract_tb(err.__traceback__)
            if any(os.path.basename(f.filename) in _NET_FILES for f in frames):
                return True
    return False


def _frames(te: traceback.TracebackException, paths: Paths) -> list[str]:
    """The snippet's frames as Python prints them; each run of other frames folded to one line.

    Frames before the first snippet frame (the sandbox calling the snippet) are left out.
    """
    stack = list(te.stack)
    if not stack:
        return []
    # An earlier exception of the chain may lie wholly in libraries: all of it is folded.
    first = next((i for i, f in enumerate(stack) if f.filename == SNIPPET), 0)
    lines = ["Traceback (most recent call last):\n"]
    i = first
    while i < len(stack):
        j = i
        mine = stack[i].filename == SNIPPET
        while j < len(stack) and (stack[j].filename == SNIPPET) == mine:
            j += 1
        run = stack[i:j]
        if mine:
            lines += traceback.StackSummary.from_list(run).format()
        else:
            libraries = list(dict.fromkeys(paths.library(f.filename) for f in run))
            where = ", ".join(libraries[:3]) + (", ..." if len(libraries) > 3 else "")
            lines.append(f"  \u2026 {len(run)} frame{'s' if len(run) > 1 else ''} in {where}\n")
        i = j
    return lines


def format_exception(exc: BaseException, paths: Paths) -> str:
    """The member's view of ``exc``: its error line(s) first, then the traceback as Python
    prints it but with the snippet's frames only (every run of other frames folded to one
    line), earlier exceptions of the chain before it; host paths hidden.

    The error comes first because a chat shows a long reply's end cut or collapsed, and a
    beginner reads from the top: 12 lines of torch internals buried a one-line mistake.
    """
    newest = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    # Oldest first, each with the words that lead from it to the next one.
    chain: list[tuple[traceback.TracebackException, str]] = []
    current: traceback.TracebackException | None = newest
    joiner = ""
    seen: set[int] = set()
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.insert(0, (current, joiner))
        if current.__cause__ is not None:
            joiner, current = _CAUSE, current.__cause__
        elif current.__context__ is not None and not current.__suppress_context__:
            joiner, current = _CONTEXT, current.__context__
        else:
            current = None
    # A SyntaxError's location lines (indented) stay at the end, with its traceback.
    only = list(newest.format_exception_only())
    head = "".join(itertools.dropwhile(lambda line: line[:1].isspace(), only)) or "".join(only)
    if _is_network_failure(exc):
        head += NO_NETWORK + "\n"
    body: list[str] = []
    for te, lead in chain:
        # Each traceback still ends with its error line, as Python's do: tools that read a
        # traceback from its end (the pack checks' ``exception_name``) read this one too.
        body += [*_frames(te, paths), *te.format_exception_only(), lead]
    return paths.hide(head + "".join(body))
