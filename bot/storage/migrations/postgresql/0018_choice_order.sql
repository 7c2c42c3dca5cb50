-- PostgreSQL's form of ../0018_choice_order.sql: the same column.
-- 0018: each post's choices are shown in an order drawn for that post (bot.core.choice_order):
-- the seed is stored with the post, so a restart's edit, the reveal, /history, /question and the
-- answer breakdown show the same order the post did. NULL: the file's order (posts made before).
ALTER TABLE posts ADD COLUMN choice_seed BIGINT;
