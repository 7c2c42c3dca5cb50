-- 0026: teams made from roles (`round start --teams @red,@blue`). `team_roles` is the round's
-- teams as JSON, one `[platform role id, shown name]` per team in order; empty for a round of
-- numbered teams (or none). Written with the round in its one INSERT, so a round never starts
-- without the roles its teams are.
ALTER TABLE rounds ADD COLUMN team_roles TEXT NOT NULL DEFAULT '';
