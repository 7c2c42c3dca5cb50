-- 0013: streak freezes and the suggestion queue.
-- Freezes: how many a member holds (0..2) and how many have ever covered a missed day; both
-- change with the streak, in the same transaction as the answer (core/scoring.py's rule).
ALTER TABLE members ADD COLUMN streak_freezes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE members ADD COLUMN freezes_used INTEGER NOT NULL DEFAULT 0;

-- A member's valid /write waits here for an admin: approved, it is added to the `community`
-- pack as `item_id` and credited to its author on every post; rejected, it keeps the reason.
CREATE TABLE suggestions (
    id            INTEGER PRIMARY KEY,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces (id),
    member_id     INTEGER NOT NULL REFERENCES members (id),
    channel       TEXT NOT NULL,             -- the platform id of the channel it was written in
    question      TEXT NOT NULL,             -- the written question, as JSON
    prompt        TEXT NOT NULL,             -- its prompt, for the queue's list
    status        TEXT NOT NULL DEFAULT 'pending',  -- pending, approved, rejected
    reason        TEXT,                      -- why it was rejected
    item_id       TEXT,                      -- its id in the community pack once approved
    created_at    TEXT NOT NULL,
    decided_at    TEXT,
    decided_by    TEXT                       -- the admin's platform id
);
CREATE INDEX suggestions_pending ON suggestions (workspace_id, status);
CREATE INDEX suggestions_item ON suggestions (item_id) WHERE item_id IS NOT NULL;
