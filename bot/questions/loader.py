"""Load packs from YAML and report every problem with ``file:line`` and the field at fault.

PyYAML's composer keeps the line of every node; we build the plain data ourselves while
recording ``path -> line``, validate with the pydantic schema, and map each validation error's
location back to the closest recorded line. One bad item never hides the others: all
problems of all files come back together, and the good packs still load.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from bot.questions.claims import NUMBERED
from bot.questions.schema import (
    Check,
    Exercise,
    Flashcard,
    Item,
    MultipleChoice,
    OpenPrompt,
    Pack,
    Practice,
    TypedAnswer,
    backs_problems,
    claim_refs,
    expectation_problem,
    practice_problem,
)
from bot.questions.untrusted import MAX_ITEMS, InputRefused, bounded_loader, check_size

__all__ = [
    "LoadResult",
    "LoadedPack",
    "PackContents",
    "Problem",
    "item_hash",
    "load_pack_text",
    "load_packs",
    "pack_files",
    "read_pack_text",
    "yaml_syntax_problem",
]

Path_ = tuple[str | int, ...]
KINDS: dict[
    str, type[Flashcard | MultipleChoice | Practice | OpenPrompt | Exercise | TypedAnswer]
] = {
    "flashcard": Flashcard,
    "multiple_choice": MultipleChoice,
    "practice": Practice,
    "open": OpenPrompt,
    "exercise": Exercise,
    "typed": TypedAnswer,
}
_ITEM_ADAPTER: TypeAdapter[Item] = TypeAdapter(Item)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a pack file, addressed the way an editor can jump to it."""

    path: str
    line: int
    field: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}"
        label = "" if self.severity == "error" else "warning: "
        return (
            f"{where}: {label}{self.field}: {self.message}"
            if self.field
            else (f"{where}: {label}{self.message}")
        )


@dataclass(frozen=True, slots=True)
class LoadedPack:
    path: str
    pack: Pack
    content_hash: str
    item_lines: dict[str, int] = field(hash=False, compare=False)
    # The line of each item's checks: (item id, index in `checks`) -> line.
    check_lines: dict[tuple[str, int], int] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class PackContents:
    """What one pack file declares, whether or not it loads, for the checks across files.

    ``ids`` holds every readable id with the line of its item (invalid items included, first
    copy only); ``items`` the items that validate, with their lines; ``text_lines`` the line
    of each text of those items that a check can back, by ``(id, "step 2")``. A file with
    errors is still compared with the others, so one lint run reports everything at once.
    """

    path: str
    pack_name: str | None
    ids: dict[str, int] = field(hash=False, compare=False)
    items: tuple[tuple[Item, int], ...] = field(hash=False, compare=False)
    text_lines: dict[tuple[str, str], int] = field(default_factory=dict, hash=False, compare=False)

    @classmethod
    def of(cls, loaded: LoadedPack) -> PackContents:
        lines = loaded.item_lines
        return cls(
            loaded.path,
            loaded.pack.pack,
            {item.id: lines.get(item.id, 1) for item in loaded.pack.items},
            tuple((item, lines.get(item.id, 1)) for item in loaded.pack.items),
        )


@dataclass(slots=True)
class LoadResult:
    packs: list[LoadedPack] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Every file that parsed, loaded or not, in file order (the packs are the ones that loaded).
    contents: list[PackContents] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]


def item_hash(item: Item) -> str:
    """A stable content hash of one item, used to version edited questions.

    Its ``checks`` are left out: members never see them, so adding or editing a check does
    not make a new version of the question. So is ``shuffle`` while it has its default, so
    that the field's arrival made no new version of every item.
    """
    body = item.model_dump(mode="json", exclude={"checks"})
    if body.get("shuffle") is True:
        del body["shuffle"]
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def pack_files(root: Path) -> list[Path]:
    """The pack files under ``root`` (a file or a directory), in a stable order."""
    if root.is_file():
        return [root]
    return sorted(p for p in root.glob("*.y*ml") if p.suffix in {".yaml", ".yml"})


