-- 0021: item analysis (bot.core.item_analysis): what the group knows, and which questions
-- look broken. Hints shown are kept so a question's statistics can say how often a hint was
-- needed; an exercise attempt keeps the checks it failed, so the statistics can name the
-- checks that fail most; a flag on a question (a key that strong members keep "getting
-- wrong", a question nobody or everybody gets) is held until an admin resolves or dismisses
-- it, once per question version and rule, so a dismissed flag does not come back until the
-- question changes; `/settings analytics off` turns the per-member export off.
CREATE TABLE hint_views (
    post_id   INTEGER NOT NULL REFERENCES posts (id),
    member_id INTEGER NOT NULL REFERENCES members (id),
    shown_at  TEXT NOT NULL,
    PRIMARY KEY (post_id, member_id)
);
CREATE TABLE question_flags (
    id                  INTEGER PRIMARY KEY,
    workspace_id        INTEGER NOT NULL REFERENCES workspaces (id),
    question_id         INTEGER NOT NULL REFERENCES questions (id),
    question_version_id INTEGER NOT NULL REFERENCES question_versions (id),
    rule                TEXT NOT NULL,          -- bot.core.item_analysis.Rule
    evidence            TEXT NOT NULL,          -- the figures, as the admins read them
    raised_at           TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    ended_at            TEXT,
    ended_by            TEXT,
    outcome             TEXT,                   -- resolved | dismissed
    UNIQUE (workspace_id, question_version_id, rule)
);
CREATE INDEX question_flags_open ON question_flags (workspace_id, ended_at);
ALTER TABLE exercise_attempts ADD COLUMN failed TEXT NOT NULL DEFAULT '';  -- check labels, comma-separated
ALTER TABLE workspaces ADD COLUMN analytics INTEGER;   -- 1 on, 0 off; NULL: the default (on)
CREATE INDEX answers_by_day ON answers (answered_at);
-- A member's answers (the gradebook, the scores export's right answers): a range, not a scan.
CREATE INDEX answers_member ON answers (member_id);
