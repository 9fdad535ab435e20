-- +goose Up
-- The file versions the watchers of a cluster's workers found settled
-- (cluster.FoundFile), for the director to hand to their tasks: a
-- version is found once (task, path, version), and marked taken once the
-- director's engine has it; taken rows are pruned after a day.
CREATE TABLE cluster_files (
    id       BIGSERIAL PRIMARY KEY,
    task     TEXT   NOT NULL,
    path     TEXT   NOT NULL,
    version  BIGINT NOT NULL,
    node     TEXT   NOT NULL,
    found_at BIGINT NOT NULL,
    taken_at BIGINT,
    UNIQUE (task, path, version)
);
CREATE INDEX cluster_files_waiting ON cluster_files (id) WHERE taken_at IS NULL;

-- What each worker's watchers handed over (watch.Memory, per node): the
-- hash of the version of each watched path.
CREATE TABLE cluster_watch_memory (
    node  TEXT   NOT NULL,
    name  TEXT   NOT NULL,
    value BIGINT NOT NULL,
    PRIMARY KEY (node, name)
);

-- +goose Down
DROP TABLE cluster_watch_memory;
DROP TABLE cluster_files;
