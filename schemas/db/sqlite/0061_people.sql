-- People have a role (viewer | editor | administrator: auth/roles.h) with a scope ceiling,
-- and can be disabled and deleted. Existing administrators become administrators, everyone
-- else an editor. A deleted person keeps their row (ids are never reused, and the audit
-- log, approvals and grants keep pointing at it), with the email freed and no password.
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'editor';
ALTER TABLE users ADD COLUMN disabled_at BIGINT;
ALTER TABLE users ADD COLUMN deleted_at BIGINT;
UPDATE users SET role = 'administrator' WHERE is_admin <> 0;
