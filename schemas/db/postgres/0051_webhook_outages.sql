-- PostgreSQL twin of schemas/db/sqlite/0051_webhook_outages.sql (same number, same columns).
-- Webhook endpoints that survive outages (issue 13).
-- failing_since: when the endpoint's current run of failed attempts began (NULL while its
-- last attempt succeeded). Auto-disable is time-based: no success for
-- webhook_disable_after_s since failing_since, with at least webhook_disable_after_failures
-- failures in the run.
ALTER TABLE webhook_endpoints ADD COLUMN failing_since BIGINT;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at BIGINT;
-- lease_until: set while an attempt is in flight (the same value as next_attempt_at then),
-- cleared when its outcome is recorded. A success after an outage makes the endpoint's
-- waiting deliveries due at once, but never one that is in flight.
ALTER TABLE webhook_deliveries ADD COLUMN lease_until BIGINT;
