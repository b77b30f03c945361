-- Soft bounces that add up (settings soft_bounce_limit: `count` within `days`): the
-- counter of contact_soft_bounces (migration 0074) counts from window_start, and starts
-- again at 1 when a soft bounce comes more than `days` after it. Reaching `count` makes a
-- hard bounce (docs/mail.md, "Provider event receivers").
ALTER TABLE contact_soft_bounces ADD COLUMN window_start BIGINT NOT NULL DEFAULT 0;