def load_packs(root: Path, *extra: Path) -> LoadResult:
    """Load every pack under ``root`` (and under each ``extra`` folder or file that exists, such
    as the folder of packs uploaded in chat); also catch ids and pack names reused across
    files."""
    result = LoadResult()
    if not root.exists():
        result.problems.append(Problem(str(root), 0, "", "no such file or directory"))
        return result
    files = pack_files(root)
    if not files:
        result.problems.append(Problem(str(root), 0, "", "no *.yaml pack files here"))
    for folder in extra:
        if folder.exists() and folder.resolve() != root.resolve():  # a folder or a pack file
            files.extend(pack_files(folder))
    for path in files:
        try:
            check_size(path.stat().st_size, path.name)
            raw = path.read_bytes()
        except OSError as exc:
            result.problems.append(Problem(str(path), 0, "", f"cannot read: {exc.strerror}"))
            continue
        except InputRefused as exc:
            result.problems.append(Problem(str(path), exc.line, "", exc.message))
            continue
        loaded, problems, contents = read_pack_text(raw, str(path))
        result.problems.extend(problems)
        if loaded is not None:
            result.packs.append(loaded)
        if contents is not None:
            result.contents.append(contents)
    result.problems.extend(_cross_pack_problems(result.contents))
    # Each file's problems in line order (a field's problem and its item's may come apart).
    order: dict[str, int] = {}
    for problem in result.problems:
        order.setdefault(problem.path, len(order))
    result.problems.sort(key=lambda problem: (order[problem.path], problem.line))
    return result


def load_pack_text(raw: bytes, name: str) -> tuple[LoadedPack | None, list[Problem]]:
    """Parse and validate one pack given as bytes (a file, or an upload from chat)."""
    loaded, problems, _ = read_pack_text(raw, name)
    return loaded, problems


