-- 0022: rounds for a class (issue 44), accuracy first and skip votes.
-- `rounds.scoring`: 'speed' (the default: a faster right answer scores more) or 'accuracy'
-- (every right answer scores its points; speed only breaks ties on the board), fixed when the
-- round starts; `workspaces.round_scoring` is `/settings round-scoring` (NULL: speed).
-- A question the players vote to skip (`round skip`) is revealed at once and scores nothing:
-- `posts.skipped_at` says so, and the votes are rows, so every process counts the same ones
-- and a restart keeps them.
ALTER TABLE rounds ADD COLUMN scoring TEXT NOT NULL DEFAULT 'speed';
ALTER TABLE workspaces ADD COLUMN round_scoring INTEGER;   -- 1 accuracy, 0 speed
ALTER TABLE posts ADD COLUMN skipped_at TEXT;
CREATE TABLE round_skip_votes (
    post_id   INTEGER NOT NULL REFERENCES posts (id),
    member_id INTEGER NOT NULL REFERENCES members (id),
    voted_at  TEXT NOT NULL,
    PRIMARY KEY (post_id, member_id)
);
