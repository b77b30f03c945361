-- PostgreSQL twin of schemas/db/sqlite/0041_id_high_water.sql (same number, same tables and indexes).
-- Ids are never reused. SQLite gives a new row MAX(id) + 1, so deleting the newest contact
-- (or API key) would hand its id to the next one, and a webhook consumer or an audit row
-- holding the old id would then point at someone else. A delete records the highest id
-- ever used; inserts take the next id above both that and the table's current maximum
-- (store::NextIdSql).
CREATE TABLE id_high_water (
  tbl      TEXT PRIMARY KEY,
  last_id  BIGINT NOT NULL
);

-- PostgreSQL: one trigger function for every table (TG_TABLE_NAME names the row in
-- id_high_water); the SQLite migration spells the same logic out per table.
CREATE FUNCTION crmd_id_high_water() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO id_high_water (tbl, last_id) VALUES (TG_TABLE_NAME, OLD.id)
    ON CONFLICT (tbl) DO UPDATE SET last_id = GREATEST(id_high_water.last_id, EXCLUDED.last_id);
  RETURN OLD;
END
$$;

CREATE TRIGGER contacts_id_high_water AFTER DELETE ON contacts
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();

CREATE TRIGGER api_keys_id_high_water AFTER DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
