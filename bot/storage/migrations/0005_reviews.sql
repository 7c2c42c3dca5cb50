-- 0005: personal spaced repetition (FSRS). Times are UTC text, as in 0001.

-- Append-only: every graded answer is one review of one member's card for one question.
-- A card is (member, question): `questions.id` is stable across edits of the item (a new
-- version row, same question), so editing a question keeps its history.
CREATE TABLE reviews (
    id           INTEGER PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    member_id    INTEGER NOT NULL REFERENCES members (id),
    question_id  INTEGER NOT NULL REFERENCES questions (id),
    answer_id    INTEGER UNIQUE REFERENCES answers (id),  -- NULL for a /review grading
    rating       INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 4),  -- Again, Hard, Good, Easy
    reviewed_at  TEXT NOT NULL,
    elapsed_days REAL                           -- since this card's previous review; NULL first
);
CREATE INDEX reviews_card ON reviews (member_id, question_id, id);
CREATE INDEX reviews_workspace_time ON reviews (workspace_id, reviewed_at);
CREATE INDEX reviews_member_time ON reviews (member_id, reviewed_at);

-- The FSRS state of each card, derived from `reviews` (replaying a card's reviews in id order
-- with its workspace's parameters gives this row; `studybot db check` verifies it). Written in
-- the same transaction as the review that changes it.
CREATE TABLE cards (
    member_id      INTEGER NOT NULL REFERENCES members (id),
    question_id    INTEGER NOT NULL REFERENCES questions (id),
    workspace_id   INTEGER NOT NULL REFERENCES workspaces (id),
    state          INTEGER NOT NULL,            -- 1 learning, 2 review, 3 relearning
    step           INTEGER,                     -- learning/relearning step; NULL in review
    stability      REAL,
    difficulty     REAL,
    due            TEXT NOT NULL,
    last_review    TEXT NOT NULL,
    reviews        INTEGER NOT NULL,
    last_review_id INTEGER NOT NULL REFERENCES reviews (id),
    PRIMARY KEY (member_id, question_id)
) WITHOUT ROWID;
-- A member's due cards: a range scan of this index, however many cards others hold.
CREATE INDEX cards_member_due ON cards (member_id, due);

-- Per workspace: the retention FSRS aims for, and parameters fitted by
-- `studybot review optimize` (NULL: FSRS's defaults). No row means the defaults.
CREATE TABLE review_settings (
    workspace_id      INTEGER PRIMARY KEY REFERENCES workspaces (id),
    desired_retention REAL NOT NULL DEFAULT 0.90
        CHECK (desired_retention BETWEEN 0.70 AND 0.97),
    parameters        TEXT,                     -- JSON list of floats
    log_loss          REAL,                     -- of `parameters` on the log when fitted
    optimized_at      TEXT
);

-- `/review remind 19:00 [TZ]`: a DM at that local time on days with due cards.
CREATE TABLE review_reminders (
    member_id     INTEGER PRIMARY KEY REFERENCES members (id),
    local_time    TEXT NOT NULL,                -- HH:MM
    timezone      TEXT NOT NULL,
    enabled       INTEGER NOT NULL DEFAULT 1,
    last_sent_day TEXT,                         -- local date of the last reminder sent
    off_reason    TEXT,                         -- 'dm_closed' when a DM could not be sent
    told          INTEGER NOT NULL DEFAULT 1    -- 0: the member has not yet been told why
);
