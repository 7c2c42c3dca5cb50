"""``python -m bot`` and the ``studybot`` script: the command line of :mod:`bot.cli`."""

from bot.cli import main

if __name__ == "__main__":
    main()
