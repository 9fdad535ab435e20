-- +goose Up
-- Named calendars (insert_calendar): one row each, its definition as
-- JSON (store.EncodeCalendar), as in SQLite's migration 0012. Tasks name
-- them in their definitions.
CREATE TABLE calendars (
    name TEXT PRIMARY KEY,
    def  TEXT NOT NULL
);

-- +goose Down
DROP TABLE calendars;
