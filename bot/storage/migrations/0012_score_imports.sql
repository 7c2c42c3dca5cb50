-- 0012: points brought over from another bot (`studybot scores import FILE.csv`). Each member's
-- points are one score event with reason 'imported' (in the all-time totals only: it is dated
-- the day of the import, so it would skew that week's and month's boards, and it is no answer,
-- so streaks never see it). A file is imported once per workspace: the SHA-256 of its
-- normalised rows is kept, and the same file again is refused rather than counted twice.
CREATE TABLE score_imports (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    sha256       TEXT NOT NULL,
    source       TEXT NOT NULL,     -- the file's name, for the refusal of a second import
    members      INTEGER NOT NULL,
    points       INTEGER NOT NULL,
    imported_at  TEXT NOT NULL,
    UNIQUE (workspace_id, sha256)
);
