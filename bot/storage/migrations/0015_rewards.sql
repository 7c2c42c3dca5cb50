-- 0015: role rewards. Admins map a threshold (all-time points, the current streak in days, or
-- reviews done) to a Discord role or a Slack user group; the bot grants it to members who
-- reach it and takes it back from those who fall below (core/rewards.py's rule).
CREATE TABLE rewards (
    id            INTEGER PRIMARY KEY,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces (id),
    metric        TEXT NOT NULL,             -- points, streak, reviews
    threshold     INTEGER NOT NULL,
    role          TEXT NOT NULL,             -- the platform id of the role or user group
    role_name     TEXT NOT NULL,             -- its name when added, for listings
    channel       TEXT NOT NULL,             -- where it was added: notices go there
    created_by    TEXT NOT NULL,             -- the admin's platform id
    created_at    TEXT NOT NULL,
    UNIQUE (workspace_id, role)              -- one reward per role: never two rules for one role
);

-- Who holds which reward: the row is claimed before the role is given (and released if the
-- platform refuses), so a notice is sent once even with several processes.
CREATE TABLE reward_holders (
    reward_id     INTEGER NOT NULL REFERENCES rewards (id),
    member_id     INTEGER NOT NULL REFERENCES members (id),
    granted_at    TEXT NOT NULL,
    PRIMARY KEY (reward_id, member_id)
);
CREATE INDEX reward_holders_member ON reward_holders (member_id);

-- reward-notices: 0 in the reward's channel (default), 1 by DM.
ALTER TABLE workspaces ADD COLUMN reward_notices INTEGER;
