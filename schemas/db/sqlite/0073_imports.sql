-- Contact imports (src/crm/imports.h): one row per import, leased by the node that runs it
-- (lease_owner, lease_until), with the position it has committed up to (position: a byte
-- offset into the file; line: the physical line there) and one count per row outcome, all
-- written in the same transaction as the batch's contacts. The file is kept in
-- import_chunks (UTF-8 text cut at character boundaries, in order of seq) so that any node
-- can resume it; import_errors holds the rows that were not applied and why.
CREATE TABLE imports (
  id           INTEGER PRIMARY KEY,
  status       TEXT NOT NULL DEFAULT 'queued',
  options      TEXT NOT NULL DEFAULT '{}',
  actor        TEXT NOT NULL DEFAULT '{}',
  delimiter    TEXT NOT NULL DEFAULT ',',
  columns      TEXT NOT NULL DEFAULT '[]',
  bytes_total  BIGINT NOT NULL DEFAULT 0,
  rows_total   BIGINT,
  position     BIGINT NOT NULL DEFAULT 0,
  line         BIGINT NOT NULL DEFAULT 1,
  rows_done    BIGINT NOT NULL DEFAULT 0,
  created      BIGINT NOT NULL DEFAULT 0,
  updated      BIGINT NOT NULL DEFAULT 0,
  unchanged    BIGINT NOT NULL DEFAULT 0,
  skipped      BIGINT NOT NULL DEFAULT 0,
  suppressed   BIGINT NOT NULL DEFAULT 0,
  invalid      BIGINT NOT NULL DEFAULT 0,
  error        TEXT,
  lease_owner  TEXT,
  lease_until  BIGINT,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  finished_at  BIGINT
);
CREATE INDEX imports_status ON imports(status, id);
CREATE TABLE import_chunks (
  import_id  INTEGER NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
  seq        BIGINT NOT NULL,
  start      BIGINT NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (import_id, seq)
);
CREATE TABLE import_errors (
  import_id  INTEGER NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
  line       BIGINT NOT NULL,
  email      TEXT NOT NULL,
  reason     TEXT NOT NULL,
  PRIMARY KEY (import_id, line)
);
