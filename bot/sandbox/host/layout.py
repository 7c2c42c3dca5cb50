"""What the jail's read-only filesystem holds: the interpreter, its libraries, the packages.

The list is computed from the running interpreter (``sys.prefix``, ``sys.path``, the real
executable) and from the ELF ``DT_NEEDED`` entries of the interpreter and every extension
module on that path, resolved through the dynamic loader's cache. Nothing else is mounted: no
``/home``, no host ``/tmp``, no ``/etc`` beyond ``ld.so.cache``, and nothing of the bot — its
source checkout is left out and an installed copy of the package is hidden under an empty
tmpfs. Symlinks on the way (``/lib -> usr/lib``, the venv's ``bin/python``) are recreated
inside so that paths resolve as they do on the host.
"""

from __future__ import annotations

import os
import platform
import stat
import struct
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from bot.log import get_logger

__all__ = ["RELOCATED_TMP", "ElfInfo", "Layout", "compute_layout", "elf_info", "jail_path"]

log = get_logger(__name__)

_LDCONFIG = ("/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig")
_FALLBACK_LIBDIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64")
_SITE_NAMES = ("site-packages", "dist-packages")


@dataclass(frozen=True, slots=True)
class Layout:
    """Mounts for bwrap, in order: read-only binds, symlinks, then hidden paths."""

    binds: tuple[tuple[str, str], ...]  # (host source, path inside)
    symlinks: tuple[tuple[str, str], ...]  # (target, link path inside)
    hidden: tuple[str, ...]  # covered with an empty read-only tmpfs
    python: str  # the interpreter path to exec inside (the host's, unless under /tmp)


@dataclass(frozen=True, slots=True)
class ElfInfo:
    needed: tuple[str, ...] = ()
    interp: str | None = None
    rpath: tuple[str, ...] = ()  # DT_RPATH and DT_RUNPATH entries, $ORIGIN expanded


def elf_info(path: str) -> ElfInfo:
    """DT_NEEDED, PT_INTERP and run paths of a 64-bit little-endian ELF file (empty otherwise)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return ElfInfo()
            phoff, phentsize, phnum = (
                struct.unpack_from("<Q", head, 32)[0],
                struct.unpack_from("<H", head, 54)[0],
                struct.unpack_from("<H", head, 56)[0],
            )
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
            loads: list[tuple[int, int, int]] = []
            dynamic: tuple[int, int] | None = None
            interp: str | None = None
            for i in range(phnum):
                p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
                    "<IIQQQQ", table, i * phentsize
                )
                if p_type == 1:  # PT_LOAD
                    loads.append((p_vaddr, p_offset, p_filesz))
                elif p_type == 2:  # PT_DYNAMIC
                    dynamic = (p_offset, p_filesz)
                elif p_type == 3:  # PT_INTERP
                    fh.seek(p_offset)
                    interp = fh.read(p_filesz).rstrip(b"\0").decode()
            if dynamic is None:
                return ElfInfo(interp=interp)
            fh.seek(dynamic[0])
            dyn = fh.read(dynamic[1])
            needed: list[int] = []
            paths: list[int] = []
            strtab = 0
            for off in range(0, len(dyn) - 15, 16):
                tag, val = struct.unpack_from("<qQ", dyn, off)
                if tag == 0:
                    break
                if tag == 1:  # DT_NEEDED
                    needed.append(val)
                elif tag in (15, 29):  # DT_RPATH, DT_RUNPATH
                    paths.append(val)
                elif tag == 5:  # DT_STRTAB (a virtual address)
                    strtab = val
            base = next(
                (off + strtab - va for va, off, size in loads if va <= strtab < va + size), None
            )
            if base is None:
                return ElfInfo(interp=interp)

            def string(offset: int) -> str:
                fh.seek(base + offset)
                return fh.read(4096).split(b"\0", 1)[0].decode(errors="replace")

            origin = os.path.dirname(os.path.realpath(path))
            rpath = tuple(
                entry.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
                for offset in paths
                for entry in string(offset).split(":")
                if entry
            )
            return ElfInfo(tuple(string(o) for o in needed), interp, rpath)
    except (OSError, struct.error, UnicodeDecodeError):
        return ElfInfo()


@cache
def _loader_cache() -> dict[str, str]:
    """soname -> path for this machine's ABI, from ``ldconfig -p``."""
    machine = platform.machine()
    tag = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(machine, "")
    for ldconfig in _LDCONFIG:
        if not os.access(ldconfig, os.X_OK):
            continue
        try:
            out = subprocess.run(  # noqa: S603 - fixed absolute path, no shell
                [ldconfig, "-p"], capture_output=True, text=True, timeout=30, check=False, env={}
            ).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        found: dict[str, str] = {}
        for line in out.splitlines()[1:]:
            name, _, rest = line.strip().partition(" (")
            info, _, path = rest.partition(") => ")
            if path and (not tag or tag in info):
                found.setdefault(name, path)
        return found
    return {}


def _resolve_soname(name: str, rpath: Iterable[str] = ()) -> str | None:
    if "/" in name:
        return name if os.path.exists(name) else None
    for d in rpath:
        candidate = os.path.join(d, name)
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    hit = _loader_cache().get(name)
    if hit:
        return hit
    for d in _FALLBACK_LIBDIRS:
        for sub in (d, f"{d}/{platform.machine()}-linux-gnu"):
            candidate = f"{sub}/{name}"
            if os.path.exists(candidate):
                return candidate
    return None


