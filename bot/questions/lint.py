"""The linter: loading problems plus warnings, for a folder or for one upload.

The warnings are near-duplicate questions, right answers crowding one choice position
(:mod:`bot.questions.positions`), prose that shows code (inline code in
backticks, in an explanation, a choice's ``why``, a step or a common mistake) that no check
of its item backs, and choices that no check backs although they say what code computes: a
choice whose text is code or a value (it needs a ``why``, and a check that backs it), and a
choice whose ``why`` names a value, an expression or a derivative. Such statements say what
code does, and nothing runs them. A ``why`` can be wrong about a value without showing any
code (``9.0 6.0``: "those are the derivatives of x²"), so the choices are judged by what they
name, not only by backticks.

The one exception is the correct choice of an item with its own ``code``: that snippet and its
expectation, which ``questions check`` runs, are its check; and a practice item's correct
choice needs no ``why``, because its steps explain it.

``studybot questions lint`` and an admin's pack upload in chat must say the same things about
the same file, so both go through here: :func:`lint_packs` for files on disk and
:func:`validate_upload` for bytes that are not in the packs folder yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path, PurePath

from bot.questions.claims import INLINE_CODE, names_a_result, shows_code_or_a_value
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
from bot.questions.positions import crowded_answer_problems
from bot.questions.schema import Item, prose_checks

__all__ = ["lint_packs", "unbacked_choice_problems", "unbacked_code_problems", "validate_upload"]


def lint_packs(root: Path, *, threshold: int = DEFAULT_THRESHOLD) -> LoadResult:
    """:func:`load_packs` plus near-duplicate warnings between all the valid items.

    The valid items of a pack that has errors are compared too, so a near-duplicate is not
    found only after the pack's errors are fixed.
    """
    result = load_packs(root)
    result.problems.extend(duplicate_problems(located_items(result.contents), threshold=threshold))
    result.problems.extend(unbacked_code_problems(result.contents))
    result.problems.extend(unbacked_choice_problems(result.contents))
    result.problems.extend(crowded_answer_problems(result.contents))
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
    problems.extend(unbacked_choice_problems([contents]))
    problems.extend(crowded_answer_problems([contents]))
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
            backed = {ref for check in prose_checks(item) for ref in check.backs}
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


def unbacked_choice_problems(files: Iterable[PackContents]) -> Iterator[Problem]:
    """A warning for each choice that says what code computes and that no check backs.

    A wrong choice whose text is code or a value must have a ``why`` (``choice 3 is code or a
    value but has no why``), and a check must back it; so must a choice whose ``why`` names a
    value, an expression or a derivative. A correct choice needs no ``why`` (the explanation or
    the steps say why it is right), and the item's own ``code`` backs it; without that code, a
    correct choice that is code or a value needs a check too.
    A ``why`` that shows code and is not backed is already reported by
    :func:`unbacked_code_problems`, so it is not reported twice.
    """
    for contents in files:
        for item, line in contents.items:
            backed = {ref for check in prose_checks(item) for ref in check.backs}
            for number, choice in enumerate(getattr(item, "choices", None) or (), 1):
                ref = f"choice {number}"
                shows = shows_code_or_a_value(choice.text)
                if choice.why is None and shows and not choice.correct:
                    message = (
                        f"choice {number} is code or a value but has no why (say why it is "
                        f"wrong, and add a check with `backs: {ref}`)"
                    )
                elif ref in backed or (choice.correct and item.code is not None):
                    continue
                elif choice.why is None:
                    if not shows:
                        continue
                    # A correct choice: the explanation or the steps say why, but nothing runs it.
                    message = (
                        f"choice {number} is code or a value that no check backs "
                        f"(add a check with `backs: {ref}`)"
                    )
                elif INLINE_CODE.search(choice.why) or not (shows or names_a_result(choice.why)):
                    continue  # shown code is unbacked_code_problems' warning
                else:
                    what = "is code or a value" if shows else "has a why that names a value"
                    message = (
                        f"choice {number} {what} that no check backs "
                        f"(add a check with `backs: {ref}`)"
                    )
                yield Problem(
                    contents.path,
                    contents.text_lines.get((item.id, ref), line),
                    item.id,
                    message,
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
