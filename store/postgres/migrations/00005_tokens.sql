-- +goose Up
-- API tokens: who may call the API and what each may do. Only the SHA-256
-- hash of a token's secret is kept. Revoked tokens stay, so that the names
-- in the journal and the audit keep their meaning.
CREATE TABLE tokens (
    id         TEXT    PRIMARY KEY,
    name       TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    scope      TEXT    NOT NULL DEFAULT '',  -- patterns, one per line; '' is every task
    hash       BYTEA   NOT NULL,
    rate       INTEGER NOT NULL DEFAULT 0,   -- requests a second; 0 the server's default, -1 none
    created    BIGINT  NOT NULL,             -- Unix nanoseconds
    expires    BIGINT  NOT NULL DEFAULT 0,   -- 0: never
    revoked    BIGINT  NOT NULL DEFAULT 0,   -- 0: not revoked
    created_by TEXT    NOT NULL DEFAULT ''
);

-- A name identifies one token at a time.
CREATE UNIQUE INDEX tokens_name ON tokens (name) WHERE revoked = 0;

-- +goose Down
DROP TABLE tokens;
