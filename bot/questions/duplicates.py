"""Near-duplicate questions: the same question asked twice, across packs or within one.

Imports make this common: two study groups bring the same Quizlet set, or a cheat sheet
repeats a card as a practice problem. Exact id reuse is an error the loader already reports;
this module finds items whose *content* is nearly the same and reports both ids and both
``file:line`` as warnings (an author decides; some pairs are deliberate contrasts).

How two items are compared
--------------------------
* Prompts are normalised (case, punctuation, whitespace: rapidfuzz's ``default_process``)
  and scored with ``token_sort_ratio``, so reordered words still match. ``token_set_ratio``
  is also used, which forgives a few extra words, but only when both prompts have a similar
  number of words (at least 3/4): otherwise "What is a dynamic graph?" would be a
  duplicate of every longer question that contains those words.
* Many prompts are generic ("What does this print?") and the snippet is the question. So
  when both items have code, the code must be nearly the same too (``ratio`` on the code
  with whitespace collapsed) *and* it must be expected to do the same thing (the same
  output, or the same exception): ``x * x`` and ``x + x`` differ by one character but
  print different gradients, and that difference is the whole question. An item with code
  and one without are never duplicates.
* A pair is reported when every score is at least the threshold (90 by default); the
  reported similarity is the lowest of them.

A fast first pass compares every prompt's sorted words with ``rapidfuzz.process.cdist``
(C++, all cores, blocks of rows so memory stays bounded) and keeps pairs within 20 points of
the threshold; only those few are scored exactly, so thousands of items take a second or two.

The pass is bounded whatever the input: the fast pass reads at most the first
:data:`KEY_CHARS` characters of each prompt's words, and at most :data:`MAX_CANDIDATES` pairs
are scored exactly (a file of near-identical items would otherwise make every pair one), and
at most :data:`MAX_COMPARED` items take part.
When the budget runs out, the report says so in a warning instead of going quiet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process, utils

from bot.questions.expectations import normalize_output
from bot.questions.loader import LoadedPack, PackContents, Problem
from bot.questions.schema import Item

__all__ = [
    "DEFAULT_THRESHOLD",
    "KEY_CHARS",
    "MAX_CANDIDATES",
    "MAX_COMPARED",
    "Located",
    "NearDuplicate",
    "duplicate_problems",
    "find_near_duplicates",
    "located_items",
    "scan_near_duplicates",
]

DEFAULT_THRESHOLD = 90
KEY_CHARS = 400
"""Characters of each prompt's sorted words that the fast pass compares."""
MAX_CANDIDATES = 200_000
MAX_COMPARED = 10_000
"""Items the fast pass compares at most (all pairs of 10,000 short keys: a few seconds)."""
"""Pairs scored exactly at most (about two seconds); a normal pack has a handful."""
_SET_LENGTH_RATIO = 0.75
_PREFILTER_SLACK = 20  # the fast pass keeps pairs this far below the threshold
_BLOCK = 2048  # rows per cdist call: bounds memory at _BLOCK * n bytes
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Located:
    """An item and where it is written (a pack file or an import's source file)."""

    item: Item
    path: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """``second`` repeats ``first`` (``first`` comes earlier, or is the existing item)."""

    first: Located
    second: Located
    similarity: int


def located_items(packs: Iterable[LoadedPack | PackContents]) -> list[Located]:
    """Every item of the packs with its file and line, in pack order.

    For :class:`PackContents` (a file that may have errors) these are the items that validate.
    """
    out: list[Located] = []
    for pack in packs:
        contents = pack if isinstance(pack, PackContents) else PackContents.of(pack)
        out.extend(Located(item, contents.path, line) for item, line in contents.items)
    return out


def _prompt_text(item: Item) -> str:
    return _SPACE.sub(" ", utils.default_process(item.prompt)).strip()


def _sorted_words(text: str) -> str:
    return " ".join(sorted(set(text.split())))[:KEY_CHARS]


def _code_key(item: Item) -> tuple[str, tuple[str, str]] | None:
    """The snippet (whitespace collapsed) and what it is expected to do."""
    if item.code is None:
        return None
    if item.expect_error is not None:
        expectation = ("error", item.expect_error.rsplit(".", 1)[-1])
    else:
        expectation = ("stdout", normalize_output(item.expect_stdout or ""))
    return _SPACE.sub(" ", item.code).strip(), expectation


def _prompt_score(a: str, b: str) -> int:
    score = fuzz.token_sort_ratio(a, b)
    words_a, words_b = len(a.split()) or 1, len(b.split()) or 1
    if min(words_a, words_b) / max(words_a, words_b) >= _SET_LENGTH_RATIO:
        score = max(score, fuzz.token_set_ratio(a, b))
    return round(score)


