-- PostgreSQL twin of schemas/db/sqlite/0045_server_secrets.sql.
-- Secrets every crmd node on one database shares, created on first use: e.g. the key that
-- seals MCP 2026-07-28 requestState, so that any node finishes a round trip another node
-- started. Like signing_keys, the database is the trust root: protect its backups.
CREATE TABLE server_secrets (
  name        TEXT PRIMARY KEY,
  secret      TEXT NOT NULL,      -- base64url of random bytes
  created_at  BIGINT NOT NULL
);
