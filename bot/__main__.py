"""``python -m bot`` and the ``studybot`` script: the command line of :mod:`bot.cli`.

Importing the command line takes a second or more (typer, pydantic, the web server). A Ctrl-C
or SIGTERM in that second ends the process quietly (exit 130 or 143), not with a traceback
from deep inside an import; Python's own handling is put back before any command runs.
"""

import os
import signal


def _leave(signum: int, frame: object) -> None:
    # Leave at once: an exception raised here would surface inside whatever import is running,
    # and a library may wrap it (pydantic building a schema turns it into a SchemaError, with
    # a traceback). Nothing has started yet that needs closing.
    os._exit(128 + signum)


_previous = {sig: signal.signal(sig, _leave) for sig in (signal.SIGINT, signal.SIGTERM)}
try:
    from bot.cli import main
finally:
    for _sig, _handler in _previous.items():
        signal.signal(_sig, _handler)

__all__ = ["main"]

if __name__ == "__main__":
    main()
