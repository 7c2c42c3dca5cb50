-- PostgreSQL's form of ../0004_health_probe.sql: the same tables, columns and indexes.
-- 0004: /healthz proves the database takes writes by writing this one row (a full disk, a
-- read-only file or a stuck writer then shows as unhealthy instead of passing unnoticed).
CREATE TABLE health_probe (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    checked_at TEXT NOT NULL
);
