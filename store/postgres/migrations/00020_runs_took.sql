-- +goose Up
-- The runs page ordered by how long the runs took, the longest first:
-- an index on the expression the page orders by, of the ended runs only
-- (a run still running has end_at 0). The ID after it orders the runs
-- that took as long.
CREATE INDEX runs_took ON runs ((end_at - start_at), id) WHERE end_at <> 0;

-- +goose Down
DROP INDEX runs_took;
