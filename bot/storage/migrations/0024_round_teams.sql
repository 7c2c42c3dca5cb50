-- 0024: team rounds (`round start --teams N`). `rounds.teams` is how many teams (0: none).
-- A member joins a team by answering: the row is written with the team picked for them (the
-- smallest team, then the weakest: by mastery of the round's tags on the first question, by
-- mean points after), so a restart or another process keeps every assignment.
ALTER TABLE rounds ADD COLUMN teams INTEGER NOT NULL DEFAULT 0;
-- `--talk S`: a team talk of S seconds before each question; `talked` is the last question
-- whose talk was announced (so a restart neither repeats nor skips one).
ALTER TABLE rounds ADD COLUMN talk_seconds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rounds ADD COLUMN talked INTEGER NOT NULL DEFAULT 0;
CREATE TABLE round_team_members (
    round_id  INTEGER NOT NULL REFERENCES rounds (id),
    member_id INTEGER NOT NULL REFERENCES members (id),
    team      INTEGER NOT NULL,          -- 0 .. teams-1
    mastery   REAL NOT NULL,             -- the member's mastery of the round's tags on joining
    joined_at TEXT NOT NULL,
    PRIMARY KEY (round_id, member_id)
);
