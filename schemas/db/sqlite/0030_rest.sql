-- REST API v1 (rest helper): API keys and forms.

-- API keys. The full key is shown once at creation; only its SHA-256 (crypto::HashSecret)
-- is stored. `prefix` is the visible, unique first part of the key ("crmd_live_ab12cd34")
-- used to find the row before the constant-time comparison.
CREATE TABLE api_keys (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  prefix        TEXT NOT NULL UNIQUE,
  secret_hash   TEXT NOT NULL,
  role          TEXT NOT NULL DEFAULT 'integration',  -- integration | admin
  status        TEXT NOT NULL DEFAULT 'enabled',      -- enabled | disabled
  created_at    BIGINT NOT NULL,
  last_used_at  BIGINT
);

-- Forms. fields, applies, display_rules and allowed_origins are JSON text (see
-- src/crm/forms.h). generated_contacts is incremented in the submission's transaction;
-- the dashboard reads name and generated_contacts.
CREATE TABLE forms (
  id                  INTEGER PRIMARY KEY,
  name                TEXT NOT NULL,
  fields              TEXT NOT NULL DEFAULT '[]',
  applies             TEXT NOT NULL DEFAULT '{}',
  display_rules       TEXT NOT NULL DEFAULT '{}',
  public              INTEGER NOT NULL DEFAULT 0,
  require_key         INTEGER NOT NULL DEFAULT 0,
  allowed_origins     TEXT NOT NULL DEFAULT '[]',
  honeypot_field      TEXT,
  generated_contacts  INTEGER NOT NULL DEFAULT 0,
  created_at          BIGINT NOT NULL,
  updated_at          BIGINT NOT NULL
);
