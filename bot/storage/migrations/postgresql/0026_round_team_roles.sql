-- PostgreSQL's form of ../0026_round_team_roles.sql: the same column.
ALTER TABLE rounds ADD COLUMN team_roles TEXT NOT NULL DEFAULT '';
