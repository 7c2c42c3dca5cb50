-- 0023: an exam date the group works toward (`/exam set DATE [--tag T]... [--channel]`).
-- One per workspace (channel_id NULL) and one per channel; setting again replaces it. `on_day`
-- is the local day (YYYY-MM-DD); once it has passed, the exam is simply ignored.
CREATE TABLE exams (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    channel_id   INTEGER REFERENCES channels (id),
    on_day       TEXT NOT NULL,
    tags         TEXT NOT NULL DEFAULT '',  -- comma-separated; '' is the whole course
    set_by       TEXT NOT NULL,
    set_at       TEXT NOT NULL
);
CREATE UNIQUE INDEX exams_one_per_scope ON exams (workspace_id, COALESCE(channel_id, 0));