def read_pack_text(
    raw: bytes, name: str, *, max_items: int = MAX_ITEMS
) -> tuple[LoadedPack | None, list[Problem], PackContents | None]:
    """:func:`load_pack_text`, plus what the file declares even when it does not load.

    The contents are ``None`` only when the file is not a YAML mapping at all, or is over a
    budget of :mod:`bot.questions.untrusted` (anchors, nesting, size, item count).
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [Problem(name, 1, "", f"not UTF-8 text (byte {exc.start})")], None
    try:
        data, lines, dup_problems = _compose(text, name)
    except yaml.YAMLError as exc:
        line, message = yaml_syntax_problem(exc, text)
        return None, [Problem(name, line, "", message)], None
    except InputRefused as exc:
        return None, [Problem(name, exc.line, "", exc.message)], None
    problems = list(dup_problems)
    if not isinstance(data, dict):
        shape = "a pack is a mapping with `pack`, `title`, `items`"
        return None, [Problem(name, 1, "", shape)], None

    items_raw = data.get("items")
    if isinstance(items_raw, list) and len(items_raw) > max_items:
        count = f"{len(items_raw):,} items is over the limit of {max_items:,} in one pack file"
        return None, [Problem(name, lines.get(("items",), 1), "items", f"{count}; split it")], None
    valid, ids = _check_items(name, lines, items_raw, problems)
    good_items = [item for item, _ in valid]
    item_lines = {item.id: line for item, line in valid}
    check_lines, text_lines = _claim_lines(lines, items_raw, good_items)
    pack_name = data.get("pack")
    contents = PackContents(
        name,
        pack_name.strip() if isinstance(pack_name, str) else None,
        ids,
        tuple(valid),
        text_lines,
    )
    header = {k: v for k, v in data.items() if k != "items"}
    if "items" in data:
        header["items"] = good_items or items_raw
    # Items that are there but invalid were reported above, item by item; only a missing,
    # empty or non-list `items` is the header's problem.
    items_reported = isinstance(items_raw, list) and bool(items_raw)
    try:
        pack = Pack.model_validate(header)
    except ValidationError as exc:
        for err in exc.errors():
            if err["loc"] and err["loc"][0] == "items" and (len(err["loc"]) > 1 or items_reported):
                continue
            problems.append(_problem(name, lines, (), "", err, data))
        return None, problems, contents
    if problems:
        return None, problems, contents
    digest = hashlib.sha256(raw).hexdigest()
    return LoadedPack(name, pack, digest, item_lines, check_lines), problems, contents


def _claim_lines(
    lines: dict[Path_, int], items_raw: Any, items: Sequence[Item]
) -> tuple[dict[tuple[str, int], int], dict[tuple[str, str], int]]:
    """The line of every check of the valid items, and of every text a check can back."""
    checks: dict[tuple[str, int], int] = {}
    texts: dict[tuple[str, str], int] = {}
    index_of: dict[str, int] = {}
    for position, item_raw in enumerate(items_raw if isinstance(items_raw, list) else ()):
        item_id = _readable_id(item_raw)
        if item_id is not None:
            index_of.setdefault(item_id, position)  # a valid item is the first copy of its id
    for item in items:
        found = index_of.get(item.id)
        if found is None:
            continue
        base: Path_ = ("items", found)
        item_line = lines.get(base, 1)
        for number in range(len(item.checks)):
            checks[item.id, number] = lines.get((*base, "checks", number), item_line)
        for ref in claim_refs(item):
            texts[item.id, ref] = _closest_line(lines, (*base, *_text_path(ref)))
    return checks, texts


def _text_path(ref: str) -> Path_:
    """Where a text a check can back is written in its item (``step 2`` -> steps[1])."""
    word, _, number = ref.partition(" ")
    if not number:
        return (ref,)
    if word == "choice":
        return ("choices", int(number) - 1, "why")
    return (NUMBERED[word], int(number) - 1)


def _runaway_quote(text: str, at: yaml.Mark) -> tuple[int, int, int] | None:
    """The quoted value spanning lines just before an error: (start line, column, end line)."""
    before: yaml.Token | None = None
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if token.start_mark.index >= at.index:
                break
            before = token
    except yaml.YAMLError:
        pass
    if (
        isinstance(before, yaml.ScalarToken)
        and before.style in {'"', "'"}
        and before.end_mark.line > before.start_mark.line
    ):
        return before.start_mark.line + 1, before.start_mark.column + 1, before.end_mark.line + 1
    return None


def _check_items(
    name: str, lines: dict[Path_, int], items_raw: Any, problems: list[Problem]
) -> tuple[list[tuple[Item, int]], dict[str, int]]:
    """The valid items with their lines, and every readable id with its line (first copy).

    Items are validated one by one so that a bad item is reported without hiding the pack's
    other problems, and the error locations are relative to a known item. An invalid item's
    id still counts: a later copy of it is reported now, not after the first copy is fixed.
    """
    valid: list[tuple[Item, int]] = []
    seen: dict[str, int] = {}
    if not isinstance(items_raw, list):
        return valid, seen
    for index, item_raw in enumerate(items_raw):
        item_path: Path_ = ("items", index)
        line = lines.get(item_path, 1)
        item: Item | None = None
        try:
            item = _ITEM_ADAPTER.validate_python(item_raw)
        except ValidationError as exc:
            label = _item_label(item_raw, index)
            problems.extend(
                _problem(name, lines, item_path, label, err, item_raw)
                for err in _meaningful(exc.errors())
            )
            problems.extend(_item_rule_problems(name, lines, item_path, label, item_raw, exc))
            problems.extend(_check_rule_problems(name, lines, item_path, label, item_raw, exc))
        item_id = item.id if item is not None else _readable_id(item_raw)
        if item_id is not None:
            if item_id in seen:
                problems.append(
                    Problem(
                        name,
                        lines.get((*item_path, "id"), line),
                        f"{item_id}.id",
                        f"id {item_id!r} is already used at line {seen[item_id]}",
                    )
                )
                continue
            seen[item_id] = line
        if item is not None:
            valid.append((item, line))
    return valid, seen


def _meaningful(errors: Sequence[ErrorDetails]) -> list[ErrorDetails]:
    """The errors worth reporting: a list's "too short" is dropped when one of its entries is
    itself invalid, since the count then leaves that entry out (an unquoted ``2.0`` among two
    choices read as "needs at least 2 entries, found 1")."""
    lists_with_bad_entries = {
        loc[:index]
        for loc in (tuple(err["loc"]) for err in errors)
        for index, part in enumerate(loc)
        if isinstance(part, int)
    }
    return [
        err
        for err in errors
        if not (err["type"] == "too_short" and tuple(err["loc"]) in lists_with_bad_entries)
    ]


def _item_rule_problems(
    name: str,
    lines: dict[Path_, int],
    item_path: Path_,
    label: str,
    raw: Any,
    exc: ValidationError,
) -> Iterable[Problem]:
    """Whole-item rules, checked on the raw data when field errors kept pydantic from them."""
    if not isinstance(raw, dict):
        return
    if any(
        err["loc"] == () or len(err["loc"]) == 1
        for err in exc.errors()
        if err["type"] == "value_error"
    ):
        return  # pydantic got as far as the item's own rules and reported them already
    line = lines.get(item_path, 1)
    found = expectation_problem(raw.get("code"), raw.get("expect_stdout"), raw.get("expect_error"))
    if raw.get("kind") == "practice" and found is None:
        found = practice_problem(raw.get("choices"), raw.get("answer"))
    if found:
        yield Problem(name, line, label, found)


def _check_rule_problems(
    name: str,
    lines: dict[Path_, int],
    item_path: Path_,
    label: str,
    raw: Any,
    exc: ValidationError,
) -> Iterable[Problem]:
    """The rules of ``checks`` that field errors kept pydantic from applying.

    A check whose fields fail never reaches its own code/expectation rule, and one invalid
    check keeps the item from asking whether the others' ``backs`` name texts it has; both
    are applied here to the raw data, so all of an item's problems come back at once.
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("checks"), list):
        return
    if raw.get("kind") == "exercise":
        return  # an exercise's checks are calls of its function, judged by their own model
    locs = [_strip_union_tags(tuple(err["loc"]), raw) for err in exc.errors()]
    in_checks = [loc for loc in locs if len(loc) >= 2 and loc[0] == "checks"]
    if not in_checks or any(err["type"] == "claim_not_found" for err in exc.errors()):
        return  # every check validated, and the item judged their `backs` itself
    checks: list[Check | None] = []
    for index, check_raw in enumerate(raw["checks"]):
        mine = [loc for loc in in_checks if loc[1] == index]
        if not mine:
            checks.append(Check.model_validate(check_raw))
            continue
        checks.append(None)
        if isinstance(check_raw, dict) and all(len(loc) > 2 for loc in mine):
            found = expectation_problem(
                check_raw.get("code"),
                check_raw.get("expect_stdout"),
                check_raw.get("expect_error"),
                subject="a check",
            )
            if found:
                where = (*item_path, "checks", index)
                yield Problem(name, _closest_line(lines, where), f"{label}.checks[{index}]", found)
    failed = {loc[0] for loc in locs if loc}
    fields = {key: value for key, value in raw.items() if key not in failed}
    model = KINDS.get(raw["kind"]) if isinstance(raw.get("kind"), str) else None
    for key, info in model.model_fields.items() if model is not None else ():
        if key not in raw and not info.is_required():
            fields[key] = info.default
    for (index, _, position), message in backs_problems(raw.get("kind"), fields, checks):
        loc = _strip_union_tags(("checks", index, "backs", position), raw)
        path = (*item_path, *loc)
        yield Problem(name, _closest_line(lines, path), _join(label, loc), message)


