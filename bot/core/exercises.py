"""An exercise's verdict as the member reads it: a private reply.

The verdict itself is decided by :mod:`bot.questions.judge`; this is only its wording.
"""

from __future__ import annotations

from bot.core.messages import Message, Section, Tone
from bot.questions.judge import Verdict
from bot.questions.schema import Exercise

__all__ = ["verdict_message"]

_OUTPUT_SHOWN = 1_500


def _cut(text: str, limit: int = _OUTPUT_SHOWN) -> str:
    text = text.rstrip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def verdict_message(
    item: Exercise,
    verdict: Verdict,
    *,
    headline: str,
    stdout: str = "",
    stderr: str = "",
    warnings: tuple[str, ...] = (),
) -> Message:
    """A member's private reply: each example with its values, hidden checks without, what
    their code printed, and the traceback of their own code when it failed."""
    lines: list[str] = []
    for check in verdict.checks:
        if check.hidden:
            continue
        mark = "✅" if check.passed else "❌"
        line = f"{mark} `{item.entry}{_call(check.args)}` → expected `{check.expected}`"
        if not check.passed and check.got:
            # Why, too: two tensors that print alike can differ in dtype, or past 4 decimals.
            line += f", got `{check.got}`" + (f": {check.reason}" if check.reason else "")
        elif not check.passed:
            line += f": {check.reason}"
        lines.append(line)
    hidden = [c for c in verdict.checks if c.hidden]
    failed = [c for c in hidden if not c.passed]
    total = len(hidden)
    hidden_lines = [f"hidden check {c.number} of {total} failed: {c.reason}" for c in failed]
    if not failed and hidden:
        hidden_lines = ["the hidden check passed" if total == 1 else f"all {total} passed"]
    sections = [Section(heading="Examples", body="\n".join(lines))]
    sections.append(Section(heading="Hidden checks", body="\n".join(hidden_lines)))
    if verdict.forbidden:
        names = ", ".join(f"`{n}`" for n in verdict.forbidden)
        sections.append(
            Section(
                heading="Not allowed",
                body=f"Your code used {names}, which this exercise forbids: it scores nothing.",
            )
        )
    if verdict.problem:
        sections.insert(0, Section(body=verdict.problem[:1].upper() + verdict.problem[1:] + "."))
    if stdout.strip():
        sections.append(Section(heading="Your output", code=_cut(stdout), language="text"))
    if warnings:  # not a traceback: the code ran, and torch or Python had a remark
        sections.append(
            Section(heading="Warnings", code=_cut("\n".join(warnings)), language="text")
        )
    if stderr.strip():
        sections.append(Section(heading="Traceback", code=_cut(stderr), language="text"))
    return Message(
        title=headline,
        sections=tuple(sections),
        ephemeral=True,
        tone=Tone.SUCCESS if verdict.solved else Tone.WARNING,
    )


def _call(args: str | None) -> str:
    if args is None:
        return "(…)"
    text = args.strip()
    return text if text.startswith("(") and text.endswith(")") else f"({text})"
