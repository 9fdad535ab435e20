-- Checkpoints of the events configurations have accepted (seed 000). The
-- journal records every accepted event with the dependencies it validated;
-- a checkpoint holds the live timestamps of every dependency as of one
-- journal entry, so that a restart reads the checkpoint and replays only
-- the journal after it. Checkpoints are written in generations: rows of
-- the generation being written are ignored until it becomes current.
CREATE TABLE validations (
    gen  INTEGER NOT NULL,
    task TEXT    NOT NULL,
    dep  TEXT    NOT NULL,      -- the dependency: "TYPE:resource"
    ts   INTEGER NOT NULL,      -- the event's timestamp, unix nanoseconds
    PRIMARY KEY (gen, task, dep, ts)
) WITHOUT ROWID;

CREATE TABLE checkpoint (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    gen INTEGER NOT NULL,       -- the current generation of validations
    seq INTEGER NOT NULL        -- the last journal entry it reflects
);
INSERT INTO checkpoint (id, gen, seq) VALUES (1, 0, 0);
