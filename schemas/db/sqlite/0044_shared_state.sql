-- State that every crmd node on one database shares (PostgreSQL with several nodes; the
-- same tables on SQLite keep one code path).

-- MCP 2025-era sessions (Mcp-Session-Id). The id is a bearer secret: only its hash is
-- stored. owner = client id + subject (src/mcp/session.h OwnerKey).
CREATE TABLE mcp_sessions (
  id_hash          TEXT PRIMARY KEY,
  owner            TEXT NOT NULL,
  protocol_version TEXT NOT NULL,
  initialized      BIGINT NOT NULL DEFAULT 0,
  created_at       BIGINT NOT NULL,
  last_used_at     BIGINT NOT NULL
);
CREATE INDEX mcp_sessions_owner ON mcp_sessions(owner, created_at);
CREATE INDEX mcp_sessions_last_used ON mcp_sessions(last_used_at);

-- Leases for work that one node at a time does (housekeeping): the holder renews before
-- expires_at; another node takes over only after it. Rows are created on first use.
CREATE TABLE job_leases (
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL DEFAULT '',
  expires_at  BIGINT NOT NULL DEFAULT 0
);
