-- The SQLite twin adds a covering index (day, status, source, n) for the contacts
-- report's range read of contact_daily. On PostgreSQL a row updated as often as a
-- counter is rarely all-visible, so an index-only scan would visit the heap anyway;
-- the primary key's index serves the range. Nothing changes here.
SELECT 1;
