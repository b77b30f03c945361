-- Human approvals (docs/mcp.md "Human approval"): a confirmation whose action the approval
-- policy reserves for the person carries one approval. The id is random (it appears in
-- the approval URL); the row is bound to the confirmation (and so to its token), the OAuth
-- client, the subject (the grant's user, the only person who may decide), the canonical
-- arguments' hash and the revisions the preview saw, and expires with the preview.
-- status: pending | approved | denied. decided_by is the deciding person ("user:<id>").
CREATE TABLE approvals (
  id               TEXT PRIMARY KEY,
  confirmation_id  BIGINT NOT NULL UNIQUE,
  action           TEXT NOT NULL,
  client_id        TEXT NOT NULL,
  subject          TEXT NOT NULL,
  args_hash        TEXT NOT NULL,
  revisions        TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending','approved','denied')),
  decided_by       TEXT,
  decided_at       BIGINT,
  created_at       BIGINT NOT NULL,
  expires_at       BIGINT NOT NULL
);
CREATE INDEX approvals_subject_status ON approvals(subject, status, expires_at);
CREATE INDEX approvals_expires ON approvals(expires_at);