def _walk_chain(path: str) -> tuple[str, list[tuple[str, str]]]:
    """Resolve ``path`` like realpath, recording every symlink met as (target, link)."""
    links: list[tuple[str, str]] = []
    parts = [p for p in path.split("/") if p]
    current = "/"
    hops = 0
    while parts:
        part = parts.pop(0)
        if part == ".":
            continue
        if part == "..":
            current = os.path.dirname(current) or "/"
            continue
        candidate = os.path.join(current, part)
        try:
            st = os.lstat(candidate)
        except OSError:
            current = candidate
            continue
        if stat.S_ISLNK(st.st_mode):
            hops += 1
            if hops > 40:
                break
            target = os.readlink(candidate)
            links.append((target, candidate))
            parts = [p for p in target.split("/") if p] + parts
            if target.startswith("/"):
                current = "/"
        else:
            current = candidate
    return current, links


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _extension_files(dirs: Iterable[str]) -> Iterator[str]:
    for root in dirs:
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if ".so" in name:
                    yield os.path.join(dirpath, name)


def _python_dirs(
    entries: Iterable[str], prefix: str, package_dir: str
) -> tuple[list[str], list[str]]:
    """(outermost directories to bind, package directories to hide) for a ``sys.path``."""
    source_root = os.path.dirname(package_dir)
    dirs: list[str] = []
    hidden: list[str] = []
    if prefix != sys.base_prefix or (Path(prefix) / "pyvenv.cfg").exists():
        dirs.append(os.path.realpath(prefix))
    for entry in entries:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if _under(package_dir, [real]):
            if real == source_root and os.path.basename(real) not in _SITE_NAMES:
                continue  # the bot's source checkout (the cwd, an editable install)
            hidden.append(package_dir)
        dirs.append(real)
    roots: list[str] = []
    for d in sorted(set(dirs), key=len):
        if not _under(d, roots):
            roots.append(d)
    return roots, hidden


def _libraries(start: Iterable[str], roots: list[str], symlinks: dict[str, str]) -> set[str]:
    """Host files (outside ``roots``) the loader needs for ``start``, transitively.

    Symlinks met on the way are added to ``symlinks`` (link -> target).
    """
    files: set[str] = set()
    todo = list(start)
    seen: set[str] = set()
    interps: set[str] = set()
    while todo:
        obj = todo.pop()
        if obj in seen:
            continue
        seen.add(obj)
        info = elf_info(obj)
        if info.interp:
            interps.add(info.interp)
        for soname in info.needed:
            hit = _resolve_soname(soname, info.rpath)
            if hit is None or _under(hit, roots):
                continue  # bundled next to the module (RPATH $ORIGIN) or not on this host
            real, chain = _walk_chain(hit)
            symlinks.update((link, target) for target, link in chain)
            if real not in seen:
                files.add(real)
                todo.append(real)
    for interp in interps:
        real, chain = _walk_chain(interp)
        symlinks.update((link, target) for target, link in chain)
        files.add(real)
    return files


def compute_layout(
    *,
    python: str | None = None,
    path: Iterable[str] | None = None,
    prefix: str | None = None,
    package_dir: str | None = None,
) -> Layout:
    """Work out the jail's mounts for ``python`` (by default: the interpreter running us).

    ``package_dir`` is the bot's package directory (``bot/``); it never appears in the jail.
    """
    python = python or sys.executable
    package_dir = os.path.realpath(package_dir or Path(__file__).resolve().parents[2])
    roots, hidden = _python_dirs(
        list(sys.path if path is None else path), prefix or sys.prefix, package_dir
    )
    symlinks: dict[str, str] = {}  # link -> target
    real_python, chain = _walk_chain(os.path.abspath(python))
    symlinks.update((link, target) for target, link in chain)

    files = _libraries([real_python, *_extension_files(roots)], roots, symlinks)
    files.add(real_python)
    if os.path.exists("/etc/ld.so.cache"):
        files.add("/etc/ld.so.cache")

    binds = [(d, d) for d in roots] + [(f, f) for f in sorted(files) if not _under(f, roots)]
    # A symlink whose own path lies inside a bound directory exists there already.
    links_out = [
        (target, link)
        for link, target in sorted(symlinks.items())
        if not _under(link, roots) and link not in files
    ]
    log.debug("jail layout: %d binds, %d symlinks", len(binds), len(links_out))
    return Layout(
        tuple((source, jail_path(dest)) for source, dest in binds),
        tuple((jail_path(target), jail_path(link)) for target, link in links_out),
        tuple(jail_path(h) for h in hidden),
        jail_path(os.path.abspath(python)),
    )


#: Where host paths under /tmp appear inside the jail. The jail's /tmp is a private, empty
#: tmpfs; an interpreter that lives under the host's /tmp (a CI checkout's venv) is bound here
#: instead, so /tmp stays empty and the venv still resolves (Python finds its pyvenv.cfg next
#: to the path it was started by, wherever that is).
RELOCATED_TMP = "/var/host-tmp"


def jail_path(path: str) -> str:
    """The path inside the jail of a host path (the same, except under /tmp)."""
    host_tmp = "/tmp"  # noqa: S108 - the host's /tmp, named to keep it out of the jail's
    if path == host_tmp or path.startswith(host_tmp + "/"):
        return RELOCATED_TMP + path[len(host_tmp) :]
    return path
