"""Import Open Trivia Database (OpenTDB) exports, as JSON or YAML.

The shape is the API's response::

    {"response_code": 0,
     "results": [{"type": "multiple" | "boolean" | "text", "difficulty": "easy",
                  "category": "...", "question": "...", "correct_answer": "...",
                  "incorrect_answers": ["..."]}]}

A ``text`` question (free text: no choices to show) becomes a typed item: the correct answer
is what the bot accepts, a ``|`` in it separating accepted forms, and the incorrect answers
become its ``wrong`` examples, which the key must refuse.

A bare list of result objects is accepted too. Text is HTML-escaped in the default API
encoding (``&quot;``, ``&#039;``), so it is unescaped; the API's ``url3986`` and ``base64``
encodings are recognised from the ``type`` field and decoded. The correct answer is listed
apart from the others in the source; choices are put in an order derived from the question
text, so the right one is not always first and re-importing gives the same order.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import html
import json
import random
import urllib.parse
from collections.abc import Callable
from typing import Any

import yaml

from bot.questions.importers.base import DIFFICULTY_WORDS, ImportResult, PackBuilder, tag_slug
from bot.questions.loader import yaml_syntax_problem
from bot.questions.schema import MAX_CHOICES
from bot.questions.untrusted import InputRefused, bounded_loader, json_loads

__all__ = ["import_opentdb", "json_element_lines"]

_TYPES = {"multiple", "boolean", "text"}
_TEXT_TYPES = {"text"}  # a free-text question: typed, graded by the bot
_RESPONSE_CODES = {
    1: "no results (the query asked for more questions than there are)",
    2: "invalid parameter in the query",
    3: "session token not found",
    4: "session token exhausted",
    5: "rate limited",
}
Decoder = Callable[[str], str]


def import_opentdb(text: str, result: ImportResult, *, is_json: bool) -> None:
    """Parse an OpenTDB response (JSON, or the same data as YAML) into ``result``."""
    builder = PackBuilder(result)
    loaded = _load_json(builder, text) if is_json else _load_yaml(builder, text)
    if loaded is None:
        return
    data, lines = loaded
    if isinstance(data, dict):
        code = data.get("response_code", 0)
        if code in _RESPONSE_CODES:
            builder.problem(1, "response_code", f"OpenTDB answered {code}: {_RESPONSE_CODES[code]}")
        entries = data.get("results")
    else:
        entries = data
    if not isinstance(entries, list):
        builder.problem(
            1,
            "results",
            'expected {"results": [...]} with one object per question (or a bare list of them)',
        )
        return
    if not entries:
        builder.problem(1, "results", "the results list is empty")
    for index, entry in enumerate(entries):
        line = lines[index] if index < len(lines) else 1
        _entry(builder, line, index, entry)


def _load_json(builder: PackBuilder, text: str) -> tuple[Any, list[int]] | None:
    try:
        data = json_loads(text)
    except json.JSONDecodeError as exc:
        builder.problem(exc.lineno, "", f"not valid JSON: {exc.msg} (column {exc.colno})")
        return None
    except InputRefused as exc:
        builder.problem(exc.line, "", exc.message)
        return None
    return data, json_element_lines(text)


def _load_yaml(builder: PackBuilder, text: str) -> tuple[Any, list[int]] | None:
    loader = bounded_loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        line, message = yaml_syntax_problem(exc, text)
        builder.problem(line, "", message)
        return None
    except InputRefused as exc:
        builder.problem(exc.line, "", exc.message)
        return None
    finally:
        loader.dispose()
    sequence: yaml.Node | None = node
    if isinstance(node, yaml.MappingNode):
        sequence = next(
            (value for key, value in node.value if getattr(key, "value", None) == "results"), None
        )
    lines = (
        [child.start_mark.line + 1 for child in sequence.value]
        if isinstance(sequence, yaml.SequenceNode)
        else []
    )
    return data, lines


def json_element_lines(text: str) -> list[int]:
    """The line of each element of the results array (or of a top-level array) in JSON text.

    ``json`` keeps no positions, so this walks the text once, tracking strings and nesting,
    and notes where each element of the array of interest starts.
    """
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]
    starts: list[int] = []
    stack: list[str] = []
    target: int | None = None
    in_string = escaped = False
    string_start = 0
    last_string = ""
    key = ""
    awaiting = False
    for position, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                last_string = text[string_start + 1 : position]
            continue
        if ch in " \t\r\n":
            continue
        if awaiting and ch != "]":
            starts.append(position)
        awaiting = False
        if ch == '"':
            in_string, string_start = True, position
        elif ch == ":" and len(stack) == 1 and stack[0] == "{":
            key = last_string
        elif ch in "{[":
            if (
                ch == "["
                and target is None
                and (not stack or (stack == ["{"] and key == "results"))
            ):
                target = len(stack) + 1
                awaiting = True
            stack.append(ch)
        elif ch in "}]":
            if stack:
                stack.pop()
        elif ch == "," and target is not None and len(stack) == target:
            awaiting = True
    return [bisect.bisect_left(newlines, start) + 1 for start in starts]


def _decoder(kind: object) -> Decoder | None:
    """How the texts are encoded, recognised from the ``type`` field's value."""
    if not isinstance(kind, str):
        return None
    if kind in _TYPES:
        return html.unescape
    if urllib.parse.unquote(kind) in _TYPES:
        return urllib.parse.unquote
    try:
        if base64.b64decode(kind, validate=True).decode("utf-8") in _TYPES:
            return _b64
    except (binascii.Error, UnicodeDecodeError):
        pass
    return None


