-- PostgreSQL twin of schemas/db/sqlite/0042_incoming_hooks.sql (same number, same tables and indexes).
-- Incoming webhooks (src/webhooks/incoming.h), completing the table 0031 created.
-- The URL token "crmd_hook_<8 chars>_<43 chars>" is a secret: only its SHA-256 is kept
-- (token_hash); its first 18 characters (token_prefix) are visible, find the row and are
-- shown in listings; the whole token is then compared with the hash in constant time.
-- received_count counts accepted payloads.
ALTER TABLE incoming_webhooks ADD COLUMN token_prefix TEXT NOT NULL DEFAULT '';
ALTER TABLE incoming_webhooks ADD COLUMN received_count BIGINT NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX incoming_webhooks_prefix ON incoming_webhooks(token_prefix);
