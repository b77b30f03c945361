-- PostgreSQL twin of schemas/db/sqlite/0040_housekeeping.sql (same number, same tables and indexes).
-- Indexes for the housekeeping sweeps (src/app/housekeeping.h): each DELETE ... WHERE
-- <time column> <= ? walks an index instead of the table.
CREATE INDEX rate_limits_window ON rate_limits(window_start);
CREATE INDEX auth_codes_expires ON auth_codes(expires_at);
CREATE INDEX access_tokens_expires ON access_tokens(expires_at);
CREATE INDEX refresh_tokens_expires ON refresh_tokens(expires_at);
CREATE INDEX login_sessions_expires ON login_sessions(expires_at);
CREATE INDEX confirmations_expires ON confirmations(expires_at);
CREATE INDEX webhook_attempts_started ON webhook_attempts(started_at);
