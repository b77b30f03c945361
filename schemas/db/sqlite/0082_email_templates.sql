-- Email templates (src/marketing/templates.h, docs/marketing.md "Templates"): a saved
-- layout, HTML and optional text with one {{content}} slot that the body of a campaign,
-- a sequence email or an automation's send_email step fills when the message is rendered.
-- `builtin` names a template crmd ships ('default'); while its html is '' the service
-- serves the layout embedded in the binary (src/marketing/layouts/default.html), so a
-- newer crmd's default reaches sites that never edited it. Saving it stores what was saved.
-- A built-in template is never deleted (the service refuses), so its row does not raise
-- the id high-water mark (0041) when crmctl copy empties the destination's seeded rows.
CREATE TABLE email_templates (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  html        TEXT NOT NULL DEFAULT '',
  text        TEXT NOT NULL DEFAULT '',
  builtin     TEXT UNIQUE,
  revision    BIGINT NOT NULL DEFAULT 1,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);
CREATE TRIGGER email_templates_id_high_water AFTER DELETE ON email_templates
WHEN OLD.builtin IS NULL BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('email_templates', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'email_templates';
END;
INSERT INTO email_templates (id, name, builtin, revision, created_at, updated_at)
  VALUES (1, 'Default', 'default', 1, CAST(strftime('%s', 'now') AS INTEGER),
          CAST(strftime('%s', 'now') AS INTEGER));

-- A campaign's layout. Sequence emails and send_email steps keep their template_id in
-- their JSON (sequences.emails, automations.steps). The service refuses to delete a
-- template in use; the reference here is the last line of that rule.
ALTER TABLE campaigns ADD COLUMN template_id BIGINT REFERENCES email_templates(id);
CREATE INDEX campaigns_template ON campaigns(template_id);
