-- The evidence of a person's own consent (docs/crm.md, "Each person's own data"): each
-- form submission that named the contact's address, and the click that confirmed its
-- double opt-in, with the client's address and user agent as crmd saw them (behind a
-- trusted proxy, the client it forwarded). The contact's deletion deletes them.
--
-- kind: 'form_submission' | 'optin_confirmation'; form_id: the form of a submission (no
-- foreign key: the evidence stays when the form is deleted); user_agent: at most 512
-- bytes.
CREATE TABLE consent_records (
  id          INTEGER PRIMARY KEY,
  contact_id  BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  kind        TEXT NOT NULL CHECK (kind IN ('form_submission', 'optin_confirmation')),
  form_id     BIGINT,
  ip_address  TEXT NOT NULL DEFAULT '',
  user_agent  TEXT NOT NULL DEFAULT '',
  created_at  BIGINT NOT NULL
);
CREATE INDEX consent_records_contact ON consent_records(contact_id, id);
