-- PostgreSQL twin of schemas/db/sqlite/0001_core.sql (same number, same tables and indexes).
-- Core tables shared by every module.
-- Idempotency keys for creates (tools and REST): a repeat within 24h returns the first result.
CREATE TABLE idempotency_keys (
  scope       TEXT NOT NULL,     -- e.g. "mcp:<client_id>:<tool>" or "rest:<api_key_id>"
  key_hash    TEXT NOT NULL,
  response    TEXT NOT NULL,     -- JSON of the first result
  created_at  BIGINT NOT NULL,
  PRIMARY KEY (scope, key_hash)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
