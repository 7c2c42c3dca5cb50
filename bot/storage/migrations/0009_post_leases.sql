-- 0009: several bot processes. A scheduled post's row is its process's claim on the
-- occurrence; `lease_until` is how long that claim holds while the send is in flight. If the
-- process dies before confirming the send, another one re-sends the post once the lease has
-- run out (and never before: while it holds, the owner may still be sending).
ALTER TABLE posts ADD COLUMN lease_until TEXT;
