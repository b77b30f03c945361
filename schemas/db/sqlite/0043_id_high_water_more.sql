-- Never reuse ids (see 0041) for the other records that integrators, assistants, audit
-- rows and delivery logs refer to by id.
CREATE TRIGGER lists_id_high_water AFTER DELETE ON lists BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('lists', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'lists';
END;
CREATE TRIGGER tags_id_high_water AFTER DELETE ON tags BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('tags', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'tags';
END;
CREATE TRIGGER campaigns_id_high_water AFTER DELETE ON campaigns BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('campaigns', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'campaigns';
END;
CREATE TRIGGER automations_id_high_water AFTER DELETE ON automations BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('automations', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'automations';
END;
CREATE TRIGGER sequences_id_high_water AFTER DELETE ON sequences BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('sequences', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'sequences';
END;
CREATE TRIGGER forms_id_high_water AFTER DELETE ON forms BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('forms', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'forms';
END;
CREATE TRIGGER webhook_endpoints_id_high_water AFTER DELETE ON webhook_endpoints BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('webhook_endpoints', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'webhook_endpoints';
END;
CREATE TRIGGER incoming_webhooks_id_high_water AFTER DELETE ON incoming_webhooks BEGIN
  INSERT OR IGNORE INTO id_high_water (tbl, last_id) VALUES ('incoming_webhooks', 0);
  UPDATE id_high_water SET last_id = MAX(last_id, OLD.id) WHERE tbl = 'incoming_webhooks';
END;
