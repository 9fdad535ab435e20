-- +goose Up
-- A retry is a run of the same trigger as a failed run: attempt counts the
-- retries before it (0 for a first run, and every run recorded before),
-- retry_of names the trigger's first run (0 for a first run).
ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN retry_of BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN retry_of;
ALTER TABLE runs DROP COLUMN attempt;
