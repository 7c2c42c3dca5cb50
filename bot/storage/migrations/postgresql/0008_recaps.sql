-- PostgreSQL's form of ../0008_recaps.sql: the same tables, columns and indexes.
-- 0008: the weekly recap a channel's admins schedule (/recap on fri 18:00). The recap of
-- one week is claimed by inserting its row before it is sent, so it posts at most once per
-- channel and week, whatever restarts happen.
CREATE TABLE recaps (
    channel_id   BIGINT PRIMARY KEY REFERENCES channels (id),
    weekday      BIGINT NOT NULL CHECK (weekday BETWEEN 0 AND 6),  -- 0 Monday
    local_time   TEXT NOT NULL,                                       -- HH:MM, workspace zone
    enabled      BIGINT NOT NULL DEFAULT 1,
    changed_by   TEXT NOT NULL,
    changed_at   TEXT NOT NULL
);

CREATE TABLE recap_posts (
    channel_id BIGINT NOT NULL REFERENCES channels (id),
    week       TEXT NOT NULL,              -- the local Monday of the week it covers
    posted_at  TEXT NOT NULL,
    PRIMARY KEY (channel_id, week)
);
