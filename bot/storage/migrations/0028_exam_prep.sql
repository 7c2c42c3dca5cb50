-- 0028: exam prep reviews (`/exam prep on`). A member who opts in gets, once their due cards
-- are done, the cards of the exam's tags that FSRS predicts under the desired retention on the
-- exam day, brought forward without changing their schedule (as Anki's filtered decks with
-- rescheduling off). `exam_prep_done` is the last local day each card was reviewed so: at most
-- one prep review of a card a day. Opting out deletes the member's row.
CREATE TABLE exam_prep (
    member_id INTEGER PRIMARY KEY REFERENCES members (id),
    since     TEXT NOT NULL
);
CREATE TABLE exam_prep_done (
    member_id   INTEGER NOT NULL REFERENCES members (id),
    question_id INTEGER NOT NULL REFERENCES questions (id),
    on_day      TEXT NOT NULL,
    PRIMARY KEY (member_id, question_id)
);
