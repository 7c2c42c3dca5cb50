"""The one place where things are built: settings -> logging -> storage -> sandbox -> service.

``main()`` is the ``studybot`` console script. It runs the typer app with a :class:`Wiring`
object as ``ctx.obj``; commands ask it for settings and a runtime, so nothing is built at import
time and a start-up error becomes one readable line instead of a traceback.
"""

from __future__ import annotations

import sys
from functools import cache

from pydantic import ValidationError

from bot.settings import Settings

__all__ = ["Wiring", "main"]


class Wiring:
    """Builds the program's parts on demand, once."""

    def __init__(self, overrides: dict[str, object] | None = None) -> None:
        self._overrides = overrides or {}

    @cache  # noqa: B019 - one Wiring per process; the cache lives as long as it does
    def settings(self) -> Settings:
        try:
            return Settings(**self._overrides)  # type: ignore[arg-type]
        except ValidationError as exc:
            lines = [
                f"  {'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
            ]
            sys.stderr.write("studybot: invalid settings:\n" + "\n".join(lines) + "\n")
            raise SystemExit(2) from None


def main(argv: list[str] | None = None) -> None:
    from bot.cli import app

    app(args=argv, obj=Wiring(), prog_name="studybot")


if __name__ == "__main__":
    main()
