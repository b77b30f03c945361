-- The suppression list (src/crm/suppression.h, docs/crm.md "Suppression list"): addresses
-- and domains that are never made `subscribed` again and never mailed, whatever a contact
-- row says, until the person's own confirmed double opt-in or an administrator's removal.
-- An address is kept only as address_hash, the hex HMAC-SHA256 of the normalised address
-- under the server secret "suppression_address_v1" (table server_secrets), so the entry of
-- an erased contact does not hold the address in clear; a domain is kept as its ASCII
-- (punycode) form. contact_id points at the live contact that holds the address, if any
-- (what the activation preview counts); it is cleared when that contact goes, the entry
-- stays.
CREATE TABLE suppressions (
  id            INTEGER PRIMARY KEY,
  address_hash  TEXT,
  domain        TEXT,
  reason        TEXT NOT NULL
                CHECK (reason IN ('hard_bounce','complaint','unsubscribed','erased','manual')),
  source        TEXT NOT NULL DEFAULT '',
  contact_id    BIGINT REFERENCES contacts(id) ON DELETE SET NULL,
  created_at    BIGINT NOT NULL,
  CHECK ((address_hash IS NULL) <> (domain IS NULL))
);
CREATE UNIQUE INDEX suppressions_address ON suppressions(address_hash);
CREATE UNIQUE INDEX suppressions_domain ON suppressions(domain);
CREATE INDEX suppressions_contact ON suppressions(contact_id);

-- Ids are never reused (see 0041).
CREATE TRIGGER suppressions_id_high_water AFTER DELETE ON suppressions BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('suppressions', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'suppressions';
END;

-- The contacts that were already unsubscribed, bounced or complained before this
-- migration: SQL cannot compute the keyed hash, so crmd enters them at its next start
-- (SuppressionList::Backfill) and empties this table as it goes.
CREATE TABLE suppression_backfill (
  contact_id  BIGINT PRIMARY KEY
);
INSERT INTO suppression_backfill (contact_id)
  SELECT id FROM contacts WHERE status IN ('unsubscribed', 'bounced', 'complained');
