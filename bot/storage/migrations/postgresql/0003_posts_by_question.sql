-- PostgreSQL's form of ../0003_posts_by_question.sql: the same tables, columns and indexes.
-- 0003: "how often has this channel seen each question" (picking every post, thousands at once
-- at a popular schedule time) is answered from this index alone, without reading post rows.
CREATE INDEX posts_channel_question ON posts (channel_id, question_version_id);
