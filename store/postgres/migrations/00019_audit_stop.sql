-- +goose Up
-- The audit of a range of days: the records whose runs stopped in the
-- range. The index holds the record's number after the stop time, so the
-- lowest and highest number in a range are read from it alone; the page
-- then reads the records by number (see auditRange).
CREATE INDEX audit_stop ON audit (stop, seq);

-- +goose Down
DROP INDEX audit_stop;
