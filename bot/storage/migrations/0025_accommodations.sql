-- 0025: accommodations (`accommodation set MEMBER --time 1.5 [--fewer-choices]`): a member's
-- extra time in live rounds and whether one wrong choice is removed for them. Private: only
-- admins and the member see them.
CREATE TABLE accommodations (
    workspace_id  INTEGER NOT NULL REFERENCES workspaces (id),
    member_id     INTEGER NOT NULL REFERENCES members (id),
    time_factor   REAL NOT NULL DEFAULT 1.0,
    fewer_choices INTEGER NOT NULL DEFAULT 0,
    set_by        TEXT NOT NULL,
    set_at        TEXT NOT NULL,
    PRIMARY KEY (workspace_id, member_id)
);
