-- Contact counters kept up to date as contacts change (issue 12), so that the dashboard,
-- get_contacts_report, list member counts and a draft campaign's audience read a few
-- counter rows instead of scanning a million contacts (src/crm/dashboard.cc).
--
-- Triggers keep them, so every write path (services, REST, forms, incoming webhooks,
-- crmctl seed, imports, the cascades of a contact, list or tag deletion) updates them in
-- its own transaction: a rollback takes the counter change with it. A row whose count
-- falls to 0 is deleted, so the rows are exactly what a GROUP BY over the counted rows
-- gives (a copy to another database, whose triggers rebuild them, checks equal).
--
-- contact_totals: contacts per status (dim 'status') and per type (dim 'type').
CREATE TABLE contact_totals (
  dim  TEXT NOT NULL,
  val  TEXT NOT NULL,
  n    BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (dim, val)
);
-- contact_daily: contacts by the UTC day they were created (created_at / 86400), with
-- their current status and their source.
CREATE TABLE contact_daily (
  day     BIGINT NOT NULL,
  status  TEXT NOT NULL,
  source  TEXT NOT NULL,
  n       BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (day, status, source)
);
-- group_member_counts: members of each list (kind 'list') or tag (kind 'tag') by the
-- member's current status.
CREATE TABLE group_member_counts (
  kind      TEXT NOT NULL,
  group_id  BIGINT NOT NULL,
  status    TEXT NOT NULL,
  n         BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, group_id, status)
);

INSERT INTO contact_totals (dim, val, n)
  SELECT 'status', status, COUNT(*) FROM contacts GROUP BY status;
INSERT INTO contact_totals (dim, val, n)
  SELECT 'type', type, COUNT(*) FROM contacts GROUP BY type;
INSERT INTO contact_daily (day, status, source, n)
  SELECT created_at / 86400, status, source, COUNT(*) FROM contacts
  GROUP BY created_at / 86400, status, source;
INSERT INTO group_member_counts (kind, group_id, status, n)
  SELECT 'list', m.list_id, c.status, COUNT(*) FROM contact_lists m
  JOIN contacts c ON c.id = m.contact_id GROUP BY m.list_id, c.status;
INSERT INTO group_member_counts (kind, group_id, status, n)
  SELECT 'tag', m.tag_id, c.status, COUNT(*) FROM contact_tags m
  JOIN contacts c ON c.id = m.contact_id GROUP BY m.tag_id, c.status;

CREATE TRIGGER contacts_counters_insert AFTER INSERT ON contacts BEGIN
  INSERT INTO contact_totals (dim, val, n) VALUES ('status', NEW.status, 1), ('type', NEW.type, 1)
    ON CONFLICT (dim, val) DO UPDATE SET n = contact_totals.n + 1;
  INSERT INTO contact_daily (day, status, source, n)
    VALUES (NEW.created_at / 86400, NEW.status, NEW.source, 1)
    ON CONFLICT (day, status, source) DO UPDATE SET n = contact_daily.n + 1;
END;

CREATE TRIGGER contacts_counters_update AFTER UPDATE OF status, type, source, created_at ON contacts
  WHEN OLD.status <> NEW.status OR OLD.type <> NEW.type OR OLD.source <> NEW.source
       OR OLD.created_at <> NEW.created_at
BEGIN
  UPDATE contact_totals SET n = n - 1
    WHERE (dim = 'status' AND val = OLD.status) OR (dim = 'type' AND val = OLD.type);
  DELETE FROM contact_totals
    WHERE ((dim = 'status' AND val = OLD.status) OR (dim = 'type' AND val = OLD.type)) AND n = 0;
  INSERT INTO contact_totals (dim, val, n) VALUES ('status', NEW.status, 1), ('type', NEW.type, 1)
    ON CONFLICT (dim, val) DO UPDATE SET n = contact_totals.n + 1;
  UPDATE contact_daily SET n = n - 1
    WHERE day = OLD.created_at / 86400 AND status = OLD.status AND source = OLD.source;
  DELETE FROM contact_daily
    WHERE day = OLD.created_at / 86400 AND status = OLD.status AND source = OLD.source AND n = 0;
  INSERT INTO contact_daily (day, status, source, n)
    VALUES (NEW.created_at / 86400, NEW.status, NEW.source, 1)
    ON CONFLICT (day, status, source) DO UPDATE SET n = contact_daily.n + 1;
