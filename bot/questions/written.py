"""A question written in chat (a modal on Discord and Slack, a line in the console) as a pack item.

Members write questions the way they think of them: a prompt, the choices with the right one
marked ``*``, why, and optionally a snippet and what it prints. This turns that into an item of
the ``community`` pack and the pack's new YAML text, which then goes through exactly the path
an uploaded pack file takes (the linter, the snippet run in the sandbox, install for admins), so a
written question is held to the same standard as a shipped one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from bot.text import clean_text

__all__ = [
    "COMMUNITY_FILE",
    "COMMUNITY_PACK",
    "WRITE_FIELD_NAMES",
    "FormProblem",
    "WrittenQuestion",
    "community_pack_text",
    "from_fields",
    "parse_console_form",
]

COMMUNITY_PACK = "community"
COMMUNITY_FILE = f"{COMMUNITY_PACK}.yaml"
COMMUNITY_TITLE = "Written by the group"
WRITE_FIELD_NAMES = ("prompt", "choices", "explanation", "code", "expected")  # the modals' fields
_EXCEPTION = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Interrupt|Exit|Warning)$")
_ID = re.compile(rf"^{COMMUNITY_PACK}-(\d+)$")


class FormProblem(ValueError):
    """A field of the form that cannot become an item: which one and what it needs."""

    def __init__(self, field_name: str, reason: str) -> None:
        super().__init__(f"{field_name}: {reason}")
        self.field = field_name
        self.reason = reason


@dataclass(frozen=True, slots=True)
class WrittenQuestion:
    prompt: str
    choices: str = ""  # one per line; the right one starts with `*`
    answer: str = ""  # a flashcard's answer, when there are no choices
    explanation: str = ""
    code: str = ""
    expected: str = ""  # what the code prints, or the exception it raises
    difficulty: str = "medium"
    tags: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        # What a member typed, normalised once as the form becomes a question: no NUL or lone
        # surrogate (YAML, SQLite and PostgreSQL refuse them), no control characters.
        for name in ("prompt", "choices", "answer", "explanation", "code", "expected"):
            object.__setattr__(self, name, clean_text(getattr(self, name)))

    def item(self, item_id: str) -> dict[str, Any]:
        """The pack item (plain data, as it will be written in YAML)."""
        prompt = self.prompt.strip()
        if not prompt:
            raise FormProblem("prompt", "write the question")
        item: dict[str, Any] = {"id": item_id}
        choices = _choices(self.choices)
        if choices:
            item["kind"] = "multiple_choice"
        elif self.answer.strip():
            item["kind"] = "flashcard"
        else:
            raise FormProblem(
                "choices", "give the choices, one per line, with `*` before the right one"
            )
        item["difficulty"] = self.difficulty
        if self.tags:
            item["tags"] = list(self.tags)
        item["prompt"] = prompt
        code = self.code.strip("\n")
        if code.strip():
            item["code"] = code + "\n"
            expected = self.expected.strip("\n")
            if not expected.strip():
                raise FormProblem(
                    "expected", "say what the code prints (or the exception it raises)"
                )
            if _EXCEPTION.match(expected.strip()):
                item["expect_error"] = expected.strip()
            else:
                item["expect_stdout"] = expected.rstrip() + "\n"
        elif self.expected.strip():
            raise FormProblem("code", "an expected output needs the code that prints it")
        if choices:
            item["choices"] = choices
            if self.explanation.strip():
                item["explanation"] = self.explanation.strip()
        else:
            answer = self.answer.strip()
            if self.explanation.strip():
                answer += "\n\n" + self.explanation.strip()
            item["answer"] = answer
        return item


def _choices(text: str) -> list[dict[str, Any]]:
    choices: list[dict[str, Any]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        correct = line.startswith("*")
        line = line.lstrip("*").strip()
        if line.startswith("- "):
            line = line[2:].strip()
        if not line:
            raise FormProblem("choices", "a choice line is empty")
        choice: dict[str, Any] = {"text": line}
        if correct:
            choice["correct"] = True
        choices.append(choice)
    if choices and sum(1 for c in choices if c.get("correct")) != 1:
        raise FormProblem("choices", "mark exactly one choice as right with `*` before it")
    if len(choices) == 1:
        raise FormProblem("choices", "give at least two choices, or an answer instead")
    return choices


def next_item_id(existing: list[dict[str, Any]]) -> str:
    numbers = [
        int(m[1]) for item in existing if (m := _ID.match(str(item.get("id", "")))) is not None
    ]
    return f"{COMMUNITY_PACK}-{max(numbers, default=0) + 1}"


def community_pack_text(current: bytes | None, question: WrittenQuestion) -> tuple[bytes, str]:
    """The ``community`` pack with ``question`` appended (created if ``current`` is None), and
    the new item's id."""
    if current is None:
        data: dict[str, Any] = {
            "pack": COMMUNITY_PACK,
            "title": COMMUNITY_TITLE,
            "description": "Questions the group wrote in chat (/write).",
            "items": [],
        }
    else:
        loaded = yaml.safe_load(current)
        if not isinstance(loaded, dict) or not isinstance(loaded.get("items"), list):
            raise FormProblem("pack", f"{COMMUNITY_FILE} is not a pack file any more")
        data = loaded
    item_id = next_item_id(data["items"])
    data["items"].append(question.item(item_id))
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    return text.encode(), item_id


