-- 0019: a community question belongs to the workspace that wrote it (/write, or an approved
-- suggestion): only that workspace's admins see, edit or retire it (bot.storage.community).
CREATE TABLE community_items (
    item_id      TEXT PRIMARY KEY,                 -- its id in community.yaml
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id)
);

-- The questions written before: the workspace that last added each id (an approved
-- suggestion, or the audit log's "question add" of an admin's /write). SQLite takes the bare
-- column of the row that holds max(at).
INSERT INTO community_items (item_id, workspace_id)
SELECT item_id, workspace_id FROM (
    SELECT item_id, workspace_id, max(at) FROM (
        SELECT item_id, workspace_id, decided_at AS at FROM suggestions
        WHERE status = 'approved' AND item_id IS NOT NULL
        UNION ALL
        SELECT substr(detail, 1, instr(detail, ' into ') - 1), workspace_id, at FROM audit_log
        WHERE action = 'question add' AND detail LIKE '% into community.yaml'
    ) GROUP BY item_id
);

-- A deployment with one workspace wrote every other one there.
INSERT INTO community_items (item_id, workspace_id)
SELECT q.slug, (SELECT min(id) FROM workspaces) FROM questions q
JOIN packs k ON k.id = q.pack_id
WHERE k.slug = 'community' AND (SELECT count(*) FROM workspaces) = 1
AND q.slug NOT IN (SELECT item_id FROM community_items);