END;

-- A status change moves the contact between status rows of every list and tag it is in.
CREATE TRIGGER contacts_counters_groups AFTER UPDATE OF status ON contacts
  WHEN OLD.status <> NEW.status
BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists WHERE contact_id = OLD.id))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
  DELETE FROM group_member_counts
    WHERE n = 0 AND status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists WHERE contact_id = OLD.id))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
  INSERT INTO group_member_counts (kind, group_id, status, n)
    SELECT 'list', list_id, NEW.status, 1 FROM contact_lists WHERE contact_id = NEW.id
    UNION ALL
    SELECT 'tag', tag_id, NEW.status, 1 FROM contact_tags WHERE contact_id = NEW.id
    ON CONFLICT (kind, group_id, status) DO UPDATE SET n = group_member_counts.n + 1;
END;

CREATE TRIGGER contacts_counters_delete AFTER DELETE ON contacts BEGIN
  UPDATE contact_totals SET n = n - 1
    WHERE (dim = 'status' AND val = OLD.status) OR (dim = 'type' AND val = OLD.type);
  DELETE FROM contact_totals
    WHERE ((dim = 'status' AND val = OLD.status) OR (dim = 'type' AND val = OLD.type)) AND n = 0;
  UPDATE contact_daily SET n = n - 1
    WHERE day = OLD.created_at / 86400 AND status = OLD.status AND source = OLD.source;
  DELETE FROM contact_daily
    WHERE day = OLD.created_at / 86400 AND status = OLD.status AND source = OLD.source AND n = 0;
END;

-- The memberships of a deleted contact go by cascade after its row is gone, when their
-- own triggers can no longer read its status: they are counted out here, before.
CREATE TRIGGER contacts_counters_delete_groups BEFORE DELETE ON contacts BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists WHERE contact_id = OLD.id))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
  DELETE FROM group_member_counts
    WHERE n = 0 AND status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists WHERE contact_id = OLD.id))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
END;

CREATE TRIGGER contact_lists_counters_insert AFTER INSERT ON contact_lists BEGIN
  INSERT INTO group_member_counts (kind, group_id, status, n)
    SELECT 'list', NEW.list_id, c.status, 1 FROM contacts c WHERE c.id = NEW.contact_id
    ON CONFLICT (kind, group_id, status) DO UPDATE SET n = group_member_counts.n + 1;
END;

-- No contact row (its deletion cascades here): already counted out above.
CREATE TRIGGER contact_lists_counters_delete AFTER DELETE ON contact_lists BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE kind = 'list' AND group_id = OLD.list_id
      AND status = (SELECT c.status FROM contacts c WHERE c.id = OLD.contact_id);
  DELETE FROM group_member_counts WHERE kind = 'list' AND group_id = OLD.list_id AND n = 0;
END;

CREATE TRIGGER contact_tags_counters_insert AFTER INSERT ON contact_tags BEGIN
  INSERT INTO group_member_counts (kind, group_id, status, n)
    SELECT 'tag', NEW.tag_id, c.status, 1 FROM contacts c WHERE c.id = NEW.contact_id
    ON CONFLICT (kind, group_id, status) DO UPDATE SET n = group_member_counts.n + 1;
END;

CREATE TRIGGER contact_tags_counters_delete AFTER DELETE ON contact_tags BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE kind = 'tag' AND group_id = OLD.tag_id
      AND status = (SELECT c.status FROM contacts c WHERE c.id = OLD.contact_id);
  DELETE FROM group_member_counts WHERE kind = 'tag' AND group_id = OLD.tag_id AND n = 0;
END;
