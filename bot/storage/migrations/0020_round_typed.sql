-- 0020: `/settings round-typed on|off`: whether a live round asks typed questions too
-- (bot.core.rounds.RoundSpec.typed). NULL: the default (on).
ALTER TABLE workspaces ADD COLUMN round_typed INTEGER;   -- 1 on, 0 off
