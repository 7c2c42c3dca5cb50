"""How many members a group figure needs before admins' analytics show it.

A share over two or three members tells whoever reads it what those few answered, so a
question's statistics and a tag's mastery are withheld below :data:`MIN_GROUP`, with a note
that says so. One number, so the Questions tab, ``/stats group`` and the pictures withhold
the same things. (A post's own reveal still shows its answer counts, as a quiz game's bars do:
the members who answered it saw the question together.)
"""

from __future__ import annotations

__all__ = ["MIN_GROUP"]

#: The fewest members a group figure is shown for.
MIN_GROUP = 5
