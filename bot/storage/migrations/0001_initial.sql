-- 0001: the study loop. Times are UTC text 'YYYY-MM-DDTHH:MM:SS.ffffffZ' (sortable as text).

-- A Discord guild or a Slack team (or the local console).
CREATE TABLE workspaces (
    id          INTEGER PRIMARY KEY,
    platform    TEXT NOT NULL,
    external_id TEXT NOT NULL,
    name        TEXT,
    timezone    TEXT NOT NULL DEFAULT 'UTC',   -- the day boundary for streaks and windows
    created_at  TEXT NOT NULL,
    UNIQUE (platform, external_id)
);

CREATE TABLE channels (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    external_id  TEXT NOT NULL,
    name         TEXT,
    created_at   TEXT NOT NULL,
    UNIQUE (workspace_id, external_id)
);

CREATE TABLE members (
    id              INTEGER PRIMARY KEY,
    workspace_id    INTEGER NOT NULL REFERENCES workspaces (id),
    external_id     TEXT NOT NULL,
    display_name    TEXT NOT NULL,
    -- Streak state, updated in the same transaction as the answer that changes it.
    streak_days     INTEGER NOT NULL DEFAULT 0,
    best_streak     INTEGER NOT NULL DEFAULT 0,
    streak_last_day TEXT,                      -- local date (workspace timezone), YYYY-MM-DD
    created_at      TEXT NOT NULL,
    UNIQUE (workspace_id, external_id)
);

-- Packs and questions are synced from files; a question edited in its file gets a new
-- version row, and posts point at the version they showed, so history stays true.
CREATE TABLE packs (
    id           INTEGER PRIMARY KEY,
    slug         TEXT NOT NULL UNIQUE,
    title        TEXT NOT NULL,
    description  TEXT,
    source_path  TEXT,
    content_hash TEXT NOT NULL,
    synced_at    TEXT NOT NULL,
    retired_at   TEXT                          -- the file is gone; its history is kept
);

CREATE TABLE questions (
    id                 INTEGER PRIMARY KEY,
    pack_id            INTEGER NOT NULL REFERENCES packs (id),
    slug               TEXT NOT NULL,          -- the item's stable `id` in the pack file
    kind               TEXT NOT NULL,
    difficulty         TEXT NOT NULL,
    tags               TEXT NOT NULL DEFAULT '',  -- ',tag1,tag2,' for LIKE '%,tag,%' filters
    current_version_id INTEGER REFERENCES question_versions (id),
    retired_at         TEXT,                   -- removed from its file
    UNIQUE (pack_id, slug)
);

CREATE TABLE question_versions (
    id           INTEGER PRIMARY KEY,
    question_id  INTEGER NOT NULL REFERENCES questions (id),
    content_hash TEXT NOT NULL,
    body         TEXT NOT NULL,                -- the validated item as JSON
    created_at   TEXT NOT NULL,
    UNIQUE (question_id, content_hash)
);

CREATE TABLE schedules (
    id            INTEGER PRIMARY KEY,
    channel_id    INTEGER NOT NULL REFERENCES channels (id),
    spec          TEXT NOT NULL,               -- the schedule spec as JSON (see bot/core/schedule.py)
    paused        INTEGER NOT NULL DEFAULT 0,
    skip_until    TEXT,                        -- occurrences at or before this are skipped
    created_by    INTEGER REFERENCES members (id),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    deleted_at    TEXT
);

CREATE TABLE posts (
    id                  INTEGER PRIMARY KEY,
    channel_id          INTEGER NOT NULL REFERENCES channels (id),
    question_version_id INTEGER NOT NULL REFERENCES question_versions (id),
    schedule_id         INTEGER REFERENCES schedules (id),
    occurrence          TEXT,                  -- the schedule occurrence this post is for
    requested_by        INTEGER REFERENCES members (id),
    posted_at           TEXT NOT NULL,
    closes_at           TEXT,
    closed_at           TEXT,
    platform_message_id TEXT,
    -- A restart, a crash mid-send or a reconnect cannot post one occurrence twice.
    UNIQUE (schedule_id, occurrence)
);
CREATE INDEX posts_channel ON posts (channel_id, posted_at);
CREATE INDEX posts_open ON posts (closes_at) WHERE closed_at IS NULL;

CREATE TABLE answers (
    id          INTEGER PRIMARY KEY,
    post_id     INTEGER NOT NULL REFERENCES posts (id),
    member_id   INTEGER NOT NULL REFERENCES members (id),
    choice      TEXT NOT NULL,
    correct     INTEGER,                       -- NULL for unscored kinds
    answered_at TEXT NOT NULL,
    local_day   TEXT NOT NULL,
    UNIQUE (post_id, member_id)                -- the first answer counts
);

-- Append-only: leaderboards are sums over a time window, so a "reset" never deletes.
CREATE TABLE score_events (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    member_id    INTEGER NOT NULL REFERENCES members (id),
    answer_id    INTEGER REFERENCES answers (id),
    reason       TEXT NOT NULL,                -- 'answer', 'streak_bonus', 'adjustment'
    points       INTEGER NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX score_events_workspace ON score_events (workspace_id, created_at);
CREATE INDEX score_events_member ON score_events (member_id, created_at);

-- Running totals per member and leaderboard period ('all', 'w:2026-03-02' for the local week
-- starting that Monday, 'm:2026-03'), written in the same transaction as the events they sum.
-- A board is then a read of one period's rows, however many events there are; the events
-- stay the source of truth (`studybot db check` compares the two).
CREATE TABLE score_totals (
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    member_id    INTEGER NOT NULL REFERENCES members (id),
    period       TEXT NOT NULL,
    points       INTEGER NOT NULL,
    answers      INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, period, member_id)
) WITHOUT ROWID;
CREATE INDEX score_totals_board ON score_totals (workspace_id, period, points DESC);

-- Per-channel pack switches (`pack enable/disable`); no row means enabled.
CREATE TABLE channel_packs (
    channel_id INTEGER NOT NULL REFERENCES channels (id),
    pack_id    INTEGER NOT NULL REFERENCES packs (id),
    enabled    INTEGER NOT NULL,
    PRIMARY KEY (channel_id, pack_id)
);
