-- PostgreSQL twin of schemas/db/sqlite/0043_id_high_water_more.sql (same number, same tables and indexes).
-- Never reuse ids (see 0041) for the other records that integrators, assistants, audit
-- rows and delivery logs refer to by id.
CREATE TRIGGER lists_id_high_water AFTER DELETE ON lists
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
CREATE TRIGGER tags_id_high_water AFTER DELETE ON tags
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
CREATE TRIGGER campaigns_id_high_water AFTER DELETE ON campaigns
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
CREATE TRIGGER automations_id_high_water AFTER DELETE ON automations
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
CREATE TRIGGER sequences_id_high_water AFTER DELETE ON sequences
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
CREATE TRIGGER forms_id_high_water AFTER DELETE ON forms
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
CREATE TRIGGER webhook_endpoints_id_high_water AFTER DELETE ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
CREATE TRIGGER incoming_webhooks_id_high_water AFTER DELETE ON incoming_webhooks
  FOR EACH ROW EXECUTE FUNCTION crmd_id_high_water();