def _community_data(current: bytes) -> dict[str, Any]:
    loaded = yaml.safe_load(current)
    if not isinstance(loaded, dict) or not isinstance(loaded.get("items"), list):
        raise FormProblem("pack", f"{COMMUNITY_FILE} is not a pack file any more")
    return loaded


def _dump(data: dict[str, Any]) -> bytes:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).encode()


def community_pack_replacing(current: bytes, item_id: str, question: WrittenQuestion) -> bytes:
    """The ``community`` pack with ``item_id`` replaced by ``question`` (its id kept, so its
    history and review cards stay with it)."""
    data = _community_data(current)
    for index, item in enumerate(data["items"]):
        if isinstance(item, dict) and item.get("id") == item_id:
            data["items"][index] = question.item(item_id)
            return _dump(data)
    raise FormProblem("question", f"`{item_id}` is not a question of the community pack")


def community_pack_without(current: bytes, item_id: str) -> bytes:
    """The ``community`` pack without ``item_id`` (retired: never posted again; its history
    stays). The last question cannot go: a pack has at least one."""
    data = _community_data(current)
    kept = [i for i in data["items"] if not (isinstance(i, dict) and i.get("id") == item_id)]
    if len(kept) == len(data["items"]):
        raise FormProblem("question", f"`{item_id}` is not a question of the community pack")
    if not kept:
        raise FormProblem("question", "the community pack's last question cannot be retired")
    data["items"] = kept
    return _dump(data)


def written_from_item(item: Any) -> WrittenQuestion:
    """A community question back as the form that wrote it (to edit it on the admin page)."""
    choices = getattr(item, "choices", None) or ()
    lines = [("*" if c.correct else "") + c.text for c in choices]
    expected = getattr(item, "expect_stdout", None) or getattr(item, "expect_error", None) or ""
    return WrittenQuestion(
        prompt=item.prompt,
        choices="\n".join(lines),
        answer=getattr(item, "answer", None) or "",
        explanation=getattr(item, "explanation", None) or "",
        code=item.code or "",
        expected=expected,
        difficulty=item.difficulty.value,
        tags=tuple(item.tags),
    )


def parse_console_form(text: str, *, difficulty: str, tags: tuple[str, ...]) -> WrittenQuestion:
    """The console's one-line form: ``PROMPT | *RIGHT | WRONG ... [| why: EXPLANATION]``, or
    ``PROMPT | = ANSWER`` for a flashcard."""
    parts = [part.strip() for part in text.split("|")]
    prompt, rest = parts[0], parts[1:]
    explanation = ""
    choices: list[str] = []
    answer = ""
    for part in rest:
        if part.lower().startswith("why:"):
            explanation = part[4:].strip()
        elif part.startswith("="):
            answer = part[1:].strip()
        elif part:
            choices.append(part)
    return WrittenQuestion(
        prompt=prompt,
        choices="\n".join(choices),
        answer=answer,
        explanation=explanation,
        difficulty=difficulty,
        tags=tags,
    )


def from_fields(
    fields: dict[str, str], *, difficulty: str = "medium", tags: tuple[str, ...] = ()
) -> WrittenQuestion:
    """A modal's fields (``prompt``, ``choices``, ``explanation``, ``code``, ``expected``) as a
    question. A single choice line with no ``*`` is a flashcard's answer."""
    choices = fields.get("choices", "") or ""
    lines = [line for line in choices.splitlines() if line.strip()]
    answer = ""
    if len(lines) == 1 and not lines[0].strip().startswith("*"):
        answer, choices = lines[0].strip(), ""
    return WrittenQuestion(
        prompt=fields.get("prompt", "") or "",
        choices=choices,
        answer=answer,
        explanation=fields.get("explanation", "") or "",
        code=fields.get("code", "") or "",
        expected=fields.get("expected", "") or "",
        difficulty=difficulty,
        tags=tags,
    )
