"""The linter: loading problems plus near-duplicate warnings, for a folder or for one upload.

``studybot questions lint`` and an admin's pack upload in chat must say the same things about
the same file, so both go through here: :func:`lint_packs` for files on disk and
:func:`validate_upload` for bytes that are not in the packs folder yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePath

from bot.questions.duplicates import DEFAULT_THRESHOLD, duplicate_problems, located_items
from bot.questions.loader import (
    LoadedPack,
    LoadResult,
    PackContents,
    Problem,
    _cross_pack_problems,
    load_packs,
    read_pack_text,
)

__all__ = ["lint_packs", "validate_upload"]


def lint_packs(root: Path, *, threshold: int = DEFAULT_THRESHOLD) -> LoadResult:
    """:func:`load_packs` plus near-duplicate warnings between all the valid items.

    The valid items of a pack that has errors are compared too, so a near-duplicate is not
    found only after the pack's errors are fixed.
    """
    result = load_packs(root)
    result.problems.extend(duplicate_problems(located_items(result.contents), threshold=threshold))
    # Each file's problems in line order, files in the order they were read.
    order: dict[str, int] = {}
    for problem in result.problems:
        order.setdefault(problem.path, len(order))
    result.problems.sort(key=lambda problem: (order[problem.path], problem.line))
    return result


def validate_upload(
    raw: bytes,
    filename: str,
    *,
    existing: Sequence[LoadedPack] = (),
    threshold: int = DEFAULT_THRESHOLD,
) -> tuple[LoadedPack | None, list[Problem]]:
    """Check an uploaded pack as if ``filename`` were added to the packs folder.

    Returns exactly what ``studybot questions lint`` would print about that file: schema
    problems, ids and pack names already used by ``existing`` (the loaded packs), and
    near-duplicate warnings against them. A loaded pack whose file has the same name is the
    one the upload replaces, so it is left out. The pack is ``None`` when there is any error;
    warnings alone do not stop it.
    """
    name = PurePath(filename).name
    others = [loaded for loaded in existing if PurePath(loaded.path).name != name]
    loaded, problems, contents = read_pack_text(raw, filename)
    if contents is None:
        return None, problems
    problems = list(problems)
    compared = [*(PackContents.of(other) for other in others), contents]
    problems.extend(p for p in _cross_pack_problems(compared) if p.path == contents.path)
    problems.extend(
        duplicate_problems(
            located_items([contents]), against=located_items(others), threshold=threshold
        )
    )
    problems.sort(key=lambda problem: problem.line)  # as `questions lint` prints them
    if loaded is None or any(problem.severity == "error" for problem in problems):
        return None, problems
    return loaded, problems
