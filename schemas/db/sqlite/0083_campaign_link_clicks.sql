-- Clicks per link of a campaign (the console's campaign report, docs/console.md): every
-- click through a message's signed redirect (/t/c/) by one of the campaign's recipients
-- adds one to its URL's row, in the transaction that records the click. The first click of
-- each recipient stays in campaign_recipients.clicked_at (the "clicked" figure).
CREATE TABLE campaign_link_clicks (
  campaign_id BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  url         TEXT NOT NULL,
  clicks      BIGINT NOT NULL DEFAULT 0,
  last_at     BIGINT NOT NULL,
  PRIMARY KEY (campaign_id, url)
);
