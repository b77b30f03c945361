-- Bounces of messages never sent. A 5xx at RCPT marks its recipient failed and bounced;
-- a bounce report after the relay accepted a message marks a sent one bounced. The
-- campaign report's delivered (sent minus bounced) took both off, so each refusal at
-- RCPT also removed a message that was delivered. bounced_unsent counts the first kind,
-- kept as each bounce is recorded; existing campaigns get theirs counted once here.
ALTER TABLE campaign_stats ADD COLUMN bounced_unsent BIGINT NOT NULL DEFAULT 0;
UPDATE campaign_stats SET bounced_unsent = (
  SELECT COUNT(*) FROM campaign_recipients r
  WHERE r.campaign_id = campaign_stats.campaign_id AND r.status <> 'sent'
    AND r.bounced_at IS NOT NULL);
