"""SQLite storage through aiosqlite: connections, migrations and the queries the core needs."""
