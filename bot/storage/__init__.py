"""Storage: the database handle (SQLite or PostgreSQL), migrations and the queries the core
needs."""
