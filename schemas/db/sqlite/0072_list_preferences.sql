-- The preference centre (docs/mail.md): a list can be shown to its subscribers on the page
-- behind every message's unsubscribe link, and leaving a list there is remembered per list.
--
-- lists.public: 1 when the list (its name and description) is shown on that page.
ALTER TABLE lists ADD COLUMN public INTEGER NOT NULL DEFAULT 0;

-- contact_lists.state: 'subscribed' is a member; 'unsubscribed' left the list on the
-- preference page, and the row stays so that imports, forms and tools adding the contact
-- to the list skip it; 'pending' asked to join again through a form with double opt-in and
-- becomes 'subscribed' when the contact confirms. Only 'subscribed' rows are members: they
-- alone are counted, listed, and sent campaigns.
ALTER TABLE contact_lists ADD COLUMN state TEXT NOT NULL DEFAULT 'subscribed'
  CHECK (state IN ('subscribed', 'unsubscribed', 'pending'));
ALTER TABLE contact_lists ADD COLUMN updated_at BIGINT;
-- The list's members by contact, with their state in the index, so that a campaign's
-- audience and a list filter read the index alone, as before.
DROP INDEX contact_lists_list;
CREATE INDEX contact_lists_list ON contact_lists(list_id, contact_id, state);

-- The member counters (migration 0053) count subscribed rows only.
DROP TRIGGER contacts_counters_groups;
CREATE TRIGGER contacts_counters_groups AFTER UPDATE OF status ON contacts
  WHEN OLD.status <> NEW.status
BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists
                                      WHERE contact_id = OLD.id AND state = 'subscribed'))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
  DELETE FROM group_member_counts
    WHERE n = 0 AND status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists
                                      WHERE contact_id = OLD.id AND state = 'subscribed'))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
  INSERT INTO group_member_counts (kind, group_id, status, n)
    SELECT 'list', list_id, NEW.status, 1 FROM contact_lists
      WHERE contact_id = NEW.id AND state = 'subscribed'
    UNION ALL
    SELECT 'tag', tag_id, NEW.status, 1 FROM contact_tags WHERE contact_id = NEW.id
    ON CONFLICT (kind, group_id, status) DO UPDATE SET n = group_member_counts.n + 1;
END;

DROP TRIGGER contacts_counters_delete_groups;
CREATE TRIGGER contacts_counters_delete_groups BEFORE DELETE ON contacts BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists
                                      WHERE contact_id = OLD.id AND state = 'subscribed'))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
  DELETE FROM group_member_counts
    WHERE n = 0 AND status = OLD.status AND (
      (kind = 'list' AND group_id IN (SELECT list_id FROM contact_lists
                                      WHERE contact_id = OLD.id AND state = 'subscribed'))
      OR (kind = 'tag' AND group_id IN (SELECT tag_id FROM contact_tags WHERE contact_id = OLD.id)));
END;

DROP TRIGGER contact_lists_counters_insert;
CREATE TRIGGER contact_lists_counters_insert AFTER INSERT ON contact_lists
  WHEN NEW.state = 'subscribed'
BEGIN
  INSERT INTO group_member_counts (kind, group_id, status, n)
    SELECT 'list', NEW.list_id, c.status, 1 FROM contacts c WHERE c.id = NEW.contact_id
    ON CONFLICT (kind, group_id, status) DO UPDATE SET n = group_member_counts.n + 1;
END;

DROP TRIGGER contact_lists_counters_delete;
CREATE TRIGGER contact_lists_counters_delete AFTER DELETE ON contact_lists
  WHEN OLD.state = 'subscribed'
BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE kind = 'list' AND group_id = OLD.list_id
      AND status = (SELECT c.status FROM contacts c WHERE c.id = OLD.contact_id);
  DELETE FROM group_member_counts WHERE kind = 'list' AND group_id = OLD.list_id AND n = 0;
END;

CREATE TRIGGER contact_lists_counters_leave AFTER UPDATE OF state ON contact_lists
  WHEN OLD.state = 'subscribed' AND NEW.state <> 'subscribed'
BEGIN
  UPDATE group_member_counts SET n = n - 1
    WHERE kind = 'list' AND group_id = OLD.list_id
      AND status = (SELECT c.status FROM contacts c WHERE c.id = OLD.contact_id);
  DELETE FROM group_member_counts WHERE kind = 'list' AND group_id = OLD.list_id AND n = 0;
END;

CREATE TRIGGER contact_lists_counters_join AFTER UPDATE OF state ON contact_lists
  WHEN OLD.state <> 'subscribed' AND NEW.state = 'subscribed'
BEGIN
  INSERT INTO group_member_counts (kind, group_id, status, n)
    SELECT 'list', NEW.list_id, c.status, 1 FROM contacts c WHERE c.id = NEW.contact_id
    ON CONFLICT (kind, group_id, status) DO UPDATE SET n = group_member_counts.n + 1;
END;
