-- Campaigns, automations and sequences (marketing module, docs/marketing.md).
-- Audience and automation references are rows, not JSON, so that "which campaigns and
-- automations use list 7" is an indexed lookup (UsageSource) and the audience resolves in SQL.

CREATE TABLE campaigns (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  subject       TEXT NOT NULL DEFAULT '',
  preheader     TEXT NOT NULL DEFAULT '',
  from_name     TEXT NOT NULL DEFAULT '',
  from_email    TEXT NOT NULL DEFAULT '',
  html_body     TEXT NOT NULL DEFAULT '',
  text_body     TEXT NOT NULL DEFAULT '',
  send_at       BIGINT,                      -- NULL: send as soon as activated
  status        TEXT NOT NULL DEFAULT 'draft',
  audience_size BIGINT NOT NULL DEFAULT 0,   -- recipients recorded at the last activation
  activated_at  BIGINT,
  revision      BIGINT NOT NULL DEFAULT 1,
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL
);
CREATE INDEX campaigns_status ON campaigns(status, id);

-- kind: 'list' | 'tag'; mode: 'include' | 'exclude'.
CREATE TABLE campaign_audience (
  campaign_id BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  kind        TEXT NOT NULL,
  ref_id      BIGINT NOT NULL,
  mode        TEXT NOT NULL,
  PRIMARY KEY (campaign_id, kind, ref_id, mode)
);
CREATE INDEX campaign_audience_ref ON campaign_audience(kind, ref_id);

-- The resolved audience, recorded at activation. status: pending | sent | delivered |
-- opened | clicked | bounced | failed | unsubscribed (only 'pending' until sending exists).
CREATE TABLE campaign_recipients (
  campaign_id BIGINT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  contact_id  BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  status      TEXT NOT NULL DEFAULT 'pending',
  updated_at  BIGINT NOT NULL,
  PRIMARY KEY (campaign_id, contact_id)
);
CREATE INDEX campaign_recipients_status ON campaign_recipients(campaign_id, status);
CREATE INDEX campaign_recipients_contact ON campaign_recipients(contact_id);

CREATE TABLE automations (
  id             INTEGER PRIMARY KEY,
  name           TEXT NOT NULL,
  description    TEXT NOT NULL DEFAULT '',
  trigger_type   TEXT NOT NULL,
  trigger_params TEXT NOT NULL DEFAULT '{}',  -- JSON object, e.g. {"tag_id": 3}
  steps          TEXT NOT NULL DEFAULT '[]',  -- JSON array validated against the catalogue
  status         TEXT NOT NULL DEFAULT 'draft',
  activated_at   BIGINT,
  revision       BIGINT NOT NULL DEFAULT 1,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL
);
CREATE INDEX automations_status ON automations(status, id);

-- Lists and tags an automation references. role: 'trigger' | 'step'.
CREATE TABLE automation_refs (
  automation_id BIGINT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  kind          TEXT NOT NULL,
  ref_id        BIGINT NOT NULL,
  role          TEXT NOT NULL,
  PRIMARY KEY (automation_id, kind, ref_id, role)
);
CREATE INDEX automation_refs_ref ON automation_refs(kind, ref_id);

-- status: active | completed | exited. current_step: index of the next step to run.
CREATE TABLE automation_enrolments (
  automation_id BIGINT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
  contact_id    BIGINT NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  status        TEXT NOT NULL DEFAULT 'active',
  current_step  BIGINT NOT NULL DEFAULT 0,
  enrolled_at   BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  PRIMARY KEY (automation_id, contact_id)
);
CREATE INDEX automation_enrolments_progress ON automation_enrolments(automation_id, status, current_step);
CREATE INDEX automation_enrolments_contact ON automation_enrolments(contact_id);

CREATE TABLE sequences (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  emails      TEXT NOT NULL DEFAULT '[]',  -- JSON array of {subject, html_body, text_body, delay_seconds}
  status      TEXT NOT NULL DEFAULT 'draft',
  revision    BIGINT NOT NULL DEFAULT 1,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);
CREATE INDEX sequences_status ON sequences(status, id);
