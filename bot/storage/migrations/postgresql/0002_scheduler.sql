-- PostgreSQL's form of ../0002_scheduler.sql: the same tables, columns and indexes.
-- 0002: the durable scheduler. Times are UTC text, as in 0001.

-- Where the scheduler left off with each schedule: every occurrence at or before this instant
-- has been posted or deliberately skipped, so a restart resumes after it instead of replaying
-- history (and a schedule that was paused for months costs nothing to pick up again).
ALTER TABLE schedules ADD COLUMN handled_until TEXT;

-- A scheduled post whose send was never confirmed (the process stopped mid-send) is re-sent at
-- most once; this remembers that it was.
ALTER TABLE posts ADD COLUMN resent BIGINT NOT NULL DEFAULT 0;

CREATE INDEX schedules_channel ON schedules (channel_id) WHERE deleted_at IS NULL;
-- The open posts of a schedule: the one an "until the next question" window closes.
CREATE INDEX posts_schedule_open ON posts (schedule_id, id) WHERE closed_at IS NULL;
-- Scheduled posts never confirmed as sent, looked at once at start-up.
CREATE INDEX posts_unsent ON posts (schedule_id)
    WHERE schedule_id IS NOT NULL AND platform_message_id IS NULL AND closed_at IS NULL;
