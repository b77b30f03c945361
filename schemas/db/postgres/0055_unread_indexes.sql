-- Indexes that no query reads (issue 12). The outbox is only ever read by id, after a
-- consumer's cursor (src/crm/outbox_repo.cc), and nothing filters the audit log by its
-- target type (src/crm/audit_repo.cc), yet every contact created, changed or deleted
-- paid for these four in its transaction: a B-tree insert each, and a page each in the
-- commit and again in the checkpoint. Neither table has a foreign key that would need
-- an index on a child column (outbox_events.contact_id is deliberately not one).
DROP INDEX IF EXISTS outbox_events_type_id;
DROP INDEX IF EXISTS outbox_events_contact_id;
DROP INDEX IF EXISTS outbox_events_occurred;
DROP INDEX IF EXISTS audit_log_target;
