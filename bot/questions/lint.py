"""The linter: loading problems plus warnings, for a folder or for one upload.

The warnings are near-duplicate questions, and prose that shows code (inline code in
backticks, in an explanation, a choice's ``why``, a step or a common mistake) that no check
of its item backs: such a statement says what code does, and nothing runs it.

``studybot questions lint`` and an admin's pack upload in chat must say the same things about
the same file, so both go through here: :func:`lint_packs` for files on disk and
:func:`validate_upload` for bytes that are not in the packs folder yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePath

from bot.questions.claims import INLINE_CODE
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
from bot.questions.schema import Item

__all__ = ["lint_packs", "unbacked_code_problems", "validate_upload"]


def lint_packs(root: Path, *, threshold: int = DEFAULT_THRESHOLD) -> LoadResult:
    """:func:`load_packs` plus near-duplicate warnings between all the valid items.

    The valid items of a pack that has errors are compared too, so a near-duplicate is not
    found only after the pack's errors are fixed.
    """
    result = load_packs(root)
    result.problems.extend(duplicate_problems(located_items(result.contents), threshold=threshold))
    result.problems.extend(unbacked_code_problems(result.contents))
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
    problems.extend(unbacked_code_problems([contents]))
    problems.sort(key=lambda problem: problem.line)  # as `questions lint` prints them
    if loaded is None or any(problem.severity == "error" for problem in problems):
        return None, problems
    return loaded, problems


def unbacked_code_problems(files: Iterable[PackContents]) -> Iterator[Problem]:
    """A warning for each text that shows inline code and that no check of its item backs.

    The texts are an explanation, a choice's ``why``, a step and a common mistake; the
    warning is at the text's line: ``dg-mc-04: step 2 shows code that no check backs``.
    """
    for contents in files:
        for item, line in contents.items:
            backed = {ref for check in item.checks for ref in check.backs}
            for ref, what, text in _linted_texts(item):
                if ref in backed or not INLINE_CODE.search(text):
                    continue
                yield Problem(
                    contents.path,
                    contents.text_lines.get((item.id, ref), line),
                    item.id,
                    f"{what} shows code that no check backs (add a check with `backs: {ref}`)",
                    "warning",
                )


def _linted_texts(item: Item) -> Iterator[tuple[str, str, str]]:
    """``(name in backs, name in a message, text)`` of each text the lint reads."""
    explanation = getattr(item, "explanation", None)
    if explanation is not None:
        yield "explanation", "the explanation", explanation
    for number, choice in enumerate(getattr(item, "choices", None) or (), 1):
        if choice.why is not None:
            yield f"choice {number}", f"the why of choice {number}", choice.why
    for number, step in enumerate(getattr(item, "steps", ()), 1):
        yield f"step {number}", f"step {number}", step
    for number, mistake in enumerate(getattr(item, "common_mistakes", ()), 1):
        yield f"mistake {number}", f"mistake {number}", mistake
