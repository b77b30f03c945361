-- Failed sign-ins (auth/sign_in_throttle.h): one row per (account, source address) pair
-- with its run of failures and the time before which it may not try again, and one per
-- source address with its failures in a fixed window (against spraying many accounts).
-- Rows are counted before the password is checked and locked while they are, so parallel
-- attempts cannot exceed the limits. The old per-account and per-address counters of
-- rate_limits ("login:*") are not read any more.
CREATE TABLE sign_in_failures (
  bucket        TEXT PRIMARY KEY,  -- "pair:<sha256 of the account>:<address>" or "address:<address>"
  failures      BIGINT NOT NULL,
  window_start  BIGINT NOT NULL,
  blocked_until BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL
);
CREATE INDEX sign_in_failures_updated ON sign_in_failures(updated_at);
DELETE FROM rate_limits WHERE bucket LIKE 'login:%';

-- Dynamically registered and CIMD clients that never received a grant are purged some
-- time after registration (housekeeping), oldest first; the console pages through clients
-- in the same order.
CREATE INDEX oauth_clients_created ON oauth_clients(created_at, client_id);
