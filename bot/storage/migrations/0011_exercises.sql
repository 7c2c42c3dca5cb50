-- 0011: coding exercises ("Solve it"). Every submission is kept, whether it passed or not:
-- the best one while the post is open decides partial credit when the post closes, the
-- shortest passing ones are what /solutions shows, and /history and /stats count them. The
-- answer row (and its score event, of the kind `exercise`) is written once: at the first
-- submission that passes everything, or when the post closes for a member who tried.
CREATE TABLE exercise_attempts (
    id           INTEGER PRIMARY KEY,
    post_id      INTEGER NOT NULL REFERENCES posts (id),
    member_id    INTEGER NOT NULL REFERENCES members (id),
    submitted_at TEXT NOT NULL,
    passed       INTEGER NOT NULL,             -- checks passed
    total        INTEGER NOT NULL,             -- checks run
    solved       INTEGER NOT NULL,             -- every check passed, nothing forbidden used
    forbidden    TEXT NOT NULL DEFAULT '',     -- forbidden names the run used, comma-separated
    open         INTEGER NOT NULL,             -- submitted while the post took answers
    code         TEXT NOT NULL
);
CREATE INDEX exercise_attempts_by_post ON exercise_attempts (post_id, member_id);
CREATE INDEX exercise_attempts_by_member ON exercise_attempts (member_id, submitted_at);
-- /settings share-solutions on: a member lets /solutions show their passing solutions to
-- others (their own choice; off by default).
ALTER TABLE members ADD COLUMN share_solutions INTEGER NOT NULL DEFAULT 0;
