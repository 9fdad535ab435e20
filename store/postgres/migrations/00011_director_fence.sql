-- +goose Up
-- The director's fence and the settings a cluster's nodes share.
--
-- A director's commits are fenced by the assignment lease (partition -1 of
-- cluster_leases): gnomon_fence, called in every commit of a director's
-- store, reads that row FOR SHARE and refuses the transaction unless the
-- director still holds it at its epoch. The row lock makes a standby's
-- takeover wait for a commit in flight, so that each commit of a director
-- that lost the lease is either before the takeover (the new director
-- reads it when it loads its state) or refused.
-- +goose StatementBegin
CREATE FUNCTION gnomon_fence(holder TEXT, held BIGINT) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    n TEXT;
    e BIGINT;
BEGIN
    SELECT node, epoch INTO n, e FROM cluster_leases WHERE partition = -1 FOR SHARE;
    IF NOT FOUND OR n <> holder OR e <> held THEN
        RAISE EXCEPTION USING ERRCODE = 'GNF01', MESSAGE = format(
            'another director holds the cluster (%s at epoch %s; this director, %s, held epoch %s)',
            coalesce(nullif(n, ''), 'no node'), coalesce(e, 0), holder, held);
    END IF;
END
$$;
-- +goose StatementEnd

-- What the director that took the assignment lease last runs with, and
-- what every clock node must run with too: the default time zone of
-- calendars (an IANA name; 'Local' when the host's zone has none) and the
-- minute-spot space: its size, its partitions, and whether it scatters the
-- repeaters' occurrences over the regular spots (--scatter-steps).
-- director is '' until a director took the lease.
CREATE TABLE cluster_settings (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    director   TEXT    NOT NULL DEFAULT '',
    epoch      BIGINT  NOT NULL DEFAULT 0,
    zone       TEXT    NOT NULL DEFAULT '',
    space      INTEGER NOT NULL DEFAULT 0,
    partitions INTEGER NOT NULL DEFAULT 0,
    scatter    BOOLEAN NOT NULL DEFAULT false
);
INSERT INTO cluster_settings (id) VALUES (1);

-- What each node registered with, checked against cluster_settings at
-- every heartbeat of a clock node.
ALTER TABLE cluster_nodes
    ADD COLUMN zone       TEXT    NOT NULL DEFAULT '',
    ADD COLUMN space      INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN partitions INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN scatter    BOOLEAN NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE cluster_nodes DROP COLUMN zone, DROP COLUMN space, DROP COLUMN partitions, DROP COLUMN scatter;
DROP TABLE cluster_settings;
DROP FUNCTION gnomon_fence(TEXT, BIGINT);
