-- Outgoing and incoming webhooks (rest helper).

-- Outgoing endpoints. `secret` is the Standard Webhooks signing secret ("whsec_<base64>");
-- HMAC signing needs the secret itself, so unlike API keys it cannot be stored hashed. It
-- is shown once at creation and never listed or logged.
CREATE TABLE webhook_endpoints (
  id                    INTEGER PRIMARY KEY,
  url                   TEXT NOT NULL,
  secret                TEXT NOT NULL,
  events                TEXT NOT NULL DEFAULT '[]',  -- JSON array of event types
  description           TEXT NOT NULL DEFAULT '',
  enabled               INTEGER NOT NULL DEFAULT 1,
  consecutive_failures  INTEGER NOT NULL DEFAULT 0,
  disabled_reason       TEXT,
  created_at            BIGINT NOT NULL,
  updated_at            BIGINT NOT NULL
);

-- How far each outbox consumer has read outbox_events (ids are increasing). Advanced in
-- the same transaction that creates the delivery rows, so a crash never loses an event.
CREATE TABLE outbox_cursors (
  consumer       TEXT PRIMARY KEY,
  last_event_id  BIGINT NOT NULL
);

-- One row per (event, endpoint). `payload` is the exact JSON body sent on every attempt.
-- status: pending (to send; next_attempt_at doubles as the lease of an attempt in flight),
-- succeeded, failed (gave up).
CREATE TABLE webhook_deliveries (
  id                INTEGER PRIMARY KEY,
  event_id          BIGINT NOT NULL,
  endpoint_id       INTEGER NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_type        TEXT NOT NULL,
  contact_id        BIGINT,
  payload           TEXT NOT NULL,
  status            TEXT NOT NULL DEFAULT 'pending',
  attempts          INTEGER NOT NULL DEFAULT 0,
  next_attempt_at   BIGINT NOT NULL,
  retry_until       BIGINT NOT NULL,                -- give up after this (redelivery renews it)
  last_status_code  INTEGER,
  last_error        TEXT,
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL,
  completed_at      BIGINT,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at);
CREATE INDEX webhook_deliveries_order ON webhook_deliveries(endpoint_id, contact_id, status, event_id);

-- Every attempt, for the delivery log.
CREATE TABLE webhook_attempts (
  id           INTEGER PRIMARY KEY,
  delivery_id  INTEGER NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt      INTEGER NOT NULL,
  started_at   BIGINT NOT NULL,
  status_code  INTEGER,
  error        TEXT,
  duration_ms  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id);

-- Incoming webhooks: POST /<rest base>/hooks/<token>. Only the token's hash is stored.
-- mapping: JSON object {contact field: dotted path}; applies: {status,type,tags,lists};
-- hmac_secret (optional) verifies X-Signature: sha256=<hex>, so it is kept as is.
CREATE TABLE incoming_webhooks (
  id                INTEGER PRIMARY KEY,
  name              TEXT NOT NULL,
  token_hash        TEXT NOT NULL UNIQUE,
  mapping           TEXT NOT NULL DEFAULT '{}',
  applies           TEXT NOT NULL DEFAULT '{}',
  hmac_secret       TEXT,
  enabled           INTEGER NOT NULL DEFAULT 1,
  created_at        BIGINT NOT NULL,
  updated_at        BIGINT NOT NULL,
  last_received_at  BIGINT
);
