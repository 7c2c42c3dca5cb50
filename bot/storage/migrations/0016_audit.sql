-- 0016: the audit log: every change an admin makes, from chat or from the admin web page, with
-- who, when and what. Append-only; the admin page lists a workspace's newest first.
CREATE TABLE audit_log (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    at           TEXT NOT NULL,
    actor        TEXT NOT NULL,               -- the platform id of who did it
    actor_name   TEXT NOT NULL,
    via          TEXT NOT NULL,               -- chat or web
    action       TEXT NOT NULL,               -- e.g. "schedule add", "pack disable"
    detail       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_by_workspace ON audit_log (workspace_id, id);

-- A channel's board sums the score events of the answers to its posts: found from the posts
-- (by channel) through the answers to their events, not by reading every event of the
-- workspace (the admin page shows every channel's board at once).
CREATE INDEX score_events_answer ON score_events (answer_id) WHERE answer_id IS NOT NULL;
