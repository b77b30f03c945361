-- PostgreSQL twin of schemas/db/sqlite/0070_form_public_ids.sql (same number, same column
-- and index). A form's public id: "frm_" and 32 hex digits, for existing forms from
-- gen_random_uuid() (pg_strong_random; 122 random bits).
ALTER TABLE forms ADD COLUMN public_id TEXT;
UPDATE forms SET public_id = 'frm_' || replace(gen_random_uuid()::text, '-', '') WHERE public_id IS NULL;
CREATE UNIQUE INDEX forms_public_id ON forms(public_id);
