"""Question packs: the schema, the loader (with file:line for every problem) and the linter."""
