-- 0008: the weekly recap a channel's admins schedule (/recap on fri 18:00). The recap of
-- one week is claimed by inserting its row before it is sent, so it posts at most once per
-- channel and week, whatever restarts happen.
CREATE TABLE recaps (
    channel_id   INTEGER PRIMARY KEY REFERENCES channels (id),
    weekday      INTEGER NOT NULL CHECK (weekday BETWEEN 0 AND 6),  -- 0 Monday
    local_time   TEXT NOT NULL,                                       -- HH:MM, workspace zone
    enabled      INTEGER NOT NULL DEFAULT 1,
    changed_by   TEXT NOT NULL,
    changed_at   TEXT NOT NULL
);

CREATE TABLE recap_posts (
    channel_id INTEGER NOT NULL REFERENCES channels (id),
    week       TEXT NOT NULL,              -- the local Monday of the week it covers
    posted_at  TEXT NOT NULL,
    PRIMARY KEY (channel_id, week)
) WITHOUT ROWID;
