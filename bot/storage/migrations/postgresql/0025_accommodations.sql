-- PostgreSQL's form of ../0025_accommodations.sql: the same table.
CREATE TABLE accommodations (
    workspace_id  BIGINT NOT NULL REFERENCES workspaces (id),
    member_id     BIGINT NOT NULL REFERENCES members (id),
    time_factor   DOUBLE PRECISION NOT NULL DEFAULT 1.0,
    fewer_choices BIGINT NOT NULL DEFAULT 0,
    set_by        TEXT NOT NULL,
    set_at        TEXT NOT NULL,
    PRIMARY KEY (workspace_id, member_id)
);