def _b64(text: str) -> str:
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return text


def _is_text(value: object) -> bool:
    return isinstance(value, str | int | float)


def _entry(builder: PackBuilder, line: int, index: int, entry: object) -> None:
    where = f"results[{index}]"
    if not isinstance(entry, dict):
        builder.problem(
            line, where, f"expected an object with question fields, got {type(entry).__name__}"
        )
        return
    missing = [
        name
        for name in ("type", "question", "correct_answer", "incorrect_answers")
        if name not in entry
    ]
    if missing:
        builder.problem(line, where, f"missing field(s): {', '.join(missing)}")
        return
    scalars = ("type", "difficulty", "category")
    odd = [name for name in scalars if entry.get(name) is not None and not _is_text(entry[name])]
    if odd:
        builder.problem(line, where, f"{', '.join(odd)} must be text, not a list or mapping")
        return
    decode = _decoder(entry.get("type"))
    if decode is None:
        builder.problem(
            line,
            f"{where}.type",
            f"expected 'multiple', 'boolean' or 'text', got {entry.get('type')!r}",
        )
        return
    incorrect_raw = entry["incorrect_answers"]
    texts = [entry["question"], entry["correct_answer"]]
    if not isinstance(incorrect_raw, list) or not all(
        isinstance(t, str | int | float) for t in [*texts, *incorrect_raw]
    ):
        builder.problem(
            line, where, "question and answers must be text, incorrect_answers a list of texts"
        )
        return
    question = decode(str(entry["question"])).strip()
    correct = decode(str(entry["correct_answer"])).strip()
    incorrect = [decode(str(text)).strip() for text in incorrect_raw]
    kind = decode(str(entry["type"]))
    draft = builder.draft("typed" if kind in _TEXT_TYPES else "multiple_choice", line)
    difficulty_raw = decode(str(entry.get("difficulty", ""))).strip().lower()
    difficulty = DIFFICULTY_WORDS.get(difficulty_raw)
    if difficulty is None:
        draft.warn("difficulty", f"{difficulty_raw!r} is not easy, medium or hard; set to medium")
    category = entry.get("category")
    tags = [tag_slug(decode(str(category)))] if category else []
    if kind in _TEXT_TYPES:
        accepted = [form.strip() for form in correct.split("|") if form.strip()]
        draft.commit(
            {
                "difficulty": (difficulty or DIFFICULTY_WORDS["medium"]).value,
                "tags": [tag for tag in tags if tag],
                "prompt": question,
                "accept": accepted,
                "wrong": [text for text in incorrect if text][:12],
            }
        )
        return
    if len(incorrect) + 1 > MAX_CHOICES:
        draft.error(
            "choices",
            f"{len(incorrect) + 1} answers; at most {MAX_CHOICES} fit (buttons A-E); "
            "this question was not imported",
        )
        return
    if kind == "boolean":
        ordered = ["True", "False"]
        if correct.casefold() not in {"true", "false"} or len(incorrect) != 1:
            draft.error(
                "correct_answer",
                f"a boolean question needs 'True' or 'False' and one incorrect answer, "
                f"got {correct!r} and {incorrect!r}; this question was not imported",
            )
            return
        correct = correct.capitalize()
    else:
        ordered = [correct, *incorrect]
        seed = int.from_bytes(hashlib.sha256(question.encode("utf-8")).digest()[:8], "big")
        random.Random(seed).shuffle(ordered)
    draft.commit(
        {
            "difficulty": (difficulty or DIFFICULTY_WORDS["medium"]).value,
            "tags": [tag for tag in tags if tag],
            "prompt": question,
            "choices": [
                {"text": text, "correct": True} if text == correct else {"text": text}
                for text in ordered
            ],
        }
    )
