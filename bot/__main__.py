"""``python -m bot`` and the ``studybot`` script: the command line of :mod:`bot.cli`.

Importing the command line takes a second or more (typer, pydantic, the web server). A Ctrl-C
or SIGTERM in that second ends the process quietly (exit 130 or 143), not with a traceback
from deep inside an import; Python's own handling is put back before any command runs.
"""

import signal


def _leave(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


_previous = {sig: signal.signal(sig, _leave) for sig in (signal.SIGINT, signal.SIGTERM)}
try:
    from bot.cli import main
finally:
    for _sig, _handler in _previous.items():
        signal.signal(_sig, _handler)

__all__ = ["main"]

if __name__ == "__main__":
    main()
