"""The texts of an item that a check can back, and how a check names them.

An item's prose says things about what code does: an explanation, a choice's ``why``, the
steps of a worked problem. A check (``checks:`` in a pack, see :class:`bot.questions.schema.Check`)
backs some of those texts with a snippet and its expected output or exception, and names
them in ``backs``:

``answer``, ``explanation``, ``final_answer``, ``model_answer``, ``hint``
    the item's single text of that name (``hint`` is an open prompt's one hint);
``choice N``, ``step N``, ``hint N``, ``mistake N``
    the N-th (from 1) choice (its text and its ``why``), step, hint or common mistake.

This module is pure: it knows the names and reads them from an item's fields, given as a
mapping, so the schema can use it while an item is still being validated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "INLINE_CODE",
    "NUMBERED",
    "SINGLE",
    "ClaimRefError",
    "describe_available",
    "item_texts",
    "names_a_result",
    "parse_ref",
    "shows_code_or_a_value",
]

# A single text: the name in `backs` is the field's name.
SINGLE = ("answer", "explanation", "final_answer", "model_answer", "hint")
# A numbered text: `choice 2` is the second entry of `choices`, and so on.
NUMBERED = {"choice": "choices", "step": "steps", "hint": "hints", "mistake": "common_mistakes"}

# Inline code in Markdown: what `questions lint` looks for in an item's prose.
INLINE_CODE = re.compile(r"`[^`\n]+`")
# A value: a number (not a digit inside a name such as HDF5 or float64), or a Python or
# tensor value written out (`None`, `True`, NaN, inf).
_VALUE = re.compile(r"(?<![A-Za-z_])[0-9]|\b(?:True|False|None|NaN|nan|inf)\b")
# An expression or a derivative: x², 2x, dz/dy, d(loss)/dw, √5, Σ, ∂, a · b, a = b, a minus or
# times sign (written as escapes: they look like - and x),
# or the word itself ("the zero derivative", "its slope").
_EXPRESSION = re.compile(
    r"[²³⁴ⁿ√Σ∂·\u00d7≈\u2212=]|\b[0-9]+[a-z]\b|\bd[a-z(]\w*\)?/d[a-z]\w*|\b(?:derivatives?|slopes?)\b",
    re.IGNORECASE,
)
_NUMBERED_REF = re.compile(r"^(choice|step|hint|mistake)\s+([0-9]{1,3})$")
_EXPECTED = (
    "answer, explanation, final_answer, model_answer, hint, or choice N, step N, hint N, "
    "mistake N (N counts from 1)"
)


class ClaimRefError(ValueError):
    """A ``backs`` entry that is not the name of any kind of text."""


def parse_ref(text: str) -> str:
    """The canonical form of one ``backs`` entry (``"Step  2"`` -> ``"step 2"``)."""
    ref = " ".join(text.split()).lower()
    if ref in SINGLE:
        return ref
    match = _NUMBERED_REF.match(ref)
    if match is None:
        if "," in ref:
            raise ClaimRefError(
                f"{text!r} names several texts in one string; write them as a list, "
                f"e.g. [{', '.join(part.strip() for part in ref.split(','))}]"
            )
        raise ClaimRefError(f"{text!r} is not a text a check can back; expected {_EXPECTED}")
    number = int(match.group(2))
    if number < 1:
        raise ClaimRefError(f"{text!r}: numbers count from 1 (the first is {match.group(1)} 1)")
    return f"{match.group(1)} {number}"


def item_texts(fields: Mapping[str, Any], kind_fields: Sequence[str]) -> dict[str, str | None]:
    """Every text of an item a check could back, by its name in ``backs``.

    ``fields`` are the item's (validated) fields; ``kind_fields`` the fields its kind has, so
    that a field the kind does not have is not offered. A field the kind has but that is
    missing from ``fields`` (it failed validation) is left out too: nothing is known about
    it. The value is the text (for a choice, its text and its ``why``), ``None`` when the
    item leaves that optional text out.
    """
    out: dict[str, str | None] = {}
    for name in SINGLE:
        if name == "hint" and "hints" in kind_fields:
            continue  # a practice item's hints are numbered
        if name in kind_fields and name in fields:
            value = fields[name]
            out[name] = value if isinstance(value, str) else None
    for word, field in NUMBERED.items():
        if field not in kind_fields or field not in fields:
            continue
        entries = fields[field]
        if not isinstance(entries, list | tuple):
            continue
        for number, entry in enumerate(entries, 1):
            out[f"{word} {number}"] = _entry_text(entry)
    return out


def shows_code_or_a_value(text: str) -> bool:
    """Whether ``text`` (a choice) is or shows code, a number or a value such as ``None``."""
    return bool(INLINE_CODE.search(text) or _VALUE.search(text))


def names_a_result(text: str) -> bool:
    """Whether ``text`` (a ``why``) shows code or names a value, an expression or a
    derivative: a statement about what code computes, which only running it can confirm."""
    return shows_code_or_a_value(text) or bool(_EXPRESSION.search(text))


def describe_available(texts: Mapping[str, str | None]) -> str:
    """``final_answer, choice 1-4, step 1-3`` for the texts that exist, in the order given."""
    parts: list[str] = []
    runs: dict[str, list[int]] = {}
    for ref, text in texts.items():
        if text is None:
            continue
        word, _, number = ref.partition(" ")
        if number:
            if word not in runs:
                runs[word] = []
                parts.append(word)
            runs[word].append(int(number))
        else:
            parts.append(ref)
    shown = []
    for part in parts:
        numbers = runs.get(part)
        if numbers is None:
            shown.append(part)
        elif len(numbers) == 1:
            shown.append(f"{part} {numbers[0]}")
        else:
            shown.append(f"{part} {numbers[0]}-{numbers[-1]}")
    return ", ".join(shown) if shown else "nothing"


def _entry_text(entry: object) -> str:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping):  # a choice as written in YAML, not validated yet
        text, why = entry.get("text"), entry.get("why")
    else:
        text, why = getattr(entry, "text", None), getattr(entry, "why", None)
    return " ".join(part for part in (text, why) if isinstance(part, str))
