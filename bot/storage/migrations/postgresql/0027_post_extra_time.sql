-- PostgreSQL's form of ../0027_post_extra_time.sql: the same column.
ALTER TABLE posts ADD COLUMN window_ends_at TEXT;
