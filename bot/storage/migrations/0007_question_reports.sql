-- 0007: members report a question as wrong; admins see the open reports (/reports) and
-- `pack list` counts them. One open report per member and question (a second one updates
-- the reason); resolving keeps the row for the record.
CREATE TABLE question_reports (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    question_id  INTEGER NOT NULL REFERENCES questions (id),
    post_id      INTEGER REFERENCES posts (id),
    member_id    INTEGER NOT NULL REFERENCES members (id),
    reason       TEXT NOT NULL,
    reported_at  TEXT NOT NULL,
    resolved_at  TEXT,
    resolved_by  TEXT
);
-- At most one open report per member and question.
CREATE UNIQUE INDEX question_reports_open
    ON question_reports (workspace_id, question_id, member_id) WHERE resolved_at IS NULL;
CREATE INDEX question_reports_workspace ON question_reports (workspace_id, resolved_at);
