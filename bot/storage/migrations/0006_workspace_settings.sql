-- 0006: in-chat settings (/settings). The environment only seeds a new workspace; these
-- columns are what the workspace's admins chose (NULL: the bot's default).

-- A timezone change takes over at the next local midnight of the new zone; until then
-- `previous_timezone` still decides where days and weeks end (UTC instant in `timezone_from`).
ALTER TABLE workspaces ADD COLUMN previous_timezone TEXT;
ALTER TABLE workspaces ADD COLUMN timezone_from TEXT;
ALTER TABLE workspaces ADD COLUMN quiz_window_seconds INTEGER;
ALTER TABLE workspaces ADD COLUMN points_easy INTEGER;
ALTER TABLE workspaces ADD COLUMN points_medium INTEGER;
ALTER TABLE workspaces ADD COLUMN points_hard INTEGER;

-- Append-only: who changed which setting, from what to what, and when.
CREATE TABLE setting_changes (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    setting      TEXT NOT NULL,
    old_value    TEXT,
    new_value    TEXT NOT NULL,
    changed_by   TEXT NOT NULL,   -- the member's platform id
    changed_by_name TEXT NOT NULL,
    changed_at   TEXT NOT NULL
);
CREATE INDEX setting_changes_workspace ON setting_changes (workspace_id, id);
