-- PostgreSQL's form of ../0020_round_typed.sql: the same column.
-- 0020: `/settings round-typed on|off`: whether a live round asks typed questions too
-- (bot.core.rounds.RoundSpec.typed). NULL: the default (on).
ALTER TABLE workspaces ADD COLUMN round_typed BIGINT;   -- 1 on, 0 off
