-- The bounce mailbox (src/marketing/bounce_mailbox.h, docs/mail.md "Bounce mailbox"):
-- a mail crmd cannot attribute to a message it sent (no valid VERP return path, or not a
-- delivery status notification or feedback report) stays in the mailbox and is recorded
-- here once by its Message-ID, for the operator (crmctl bounce-mailbox) and /metrics.
-- Reports that were applied are remembered in mail_receiver_events (provider 'mailbox').
CREATE TABLE bounce_mailbox_unattributed (
  report_id      TEXT PRIMARY KEY,
  subject        TEXT NOT NULL,
  sender         TEXT NOT NULL,
  reason         TEXT NOT NULL,
  first_seen_at  BIGINT NOT NULL,
  last_seen_at   BIGINT NOT NULL
);
