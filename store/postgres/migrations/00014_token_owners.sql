-- +goose Up
-- The OS users a token may define commands to run as (auth.Owners): one
-- pattern a line; '' is none given (any for a token without a scope, none
-- for one with a scope).
ALTER TABLE tokens ADD COLUMN owners TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE tokens DROP COLUMN owners;
