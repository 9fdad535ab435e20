-- +goose Up
-- The coordination of a cluster (package cluster): its nodes, the leases of
-- the partitions of the schedules, the fires clock nodes record under them,
-- and the moves of partitions between nodes. Instants are unix nanoseconds,
-- as everywhere else.

-- A node that registered: roles and machines are comma lists; state is
-- live, draining, dead or left.
CREATE TABLE cluster_nodes (
    id           TEXT PRIMARY KEY,
    roles        TEXT NOT NULL,
    address      TEXT NOT NULL DEFAULT '',
    version      TEXT NOT NULL DEFAULT '',
    machines     TEXT NOT NULL DEFAULT '',
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'live',
    ended_at     BIGINT NOT NULL DEFAULT 0
);

-- A lease per partition, and partition -1 for the assignment (the director
-- that may move partitions). node is '' while no node owns it; epoch grows
-- by one each time the owner changes, and a fire is recorded only under
-- the owner's current epoch.
CREATE TABLE cluster_leases (
    partition  INTEGER PRIMARY KEY,
    node       TEXT NOT NULL DEFAULT '',
    epoch      BIGINT NOT NULL DEFAULT 0,
    expires_at BIGINT NOT NULL DEFAULT 0
);

-- An occurrence a clock node found due, once per (task, scheduled).
CREATE TABLE cluster_fires (
    id          BIGSERIAL PRIMARY KEY,
    task        TEXT NOT NULL,
    scheduled   BIGINT NOT NULL,
    partition   INTEGER NOT NULL,
    node        TEXT NOT NULL,
    epoch       BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL,
    UNIQUE (task, scheduled)
);

-- A partition changing hands, and why.
CREATE TABLE cluster_moves (
    id        BIGSERIAL PRIMARY KEY,
    at        BIGINT NOT NULL,
    partition INTEGER NOT NULL,
    from_node TEXT NOT NULL,
    to_node   TEXT NOT NULL,
    epoch     BIGINT NOT NULL,
    reason    TEXT NOT NULL
);

-- +goose Down
DROP TABLE cluster_moves;
DROP TABLE cluster_fires;
DROP TABLE cluster_leases;
DROP TABLE cluster_nodes;
