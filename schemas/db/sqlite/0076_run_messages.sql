-- Each email an automation's send_email step or a sequence sent to a contact, or that the
-- relay refused for good: what a person's data export and history list as that contact's
-- messages (docs/crm.md, "Each person's own data"). Written once, in the transaction that
-- records the step's outcome. The contact's deletion deletes them.
--
-- source: 'automation' | 'sequence'; owner_id: the automation or the sequence (no foreign
-- key: the message was sent even if its automation is deleted later); step: the step's or
-- the email's index. outcome: 'sent' | 'failed' (detail: the relay's answer).
CREATE TABLE run_messages (
  id          INTEGER PRIMARY KEY,
  contact_id  BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  source      TEXT NOT NULL CHECK (source IN ('automation', 'sequence')),
  owner_id    BIGINT NOT NULL,
  step        BIGINT NOT NULL,
  subject     TEXT NOT NULL DEFAULT '',
  message_id  TEXT,
  outcome     TEXT NOT NULL CHECK (outcome IN ('sent', 'failed')),
  detail      TEXT,
  created_at  BIGINT NOT NULL
);
CREATE INDEX run_messages_contact ON run_messages(contact_id, id);
