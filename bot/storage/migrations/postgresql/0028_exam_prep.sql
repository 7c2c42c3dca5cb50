-- PostgreSQL's form of ../0028_exam_prep.sql: the same tables.
CREATE TABLE exam_prep (
    member_id BIGINT PRIMARY KEY REFERENCES members (id),
    since     TEXT NOT NULL
);
CREATE TABLE exam_prep_done (
    member_id   BIGINT NOT NULL REFERENCES members (id),
    question_id BIGINT NOT NULL REFERENCES questions (id),
    on_day      TEXT NOT NULL,
    PRIMARY KEY (member_id, question_id)
);
