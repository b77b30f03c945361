-- PostgreSQL twin of schemas/db/sqlite/0074_mail_receivers.sql (same number, same tables and indexes).
-- Provider event receivers (src/marketing/mail_receivers.h, docs/mail.md "Provider event
-- receivers"): one row per provider that may post delivery events to crmd.
-- signing_key is the Mailgun webhook signing key: an HMAC key, which verification needs
-- in clear, kept like an incoming webhook's hmac_secret and never answered by any API.
-- password_hash is the hex SHA-256 of a basic-auth password (Postmark), never the password.
-- topic_arn is the one SNS topic whose signed messages the SES receiver takes.
CREATE TABLE mail_receivers (
  provider          TEXT PRIMARY KEY CHECK (provider IN ('mailgun', 'postmark', 'sendgrid', 'ses')),
  signing_key       TEXT,
  username          TEXT,
  password_hash     TEXT,
  topic_arn         TEXT,
  enabled           BIGINT NOT NULL DEFAULT 1,
  received_count    BIGINT NOT NULL DEFAULT 0,
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL,
  last_received_at  BIGINT
);

-- The provider event ids (and Mailgun's single-use tokens, as "token:<sha256>") already
-- processed, so a replay is answered 200 and applied once; rows older than
-- mail_receiver_retention_s are pruned as new events arrive.
CREATE TABLE mail_receiver_events (
  provider     TEXT NOT NULL,
  event_id     TEXT NOT NULL,
  received_at  BIGINT NOT NULL,
  PRIMARY KEY (provider, event_id)
);
CREATE INDEX mail_receiver_events_received ON mail_receiver_events(received_at);

-- Soft (temporary) bounces a provider reported, per contact: counted, never suppressing.
CREATE TABLE contact_soft_bounces (
  contact_id  BIGINT PRIMARY KEY REFERENCES contacts(id) ON DELETE CASCADE,
  bounces     BIGINT NOT NULL DEFAULT 0,
  last_at     BIGINT NOT NULL
);
