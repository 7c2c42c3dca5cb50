-- PostgreSQL's form of ../0024_round_teams.sql: the same column and table.
ALTER TABLE rounds ADD COLUMN teams BIGINT NOT NULL DEFAULT 0;
-- `--talk S`: a team talk of S seconds before each question; `talked` is the last question
-- whose talk was announced (so a restart neither repeats nor skips one).
ALTER TABLE rounds ADD COLUMN talk_seconds BIGINT NOT NULL DEFAULT 0;
ALTER TABLE rounds ADD COLUMN talked BIGINT NOT NULL DEFAULT 0;
CREATE TABLE round_team_members (
    round_id  BIGINT NOT NULL REFERENCES rounds (id),
    member_id BIGINT NOT NULL REFERENCES members (id),
    team      BIGINT NOT NULL,
    mastery   DOUBLE PRECISION NOT NULL,
    joined_at TEXT NOT NULL,
    PRIMARY KEY (round_id, member_id)
);