def find_near_duplicates(
    items: Sequence[Located],
    *,
    against: Sequence[Located] = (),
    threshold: int = DEFAULT_THRESHOLD,
) -> list[NearDuplicate]:
    """Pairs within ``items``, and between ``items`` and ``against`` (existing items)."""
    return scan_near_duplicates(items, against=against, threshold=threshold)[0]


def scan_near_duplicates(
    items: Sequence[Located],
    *,
    against: Sequence[Located] = (),
    threshold: int = DEFAULT_THRESHOLD,
    max_candidates: int = MAX_CANDIDATES,
) -> tuple[list[NearDuplicate], bool]:
    """The pairs, and whether the candidate budget cut the scan short.

    Pairs inside ``against`` are not reported: those are another file's business. A fast
    pass (``ratio`` on each prompt's sorted words, in C++ over blocks of rows) keeps the
    candidates; each candidate is then scored as the module docstring says, up to
    ``max_candidates`` of them.
    """
    pool = [*against, *items][:MAX_COMPARED]
    cut = len(against) + len(items) > len(pool)
    if len(pool) <= len(against) or len(pool) < 2:
        return [], cut
    texts = [_prompt_text(entry.item) for entry in pool]
    keys = [_sorted_words(text) for text in texts]
    codes = [_code_key(entry.item) for entry in pool]
    cutoff = max(0, threshold - _PREFILTER_SLACK)
    found: list[NearDuplicate] = []
    budget = max_candidates
    for start in range(len(against), len(pool), _BLOCK):
        stop = min(start + _BLOCK, len(pool))
        # Each new item is compared with the items before it, so every pair is seen once.
        scores = process.cdist(
            keys[start:stop],
            keys[:stop],
            scorer=fuzz.ratio,
            score_cutoff=cutoff,
            dtype=np.uint8,
            workers=-1,
        )
        rows, columns = np.nonzero(scores)
        for offset, column in zip(rows.tolist(), columns.tolist(), strict=True):
            row = start + offset
            if column >= row:
                continue
            if budget == 0:
                found.sort(key=_order)
                return found, True
            budget -= 1
            pair = _judge(pool[column], pool[row], texts, codes, column, row, threshold)
            if pair is not None:
                found.append(pair)
    found.sort(key=_order)
    return found, cut


def _order(pair: NearDuplicate) -> tuple[str, int, int]:
    return pair.second.path, pair.second.line, pair.first.line


def _judge(
    first: Located,
    second: Located,
    texts: Sequence[str],
    codes: Sequence[tuple[str, tuple[str, str]] | None],
    i: int,
    j: int,
    threshold: int,
) -> NearDuplicate | None:
    score = _prompt_score(texts[i], texts[j])
    if score < threshold:
        return None
    code_a, code_b = codes[i], codes[j]
    if (code_a is None) != (code_b is None):
        return None
    if code_a is not None and code_b is not None:
        if code_a[1] != code_b[1]:
            return None  # the snippets do different things: different questions
        score = min(score, round(fuzz.ratio(code_a[0], code_b[0])))
        if score < threshold:
            return None
    return NearDuplicate(first, second, score)


def duplicate_problems(
    items: Sequence[Located],
    *,
    against: Sequence[Located] = (),
    threshold: int = DEFAULT_THRESHOLD,
) -> list[Problem]:
    """Near-duplicates as warnings at the later item, naming both ids and both places."""
    problems = []
    pairs, cut = scan_near_duplicates(items, against=against, threshold=threshold)
    if cut:
        problems.append(
            Problem(
                items[0].path,
                1,
                "",
                f"the near-duplicate check was cut short (it compares at most "
                f"{MAX_COMPARED:,} items and scores at most {MAX_CANDIDATES:,} similar pairs); "
                "the near-duplicates below are only the first ones found",
                "warning",
            )
        )
    # One warning per later item, against its closest earlier twin: a file of near-identical
    # items would otherwise print one line per pair.
    by_item: dict[tuple[str, int, str], list[NearDuplicate]] = {}
    for pair in pairs:
        by_item.setdefault((pair.second.path, pair.second.line, pair.second.item.id), []).append(
            pair
        )
    for group in by_item.values():
        pair = max(group, key=lambda p: (p.similarity, -p.first.line))
        first, second = pair.first, pair.second
        more = f" (and {len(group) - 1:,} more)" if len(group) > 1 else ""
        problems.append(
            Problem(
                second.path,
                second.line,
                second.item.id,
                f"near-duplicate of {first.item.id} ({first.where}){more}, similarity "
                f"{pair.similarity}: {_short(second.item.prompt)} ~ {_short(first.item.prompt)}",
                "warning",
            )
        )
    return problems


def _short(text: str, limit: int = 50) -> str:
    one_line = _SPACE.sub(" ", text).strip()
    return repr(one_line if len(one_line) <= limit else one_line[: limit - 1].rstrip() + "\u2026")
