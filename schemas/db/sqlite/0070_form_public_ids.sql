-- A form's public id (src/crm/forms.h): the id public form URLs carry,
-- /form/get/<public_id> and /form/submit/<public_id>, so that nobody can walk the forms by
-- counting. "frm_" and 32 hex digits of 16 random bytes, made by FormService for new forms
-- and here for the forms that exist (SQLite's randomblob draws from its own CSPRNG). The
-- numeric id stays the key for everything else (admin endpoints, crmctl, the console).
ALTER TABLE forms ADD COLUMN public_id TEXT;
UPDATE forms SET public_id = 'frm_' || lower(hex(randomblob(16))) WHERE public_id IS NULL;
CREATE UNIQUE INDEX forms_public_id ON forms(public_id);
