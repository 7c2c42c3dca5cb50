-- PostgreSQL's form of ../0022_round_scoring_skips.sql: the same columns and table.
-- 0022: rounds for a class (issue 44), accuracy first and skip votes.
ALTER TABLE rounds ADD COLUMN scoring TEXT NOT NULL DEFAULT 'speed';
ALTER TABLE workspaces ADD COLUMN round_scoring BIGINT;   -- 1 accuracy, 0 speed
ALTER TABLE posts ADD COLUMN skipped_at TEXT;
CREATE TABLE round_skip_votes (
    post_id   BIGINT NOT NULL REFERENCES posts (id),
    member_id BIGINT NOT NULL REFERENCES members (id),
    voted_at  TEXT NOT NULL,
    PRIMARY KEY (post_id, member_id)
);
