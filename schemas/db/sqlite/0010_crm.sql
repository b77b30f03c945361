-- CRM core: contacts, lists, tags, memberships, the event outbox, audit log,
-- confirmations (preview + token) and the settings document. Owned by src/crm.
-- Every list filter of list_contacts has an index below (checked by a unit test with
-- EXPLAIN QUERY PLAN).

CREATE TABLE contacts (
  id            INTEGER PRIMARY KEY,
  email         TEXT NOT NULL UNIQUE,              -- normalised (see src/crm/email_validation.h)
  first_name    TEXT NOT NULL DEFAULT '',
  last_name     TEXT NOT NULL DEFAULT '',
  phone         TEXT NOT NULL DEFAULT '',
  status        TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending','subscribed','unsubscribed','bounced','complained')),
  type          TEXT NOT NULL DEFAULT 'lead' CHECK (type IN ('lead','customer')),
  source        TEXT NOT NULL DEFAULT '',            -- mcp | api | form:<id> | webhook | import | cli
  custom_fields TEXT NOT NULL DEFAULT '{}',          -- JSON object
  revision      INTEGER NOT NULL DEFAULT 1,
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL
);
CREATE INDEX contacts_status_id ON contacts(status, id);
CREATE INDEX contacts_type_id ON contacts(type, id);
CREATE INDEX contacts_source_id ON contacts(source, id);
CREATE INDEX contacts_created_id ON contacts(created_at, id);
CREATE INDEX contacts_first_name_lc ON contacts(lower(first_name));
CREATE INDEX contacts_last_name_lc ON contacts(lower(last_name));

CREATE TABLE lists (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  revision    INTEGER NOT NULL DEFAULT 1,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);

CREATE TABLE tags (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  revision    INTEGER NOT NULL DEFAULT 1,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);

CREATE TABLE contact_lists (
  contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  list_id    INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (contact_id, list_id)
);
CREATE INDEX contact_lists_list ON contact_lists(list_id, contact_id);

CREATE TABLE contact_tags (
  contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  tag_id     INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (contact_id, tag_id)
);
CREATE INDEX contact_tags_tag ON contact_tags(tag_id, contact_id);

-- Durable outbox, written in the same transaction as the change it describes.
-- event_type: contact.created | contact.updated | contact.deleted | contact.tag_added |
-- contact.tag_removed | contact.list_added | contact.list_removed | contact.status_updated
-- contact_id is not a foreign key: contact.deleted outlives its contact.
CREATE TABLE outbox_events (
  id          INTEGER PRIMARY KEY,
  event_type  TEXT NOT NULL,
  contact_id  INTEGER,
  data        TEXT NOT NULL DEFAULT '{}',
  occurred_at BIGINT NOT NULL
);
CREATE INDEX outbox_events_type_id ON outbox_events(event_type, id);
CREATE INDEX outbox_events_contact_id ON outbox_events(contact_id, id);
CREATE INDEX outbox_events_occurred ON outbox_events(occurred_at);

-- Who changed what, through which client, with revisions before/after.
CREATE TABLE audit_log (
  id              INTEGER PRIMARY KEY,
  occurred_at     BIGINT NOT NULL,
  actor_kind      TEXT NOT NULL,   -- oauth | api_key | form | webhook | cli | system
  subject         TEXT NOT NULL DEFAULT '',
  client_id       TEXT NOT NULL DEFAULT '',
  request_id      TEXT NOT NULL DEFAULT '',
  action          TEXT NOT NULL,   -- tool or confirmed action name
  target_type     TEXT NOT NULL DEFAULT '',
  target_ids      TEXT NOT NULL DEFAULT '[]',   -- JSON array of ids
  revision_before INTEGER,
  revision_after  INTEGER,
  details         TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX audit_log_occurred ON audit_log(occurred_at, id);
CREATE INDEX audit_log_subject ON audit_log(subject, id);
CREATE INDEX audit_log_target ON audit_log(target_type, id);

-- Pending destructive/activating actions. The token is stored hashed. status:
-- pending -> used | expired | superseded, or pending -> approved -> used when a person
-- approves through another channel (requires_approval).
CREATE TABLE confirmations (
  id                INTEGER PRIMARY KEY,
  token_hash        TEXT NOT NULL UNIQUE,
  action            TEXT NOT NULL,
  scope             TEXT NOT NULL,
  client_id         TEXT NOT NULL,
  subject           TEXT NOT NULL,
  args              TEXT NOT NULL,      -- canonical JSON
  args_hash         TEXT NOT NULL,      -- hex SHA-256 of args
  revisions         TEXT NOT NULL,      -- JSON object "kind:id" -> revision
  preview           TEXT NOT NULL,      -- JSON shown to the caller
  status            TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending','approved','used','expired','superseded','rejected')),
  requires_approval INTEGER NOT NULL DEFAULT 0,
  approved_by       TEXT,
  approved_at       BIGINT,
  created_at        BIGINT NOT NULL,
  expires_at        BIGINT NOT NULL,
  used_at           BIGINT,
  result            TEXT
);
CREATE INDEX confirmations_status_expires ON confirmations(status, expires_at);
CREATE INDEX confirmations_client_subject ON confirmations(client_id, subject, id);

-- One settings document (id = 1) with a revision.
CREATE TABLE settings (
  id         INTEGER PRIMARY KEY CHECK (id = 1),
  document   TEXT NOT NULL,
  revision   INTEGER NOT NULL DEFAULT 1,
  updated_at BIGINT NOT NULL
);
INSERT INTO settings (id, document, revision, updated_at) VALUES (1, '{}', 1, 0);