def _cross_pack_problems(files: Sequence[PackContents]) -> Iterable[Problem]:
    """Pack names and ids used by more than one file (files with errors count too)."""
    names: dict[str, str] = {}
    ids: dict[str, tuple[str, int]] = {}
    for contents in files:
        name = contents.pack_name
        if name is not None:
            if name in names:
                yield Problem(
                    contents.path,
                    1,
                    "pack",
                    f"pack name {name!r} is already used by {names[name]}",
                )
            names.setdefault(name, contents.path)
        for item_id, line in contents.ids.items():
            if item_id in ids:
                other_path, other_line = ids[item_id]
                yield Problem(
                    contents.path,
                    line,
                    f"{item_id}.id",
                    f"id {item_id!r} is already used at {other_path}:{other_line}",
                )
            ids.setdefault(item_id, (contents.path, line))


# --- YAML with line numbers -------------------------------------------------------------------


def _compose(text: str, name: str) -> tuple[Any, dict[Path_, int], list[Problem]]:
    loader = bounded_loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}, []
        lines: dict[Path_, int] = {(): node.start_mark.line + 1}
        problems: list[Problem] = []
        data = _build(loader, node, (), lines, problems, name)
        return data, lines, problems
    finally:
        loader.dispose()


def _build(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: Path_,
    lines: dict[Path_, int],
    problems: list[Problem],
    name: str,
) -> Any:
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            here = (*path, key)
            line = key_node.start_mark.line + 1
            if key in out:
                problems.append(
                    Problem(name, line, _dotted(here), f"key {key!r} appears twice in a mapping")
                )
            lines[here] = line
            out[key] = _build(loader, value_node, here, lines, problems, name)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, child in enumerate(node.value):
            here = (*path, index)
            lines[here] = child.start_mark.line + 1
            items.append(_build(loader, child, here, lines, problems, name))
        return items
    return loader.construct_object(node, deep=True)


