-- +goose Up
-- Fires are kept as the clock nodes record them: one row per statement
-- (a partition's fires of one turn), and the unique (task, scheduled)
-- key that makes each occurrence fire once in a table of its own. A fire
-- cost a row of seven columns and three index entries (its ID, its key,
-- its time); it now costs a row of two columns and the one entry of its
-- key, and its statement one row and one ID.

-- The key of every occurrence recorded: what makes a fire exactly once.
-- Task names compare byte by byte: the key needs equality only, and the
-- database's collation would cost each insert's descent of the index a
-- locale comparison at every level.
CREATE TABLE cluster_claims (
    task      TEXT COLLATE "C" NOT NULL,
    scheduled BIGINT NOT NULL,
    PRIMARY KEY (task, scheduled)
);

ALTER TABLE cluster_fires RENAME TO cluster_fires_v1;
ALTER SEQUENCE cluster_fires_id_seq OWNED BY NONE;

-- The fires one statement of a clock node recorded, under the lease of
-- partition at epoch: n occurrences, tasks[i] at scheduled[i]. IDs come
-- from the sequence the fires had, so the director's cursor keeps its
-- meaning.
CREATE TABLE cluster_fires (
    id          BIGINT PRIMARY KEY DEFAULT nextval('cluster_fires_id_seq'),
    partition   INTEGER NOT NULL,
    node        TEXT NOT NULL,
    epoch       BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL,
    n           INTEGER NOT NULL,
    tasks       TEXT[] NOT NULL,
    scheduled   BIGINT[] NOT NULL
);
ALTER SEQUENCE cluster_fires_id_seq OWNED BY cluster_fires.id;

INSERT INTO cluster_claims (task, scheduled) SELECT task, scheduled FROM cluster_fires_v1;
INSERT INTO cluster_fires (id, partition, node, epoch, recorded_at, n, tasks, scheduled)
SELECT id, partition, node, epoch, recorded_at, 1, ARRAY[task], ARRAY[scheduled] FROM cluster_fires_v1;
DROP TABLE cluster_fires_v1;

-- +goose Down
ALTER TABLE cluster_fires RENAME TO cluster_fires_v2;
ALTER SEQUENCE cluster_fires_id_seq OWNED BY NONE;
CREATE TABLE cluster_fires (
    id          BIGINT PRIMARY KEY DEFAULT nextval('cluster_fires_id_seq'),
    task        TEXT NOT NULL,
    scheduled   BIGINT NOT NULL,
    partition   INTEGER NOT NULL,
    node        TEXT NOT NULL,
    epoch       BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL,
    UNIQUE (task, scheduled)
);
ALTER SEQUENCE cluster_fires_id_seq OWNED BY cluster_fires.id;
CREATE INDEX cluster_fires_recorded ON cluster_fires (recorded_at);
-- A statement of one fire keeps its ID; the fires of longer ones take
-- new IDs, above the director's cursor: it takes them in again, and its
-- engine counts an occurrence once.
INSERT INTO cluster_fires (id, task, scheduled, partition, node, epoch, recorded_at)
SELECT CASE WHEN s.n = 1 THEN s.id ELSE nextval('cluster_fires_id_seq') END, f.task, f.scheduled, s.partition, s.node, s.epoch, s.recorded_at
FROM cluster_fires_v2 s, unnest(s.tasks, s.scheduled) AS f(task, scheduled)
ORDER BY s.id;
DROP TABLE cluster_fires_v2;
DROP TABLE cluster_claims;
