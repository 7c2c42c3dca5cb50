-- 0010: live rounds (/round start): a timed game of questions in one channel. The round row
-- is the state the one timer loop drives (which question is next, and when); a step is
-- claimed by moving `step` on from the value it was read at, so two processes never ask the
-- same question twice. Each question is an ordinary post with `round_id` set: answers,
-- late refusals and the reveal at its deadline are the quiz's own.
CREATE TABLE rounds (
    id            INTEGER PRIMARY KEY,
    workspace_id  INTEGER NOT NULL REFERENCES workspaces (id),
    channel_id    INTEGER NOT NULL REFERENCES channels (id),
    started_by    TEXT NOT NULL,             -- the starter's platform id (they may stop it)
    starter_name  TEXT NOT NULL,
    pack          TEXT,
    difficulty    TEXT,
    tags          TEXT NOT NULL DEFAULT '',  -- comma-separated
    questions     INTEGER NOT NULL,
    seconds       INTEGER NOT NULL,
    pause_seconds INTEGER NOT NULL,
    speed_bonus   INTEGER NOT NULL,
    step          INTEGER NOT NULL DEFAULT 0, -- questions asked so far
    due_at        TEXT NOT NULL,              -- when the next step is due
    started_at    TEXT NOT NULL,
    ended_at      TEXT,
    end_note      TEXT,
    schedule_id   INTEGER REFERENCES schedules (id),  -- a scheduled round (schedule add --round)
    occurrence    TEXT                              -- ... and which of its occurrences
);
CREATE UNIQUE INDEX rounds_one_per_occurrence ON rounds (schedule_id, occurrence)
    WHERE schedule_id IS NOT NULL;
CREATE UNIQUE INDEX rounds_one_running_per_channel ON rounds (channel_id) WHERE ended_at IS NULL;
CREATE INDEX rounds_running_due ON rounds (due_at) WHERE ended_at IS NULL;

ALTER TABLE posts ADD COLUMN round_id INTEGER REFERENCES rounds (id);
CREATE INDEX posts_round ON posts (round_id) WHERE round_id IS NOT NULL;

-- Hints a member took on a round's question: each costs a share of its points.
CREATE TABLE round_hints (
    post_id   INTEGER NOT NULL REFERENCES posts (id),
    member_id INTEGER NOT NULL REFERENCES members (id),
    hints     INTEGER NOT NULL,
    PRIMARY KEY (post_id, member_id)
) WITHOUT ROWID;

-- A workspace's round settings (/settings round-...; NULL: the built-in default).
ALTER TABLE workspaces ADD COLUMN round_questions INTEGER;
ALTER TABLE workspaces ADD COLUMN round_seconds INTEGER;
ALTER TABLE workspaces ADD COLUMN round_pause INTEGER;
ALTER TABLE workspaces ADD COLUMN round_speed_bonus INTEGER;   -- 1 on, 0 off
ALTER TABLE workspaces ADD COLUMN round_starters INTEGER;      -- 0 everyone, 1 admins

-- A card a member missed or got wrong in a round comes back the next day, not minutes later:
-- a hold beside the card (the review log, which replays to the cards, is left as it is).
CREATE TABLE card_holds (
    member_id   INTEGER NOT NULL REFERENCES members (id),
    question_id INTEGER NOT NULL REFERENCES questions (id),
    held_until  TEXT NOT NULL,
    PRIMARY KEY (member_id, question_id)
) WITHOUT ROWID;
