-- 0027: extra time on a posted question's answer window (accommodations, 0025). When a window
-- ends while a member with extra time has not answered, the post stays open to their own
-- deadline: `window_ends_at` keeps the usual end (everyone else's answers are refused after it)
-- and `closes_at` moves to the latest own deadline (or back, once they have all answered).
-- NULL: the window was never extended.
ALTER TABLE posts ADD COLUMN window_ends_at TEXT;
