-- OAuth 2.1 authorization server. Every secret column holds crypto::HashSecret() (hex
-- SHA-256) or, for passwords, crypto::HashPassword() (scrypt). Times are unix seconds.

CREATE TABLE users (
  id            INTEGER PRIMARY KEY,
  email         TEXT NOT NULL UNIQUE,      -- lower-cased
  password_hash TEXT NOT NULL,
  is_admin      INTEGER NOT NULL DEFAULT 0,
  created_at    BIGINT NOT NULL
);

CREATE TABLE oauth_clients (
  client_id                     TEXT PRIMARY KEY,  -- random id, or an https URL (CIMD)
  client_secret_hash            TEXT,              -- NULL for public clients
  registration_access_token_hash TEXT,             -- RFC 7592; NULL for CIMD/admin clients
  token_endpoint_auth_method    TEXT NOT NULL,     -- none | client_secret_basic | client_secret_post
  client_name                   TEXT,
  redirect_uris                 TEXT NOT NULL,     -- JSON array
  grant_types                   TEXT NOT NULL,     -- JSON array
  metadata                      TEXT NOT NULL,     -- JSON: the full registered metadata
  allowed_scopes                TEXT,              -- client_credentials: space-separated scopes an admin granted
  source                        TEXT NOT NULL,     -- dcr | cimd | admin
  cimd_expires_at               BIGINT,            -- CIMD cache expiry
  revoked                       INTEGER NOT NULL DEFAULT 0,
  created_at                    BIGINT NOT NULL,
  updated_at                    BIGINT NOT NULL
);

-- Browser login sessions (cookie __Host-crmd_session holds the secret; we keep its hash).
CREATE TABLE login_sessions (
  id_hash     TEXT PRIMARY KEY,
  user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token  TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL
);
CREATE INDEX login_sessions_user ON login_sessions(user_id);

-- Remembered consent per (client, user, scope set).
CREATE TABLE consents (
  client_id   TEXT NOT NULL,
  user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scope       TEXT NOT NULL,   -- space-separated, sorted
  created_at  BIGINT NOT NULL,
  revoked_at  BIGINT,
  PRIMARY KEY (client_id, user_id, scope)
);

-- Authorization codes: single use. Redeeming sets redeemed_at; a second redemption
-- revokes every token issued from this code (grant_id).
CREATE TABLE auth_codes (
  code_hash             TEXT PRIMARY KEY,
  client_id             TEXT NOT NULL,
  user_id               INTEGER NOT NULL,
  redirect_uri          TEXT NOT NULL,
  scope                 TEXT NOT NULL,
  resource              TEXT NOT NULL,
  code_challenge        TEXT NOT NULL,   -- S256 only
  grant_id              TEXT NOT NULL,   -- ties together every token from this code
  created_at            BIGINT NOT NULL,
  expires_at            BIGINT NOT NULL,
  redeemed_at           BIGINT
);

-- A grant: one successful authorization (code) or client_credentials issuance. Tokens
-- reference it; revoking it revokes everything it produced.
CREATE TABLE grants (
  grant_id    TEXT PRIMARY KEY,
  client_id   TEXT NOT NULL,
  user_id     INTEGER,           -- NULL for client_credentials
  scope       TEXT NOT NULL,
  resource    TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  revoked_at  BIGINT
);
CREATE INDEX grants_client ON grants(client_id);
CREATE INDEX grants_user ON grants(user_id);

-- Refresh tokens: rotated on every use. family_id = grant_id. Presenting a token that was
-- already rotated (used_at set) revokes the whole family.
CREATE TABLE refresh_tokens (
  token_hash  TEXT PRIMARY KEY,
  grant_id    TEXT NOT NULL REFERENCES grants(grant_id) ON DELETE CASCADE,
  client_id   TEXT NOT NULL,
  scope       TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  used_at     BIGINT
);
CREATE INDEX refresh_tokens_grant ON refresh_tokens(grant_id);

-- Access tokens are JWTs verified without the database; this table records issued jti's
-- per grant so that revocation (RFC 7009, grant revocation, code replay) can list them.
CREATE TABLE access_tokens (
  jti         TEXT PRIMARY KEY,
  grant_id    TEXT NOT NULL,
  client_id   TEXT NOT NULL,
  expires_at  BIGINT NOT NULL,
  revoked_at  BIGINT
);
CREATE INDEX access_tokens_grant ON access_tokens(grant_id);
CREATE INDEX access_tokens_revoked ON access_tokens(revoked_at) WHERE revoked_at IS NOT NULL;

-- ES256 signing keys (private key PEM stored; the database is the trust root on one node
-- and shared across nodes on PostgreSQL).
CREATE TABLE signing_keys (
  kid         TEXT PRIMARY KEY,
  private_pem TEXT NOT NULL,
  public_jwk  TEXT NOT NULL,     -- JSON
  created_at  BIGINT NOT NULL,
  retired_at  BIGINT,            -- no longer signs; still published until expires_at
  expires_at  BIGINT             -- removed from JWKS after this
);

-- Fixed-window rate limit counters (registration per IP, login per IP and per account).
CREATE TABLE rate_limits (
  bucket       TEXT PRIMARY KEY,
  window_start BIGINT NOT NULL,
  count        INTEGER NOT NULL
);
