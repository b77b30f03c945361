-- The audit log by app (issue 12: every query path has an index). The console's
-- Connected apps page shows each app's last activity, and its Audit page filters by app,
-- newest first; both walked the whole log (a GROUP BY client_id over every row, or every
-- row back to the first match). With (client_id, id) each is a seek from the end of the
-- app's part. Entries from a person or a form have client_id ''.
CREATE INDEX IF NOT EXISTS audit_log_client ON audit_log(client_id, id);
