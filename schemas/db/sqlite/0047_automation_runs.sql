-- Automations, sequences and double opt-in that run (docs/marketing.md, docs/mail.md).
--
-- automation_runs: one row per (automation, trigger event, contact) -- the enrolment --
-- with the steps it runs, copied at enrolment so that an edit applies to new enrolments
-- only. trigger_key: 'event:<outbox event id>' | 'activation'. status: active |
-- completed | exited | cancelled. current_step: index of the next step; due_at: when it
-- runs (a wait step sets it ahead; an email or webhook step in flight holds it ahead as
-- its lease). attempts: tries of the current step that failed for a temporary reason.
CREATE TABLE automation_runs (
  id            INTEGER PRIMARY KEY,
  automation_id BIGINT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  contact_id    BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  trigger_key   TEXT NOT NULL,
  steps         TEXT NOT NULL DEFAULT '[]',
  status        TEXT NOT NULL DEFAULT 'active',
  current_step  BIGINT NOT NULL DEFAULT 0,
  due_at        BIGINT NOT NULL DEFAULT 0,
  attempts      BIGINT NOT NULL DEFAULT 0,
  last_error    TEXT,
  enrolled_at   BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  UNIQUE (automation_id, trigger_key, contact_id)
);
CREATE INDEX automation_runs_due ON automation_runs(status, due_at);
CREATE INDEX automation_runs_automation ON automation_runs(automation_id, status);
CREATE INDEX automation_runs_contact ON automation_runs(contact_id);
INSERT INTO automation_runs (automation_id, contact_id, trigger_key, steps, status, current_step,
                             due_at, attempts, enrolled_at, updated_at)
  SELECT e.automation_id, e.contact_id, 'activation', a.steps, e.status, e.current_step,
         e.enrolled_at, 0, e.enrolled_at, e.updated_at
  FROM automation_enrolments e JOIN automations a ON a.id = e.automation_id;
DROP TABLE automation_enrolments;

-- Counters kept as runs move (never a scan): per automation and per step index.
CREATE TABLE automation_stats (
  automation_id BIGINT PRIMARY KEY REFERENCES automations(id) ON DELETE CASCADE,
  enrolled      BIGINT NOT NULL DEFAULT 0,
  completed     BIGINT NOT NULL DEFAULT 0,
  exited        BIGINT NOT NULL DEFAULT 0,
  cancelled     BIGINT NOT NULL DEFAULT 0
);
INSERT INTO automation_stats (automation_id, enrolled, completed, exited, cancelled)
  SELECT automation_id, COUNT(*),
         SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END),
         SUM(CASE WHEN status = 'exited' THEN 1 ELSE 0 END), 0
  FROM automation_runs GROUP BY automation_id;
-- done: the step took effect (an email sent, a tag added, a wait over); failed: it could
-- not (the run goes on); skipped: it did not apply (an email to a contact not subscribed).
CREATE TABLE automation_step_stats (
  automation_id BIGINT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  step_index    BIGINT NOT NULL,
  done          BIGINT NOT NULL DEFAULT 0,
  failed        BIGINT NOT NULL DEFAULT 0,
  skipped       BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (automation_id, step_index)
);

-- Sequences: contacts added to list_id while the sequence is active are enrolled.
ALTER TABLE sequences ADD COLUMN list_id BIGINT;
ALTER TABLE sequences ADD COLUMN activated_at BIGINT;
-- One enrolment per (sequence, contact). next_email: index of the next email, sent at
-- due_at (held while the sequence is paused). status: active | completed | exited.
CREATE TABLE sequence_runs (
  id          INTEGER PRIMARY KEY,
  sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
  contact_id  BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  status      TEXT NOT NULL DEFAULT 'active',
  next_email  BIGINT NOT NULL DEFAULT 0,
  due_at      BIGINT NOT NULL DEFAULT 0,
  attempts    BIGINT NOT NULL DEFAULT 0,
  last_error  TEXT,
  enrolled_at BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  UNIQUE (sequence_id, contact_id)
);
CREATE INDEX sequence_runs_due ON sequence_runs(status, due_at);
CREATE INDEX sequence_runs_contact ON sequence_runs(contact_id);
CREATE TABLE sequence_stats (
  sequence_id BIGINT PRIMARY KEY REFERENCES sequences(id) ON DELETE CASCADE,
  enrolled    BIGINT NOT NULL DEFAULT 0,
  sent        BIGINT NOT NULL DEFAULT 0,
  failed      BIGINT NOT NULL DEFAULT 0,
  completed   BIGINT NOT NULL DEFAULT 0,
  exited      BIGINT NOT NULL DEFAULT 0
);

-- Double opt-in: the confirmation email of a pending signup, queued in the transaction
-- that created the contact and sent by a job loop. status: pending | sent | failed |
-- skipped (the contact was no longer pending at its turn).
CREATE TABLE optin_emails (
  contact_id BIGINT PRIMARY KEY REFERENCES contacts(id) ON DELETE CASCADE,
  status     TEXT NOT NULL DEFAULT 'pending',
  due_at     BIGINT NOT NULL DEFAULT 0,
  attempts   BIGINT NOT NULL DEFAULT 0,
  message_id TEXT,
  reason     TEXT,
  created_at BIGINT NOT NULL,
  sent_at    BIGINT
);
CREATE INDEX optin_emails_due ON optin_emails(status, due_at);
