-- +goose Up
-- The identity (an API token's name) whose call ended a run before it
-- ended by itself (an abort, a skip or reprocess that canceled a node's
-- run), and so the one its audit record names; '' for a run that ended on
-- its own, one still running that no call ended, and every run recorded
-- before.
ALTER TABLE runs ADD COLUMN ended_by TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN ended_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit DROP COLUMN ended_by;
ALTER TABLE runs DROP COLUMN ended_by;
