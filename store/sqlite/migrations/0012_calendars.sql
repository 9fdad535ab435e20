-- Named calendars (insert_calendar): one row each, its definition as
-- JSON (store.EncodeCalendar). Tasks name them in their definitions.
CREATE TABLE calendars (
    name TEXT PRIMARY KEY,
    def  TEXT NOT NULL
);