# --- errors written for pack authors ----------------------------------------------------------

# Syntax errors in something that has a start (a quote, a [ or { collection, a key) are
# reported where it starts: the end of the file, where PyYAML notices, is rarely the place.
_STARTS = {
    "while scanning a quoted scalar": "the quoted text",
    "while parsing a flow sequence": "the [ list",
    "while parsing a flow mapping": "the { mapping",
    "while scanning a simple key": "the key",
}
# A block list or mapping that "ends" badly: the problem is at the line PyYAML stopped at,
# usually a wrong indentation; the collection's start is only context.
_INSIDE = {
    "while parsing a block collection": "list",
    "while parsing a block mapping": "mapping",
    "while parsing a block node": "value",
}


def yaml_syntax_problem(exc: yaml.YAMLError, text: str | None = None) -> tuple[int, str]:
    """The line to report a YAML syntax error at, and the message (with the other line).

    With the ``text`` that failed, a quote that is closed only lines later by another value's
    quote (so the error comes far below) is reported where it opens.
    """
    if not isinstance(exc, yaml.MarkedYAMLError):
        return 1, f"YAML syntax: {exc}"
    problem = exc.problem or str(exc)
    start, at = exc.context_mark, exc.problem_mark or exc.context_mark
    if at is None:
        return 1, f"YAML syntax: {problem}"
    line = at.line + 1
    runaway = _runaway_quote(text, at) if text is not None else None
    if runaway is not None:
        opened, column, closed = runaway
        return opened, (
            f"YAML syntax: the quoted text that starts here (column {column}) runs on to line "
            f"{closed}, where YAML then fails ({problem} at line {line}); is its closing quote "
            "missing?"
        )
    if start is None or exc.context is None or (start.line, start.column) == (at.line, at.column):
        return line, f"YAML syntax: {problem}"
    start_line, column = start.line + 1, start.column + 1
    ends = "end of stream" in problem or "<stream end>" in problem
    if exc.context in _STARTS:
        what = f"{_STARTS[exc.context]} that starts here (column {column})"
        if ends:
            message = f"{what} is never closed (found the end of the file at line {line})"
        elif exc.context == "while scanning a simple key":
            message = (
                f"{what} has no ':' after it (a key and its ':' must be on the same line; "
                f"noticed at line {line})"
            )
        else:
            message = f"{what}: {problem} at line {line}, column {at.column + 1}"
        return start_line, f"YAML syntax: {message}"
    if start_line == line:
        return line, f"YAML syntax: {problem}"
    if exc.context in _INSIDE:
        inside = f"in the {_INSIDE[exc.context]} that starts at line {start_line}"
        return line, f"YAML syntax: {problem} ({inside}; check the indentation)"
    return line, f"YAML syntax: {problem} ({exc.context} that starts at line {start_line})"


def _readable_id(item_raw: Any) -> str | None:
    """An invalid item's id as the schema would read it, when it is there as text."""
    if isinstance(item_raw, dict) and isinstance(item_raw.get("id"), str):
        return item_raw["id"].strip() or None
    return None


def _item_label(item_raw: Any, index: int) -> str:
    if isinstance(item_raw, dict) and isinstance(item_raw.get("id"), str):
        return str(item_raw["id"])
    return f"items[{index}]"


def _problem(
    name: str, lines: dict[Path_, int], base: Path_, label: str, err: ErrorDetails, raw: Any
) -> Problem:
    loc = _strip_union_tags(tuple(err["loc"]), raw)
    path = (*base, *loc)
    line = _closest_line(lines, path)
    field_name = _join(label, loc)
    return Problem(name, line, field_name, _message(err, raw, loc))


