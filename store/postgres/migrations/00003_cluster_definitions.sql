-- +goose Up
-- Clock nodes look for changed definitions every second: the newest
-- definition entry of the journal, found through an index of those
-- entries alone (data events, the bulk of the journal, are not in it).
CREATE INDEX journal_define ON journal (seq) WHERE kind = 'define';

-- +goose Down
DROP INDEX journal_define;
