-- PostgreSQL's form of ../0017_points_mean_it.sql: the same columns and index.
-- 0017: points that mean what they say.
-- A role reward whose role gained power over the server or the bot after it was added (someone
-- gave the role Manage Roles) is suspended: neither given nor taken, and the admins are told
-- once. `suspended` holds why, in words; NULL means the reward is applied.
ALTER TABLE rewards ADD COLUMN suspended TEXT;

-- An import can be undone (`studybot scores undo-import ID`): each of its score events names
-- it, and the undo adds the opposite events (events are append-only) and sets `undone_at`. The
-- undone import's digest is then set aside (`sha256` gets the suffix ':undone:ID'), so the same
-- file can be imported again where it belongs.
ALTER TABLE score_imports ADD COLUMN undone_at TEXT;
ALTER TABLE score_events ADD COLUMN import_id BIGINT REFERENCES score_imports (id);
CREATE INDEX score_events_import ON score_events (import_id) WHERE import_id IS NOT NULL;