def _strip_union_tags(loc: Path_, raw: Any) -> Path_:
    """Drop the discriminator tags pydantic inserts (``items.3.practice.steps``)."""
    out: list[str | int] = []
    current = raw
    for part in loc:
        if (
            isinstance(part, str)
            and part in KINDS
            and not (isinstance(current, dict) and part in current)
        ):
            continue
        if part.__class__ is str and "[" in str(part):  # e.g. "function-after[...]"
            continue
        if isinstance(part, int) and isinstance(current, str):
            continue  # `backs: step 2` is read as a list of one; the place is the text itself
        out.append(part)
        if isinstance(current, dict):
            current = current.get(part)
        elif isinstance(current, list) and isinstance(part, int) and part < len(current):
            current = current[part]
        else:
            current = None
    return tuple(out)


def _closest_line(lines: dict[Path_, int], path: Path_) -> int:
    for size in range(len(path), -1, -1):
        if path[:size] in lines:
            return lines[path[:size]]
    return 1


def _join(label: str, loc: Path_) -> str:
    text = label
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


def _dotted(path: Path_) -> str:
    return _join("", path)


def _message(err: ErrorDetails, raw: Any, loc: Path_) -> str:
    kind = err["type"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        allowed = _allowed_fields(raw, loc)
        return f"unknown field{f' (allowed here: {allowed})' if allowed else ''}"
    if kind in {"union_tag_invalid", "union_tag_not_found"}:
        return f"`kind` must be one of: {', '.join(KINDS)}"
    if kind == "string_pattern_mismatch":
        field = loc[-1] if loc else ""
        if field == "id":
            return "ids are 1-64 lowercase letters, digits, '.', '_' or '-', e.g. dg-flash-01"
        if field == "expect_error" or (len(loc) >= 1 and loc[0] == "expect_error"):
            return "expect_error is an exception type name, e.g. RuntimeError"
        if len(loc) >= 2 and loc[-2] == "tags":
            return "tags are short lowercase words (letters, digits, '-', '_'), e.g. autograd"
        if len(loc) >= 3 and loc[-3] == "graph":
            return (
                "a node type name, as `type(y.grad_fn).__name__` prints it, "
                "e.g. MulBackward0 or MySiLUBackward"
            )
        if len(loc) >= 2 and loc[-2] == "forbid":
            return "a dotted name of what a solution may not call, e.g. torch.autograd.grad"
        return "must be a short lowercase name (letters, digits, '.', '_', '-')"
    if kind == "enum":
        return f"expected one of {err.get('ctx', {}).get('expected', '')}"
    if kind in {"too_short", "too_long"}:
        ctx = err.get("ctx", {})
        found = ctx.get("actual_length")
        if kind == "too_short":
            return f"needs at least {_entries(ctx.get('min_length'))}, found {found}"
        return f"allows at most {_entries(ctx.get('max_length'))}, found {found}"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"is too long (at most {err.get('ctx', {}).get('max_length')} characters)"
    if kind in {"tuple_type", "list_type"}:
        value = err["input"]
        got = "nothing" if value is None else f"{_yaml_type(value)} {value!r}"
        return f"expected a list, got {got}; write one `- entry` per line, or [a, b]"
    if kind == "string_type":
        return (
            f"expected text, got {type(err['input']).__name__} {err['input']!r}; "
            'quote it in YAML ("6.0") so it is kept as written'
        )
    msg = err["msg"]
    return msg.removeprefix("Value error, ")


def _yaml_type(value: object) -> str:
    names = {dict: "mapping", str: "text", bool: "boolean", int: "number", float: "number"}
    return names.get(type(value), type(value).__name__)


def _entries(count: object) -> str:
    return f"{count} entry" if count == 1 else f"{count} entries"


def _allowed_fields(raw: Any, loc: Path_) -> str:
    # For an unknown key inside an item, list the keys that kind of item accepts.
    if len(loc) >= 3 and loc[-3] == "checks" and isinstance(loc[-2], int):
        return ", ".join(Check.model_fields)
    if loc and isinstance(raw, dict):
        owner: Any = raw
        for part in loc[:-1]:
            owner = owner.get(part) if isinstance(owner, dict) else None
        if isinstance(owner, dict) and isinstance(owner.get("kind"), str):
            model = KINDS.get(owner["kind"])
            if model is not None:
                return ", ".join(model.model_fields)
        if loc[:-1] == () and "kind" in raw and raw.get("kind") in KINDS:
            return ", ".join(KINDS[raw["kind"]].model_fields)
        if loc[:-1] == () and "items" in raw:
            return ", ".join(Pack.model_fields)
    return ""
