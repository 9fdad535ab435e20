-- +goose Up
-- The identity (an API token's name) whose call started a run, and so the
-- one its audit record names; '' when the clock, a condition or the server
-- itself started it, and for every run recorded before identities were.
ALTER TABLE runs ADD COLUMN started_by TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN started_by TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE audit DROP COLUMN started_by;
ALTER TABLE runs DROP COLUMN started_by;
