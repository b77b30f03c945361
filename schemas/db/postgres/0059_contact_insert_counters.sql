-- The SQLite twin drops the AFTER INSERT counters trigger of 0053 and has
-- repo::InsertContact write a new contact's counters itself. PostgreSQL keeps the
-- trigger: its insert is one round trip under the write lock (src/crm/contact_repo.cc),
-- and a trigger costs it no statement journal. Nothing changes here.
SELECT 1;
