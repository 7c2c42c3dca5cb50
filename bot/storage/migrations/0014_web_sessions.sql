-- 0014: the admin web page's one-time sign-in links and its sessions.
-- Only SHA-256 hashes of the secrets are kept: a copy of the database signs nobody in.
-- `workspaces` is the JSON list of workspace ids the person administers, fixed when the link
-- was made; every page checks it before it reads or changes anything.
CREATE TABLE web_signins (
    token_hash    TEXT PRIMARY KEY,
    platform      TEXT NOT NULL,
    member        TEXT NOT NULL,             -- the person's platform id
    member_name   TEXT NOT NULL,
    workspaces    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    used_at       TEXT                       -- set once: a link signs in one browser only
);

CREATE TABLE web_sessions (
    token_hash    TEXT PRIMARY KEY,
    csrf          TEXT NOT NULL,             -- the session's form token
    platform      TEXT NOT NULL,
    member        TEXT NOT NULL,
    member_name   TEXT NOT NULL,
    workspaces    TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    revoked_at    TEXT                       -- signed out (or revoked by an operator)
);
CREATE INDEX web_sessions_member ON web_sessions (platform, member);
