-- Email delivery (docs/mail.md): the per-recipient send queue of a campaign, its aggregate
-- counters, and the per-campaign delivery settings.
--
-- campaign_recipients.status: pending (queued; leased while due_at is in the future) |
-- sent | failed | skipped. A final state is never left except by a resend of the
-- undelivered (failed) ones, which bumps `round` so that the new message gets a new
-- Message-ID. `reason` says why a recipient failed or was skipped.
ALTER TABLE campaign_recipients ADD COLUMN reason TEXT;
ALTER TABLE campaign_recipients ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaign_recipients ADD COLUMN due_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaign_recipients ADD COLUMN round BIGINT NOT NULL DEFAULT 1;
ALTER TABLE campaign_recipients ADD COLUMN message_id TEXT;
ALTER TABLE campaign_recipients ADD COLUMN sent_at BIGINT;
ALTER TABLE campaign_recipients ADD COLUMN smtp_code BIGINT;
ALTER TABLE campaign_recipients ADD COLUMN opened_at BIGINT;
ALTER TABLE campaign_recipients ADD COLUMN clicked_at BIGINT;
ALTER TABLE campaign_recipients ADD COLUMN bounced_at BIGINT;
ALTER TABLE campaign_recipients ADD COLUMN complained_at BIGINT;
ALTER TABLE campaign_recipients ADD COLUMN unsubscribed_at BIGINT;
-- The queue: due pending rows of any campaign, in the order they are leased (no sort).
CREATE INDEX campaign_recipients_due ON campaign_recipients(status, due_at, campaign_id, contact_id);
CREATE INDEX campaign_recipients_message ON campaign_recipients(message_id);

ALTER TABLE campaigns ADD COLUMN send_round BIGINT NOT NULL DEFAULT 1;
ALTER TABLE campaigns ADD COLUMN track_opens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN track_clicks BIGINT NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN finished_at BIGINT;

-- Counters kept as events happen, in the transaction that records them (never a scan).
-- queued = recipients recorded; pending = queued - sent - failed - skipped.
CREATE TABLE campaign_stats (
  campaign_id  BIGINT PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE,
  queued       BIGINT NOT NULL DEFAULT 0,
  sent         BIGINT NOT NULL DEFAULT 0,
  failed       BIGINT NOT NULL DEFAULT 0,
  skipped      BIGINT NOT NULL DEFAULT 0,
  bounced      BIGINT NOT NULL DEFAULT 0,
  complained   BIGINT NOT NULL DEFAULT 0,
  unsubscribed BIGINT NOT NULL DEFAULT 0,
  opened       BIGINT NOT NULL DEFAULT 0,
  clicked      BIGINT NOT NULL DEFAULT 0
);
