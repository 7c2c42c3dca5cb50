"""Finding the code to run in a message, for the "Run snippet" context-menu command.

Discord shows a fenced block with a language tag on its first line (```` ```py ````); a block
without a tag, or written on one line (```` ```x = 1``` ````), is plain code. Blocks tagged with
another language (```` ```js ````) are skipped: running them as Python would only confuse.
"""

from __future__ import annotations

import re

__all__ = ["PYTHON_TAGS", "first_python_block"]

PYTHON_TAGS = frozenset({"", "py", "python", "python3", "py3"})
_FENCE = re.compile(r"```(.*?)```", re.DOTALL)
_TAG = re.compile(r"[A-Za-z0-9_+#.-]*")


def first_python_block(text: str) -> str | None:
    """The code of the first Python (or untagged) fenced block in ``text``, if there is one."""
    for match in _FENCE.finditer(text):
        inner = match[1]
        first, newline, rest = inner.partition("\n")
        if newline and _TAG.fullmatch(first.strip()):
            tag, code = first.strip().lower(), rest
        else:
            tag, code = "", inner
        if tag in PYTHON_TAGS and code.strip():
            return code.strip("\n")
    return None
