-- Ids are never reused. SQLite gives a new row MAX(id) + 1, so deleting the newest contact
-- (or API key) would hand its id to the next one, and a webhook consumer or an audit row
-- holding the old id would then point at someone else. A delete records the highest id
-- ever used; inserts take the next id above both that and the table's current maximum
-- (store::NextIdSql).
CREATE TABLE id_high_water (
  tbl      TEXT PRIMARY KEY,
  last_id  INTEGER NOT NULL
);

CREATE TRIGGER contacts_id_high_water AFTER DELETE ON contacts BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('contacts', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'contacts';
END;

CREATE TRIGGER api_keys_id_high_water AFTER DELETE ON api_keys BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('api_keys', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'api_keys';
END;
