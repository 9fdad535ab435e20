-- +goose Up
-- Clock nodes look for changed definitions every second: the newest
-- definition entry of the journal, found through an index of those
-- entries alone (data events, the bulk of the journal, are not in it).
CREATE INDEX journal_define ON journal (seq) WHERE kind = 'define';

-- The load of the last hour per partition and per node, and the pruning
-- of fires the director has taken in.
CREATE INDEX cluster_fires_recorded ON cluster_fires (recorded_at);

-- +goose Down
DROP INDEX cluster_fires_recorded;
DROP INDEX journal_define;
