-- PostgreSQL twin of schemas/db/sqlite/0003_authorize.sql (same number, same tables and indexes).
-- Pending authorization requests (GET /oauth/authorize → login → consent). Kept on the
-- server so the request cannot be altered between the pages; the browser only holds an
-- opaque handle (hashed here) in hidden form fields, and the request is bound to the
-- browser cookie that started it (browser_hash) so another browser cannot complete it.
CREATE TABLE authorization_requests (
  id_hash         TEXT PRIMARY KEY,
  browser_hash    TEXT NOT NULL,   -- HashSecret of the crmd_browser cookie
  csrf_hash       TEXT NOT NULL,   -- HashSecret of the login form's CSRF token
  client_id       TEXT NOT NULL,
  redirect_uri    TEXT NOT NULL,   -- as presented (loopback port included)
  scope           TEXT NOT NULL,   -- sorted, space-separated
  resource        TEXT NOT NULL,
  state           TEXT,
  code_challenge  TEXT NOT NULL,   -- S256
  created_at      BIGINT NOT NULL,
  expires_at      BIGINT NOT NULL
);
CREATE INDEX authorization_requests_expiry ON authorization_requests(expires_at);
CREATE INDEX consents_client_user ON consents(client_id, user_id);
