#include "src/crm/dashboard.h"

#include "src/crm/marketing_common.h"
#include "src/crm/reports.h"

namespace crmd::crm::dashboard {

using nlohmann::json;

Result<json> GroupCounts(store::Conn& c, const std::string& sql,
                         const std::vector<store::Value>& params) {
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  json out = json::object();
  for (const auto& r : *rows) {
    std::string key = r.IsNull(0) ? "unknown" : r.Str(0);
    if (key.empty()) key = "unknown";
    out[key] = out.value(key, int64_t{0}) + r.Int(1);
  }
  return out;
}

Result<json> ContactCounts(store::Conn& c) {
  auto by_status = GroupCounts(c, "SELECT status, COUNT(*) FROM contacts GROUP BY status", {});
  if (!by_status) return Fail(by_status.error());
  auto by_type = GroupCounts(c, "SELECT type, COUNT(*) FROM contacts GROUP BY type", {});
  if (!by_type) return Fail(by_type.error());
  int64_t total = 0;
  for (const auto& [k, v] : by_status->items()) total += v.get<int64_t>();
  return json{{"total", total}, {"by_status", *by_status}, {"by_type", *by_type}};
}

Result<json> ContactGrowth(store::Conn& c, int64_t now) {
  auto row = c.QueryOne(
      "SELECT SUM(CASE WHEN created_at >= ? THEN 1 ELSE 0 END), "
      "SUM(CASE WHEN created_at >= ? THEN 1 ELSE 0 END), "
      "SUM(CASE WHEN created_at < ? THEN 1 ELSE 0 END) "
      "FROM contacts WHERE created_at >= ?",
      {now - 7 * 86400, now - 30 * 86400, now - 30 * 86400, now - 60 * 86400});
  if (!row) return Fail(row.error());
  return json{{"last_7_days", (*row)->Int(0)},
              {"last_30_days", (*row)->Int(1)},
              {"previous_30_days", (*row)->Int(2)}};
}

Result<json> FormCounts(store::Conn& c, int limit) {
  auto exists = TableExists(c, "forms");
  if (!exists) return Fail(exists.error());
  if (!*exists) return json{{"available", false}, {"total_generated", 0}, {"top", json::array()}};
  auto total = c.QueryOne("SELECT COALESCE(SUM(generated_contacts), 0), COUNT(*) FROM forms");
  if (!total) return Fail(total.error());
  auto rows = c.Query(
      "SELECT id, name, generated_contacts FROM forms ORDER BY generated_contacts DESC, id LIMIT ?",
      {static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  json top = json::array();
  for (const auto& r : *rows) {
    top.push_back({{"id", r.Int(0)}, {"name", r.Str(1)}, {"generated_contacts", r.Int(2)}});
  }
  return json{{"available", true},
              {"form_count", (*total)->Int(1)},
              {"total_generated", (*total)->Int(0)},
              {"top", top}};
}

Result<json> CampaignSummary(store::Conn& c, int limit) {
  auto by = GroupCounts(c, "SELECT status, COUNT(*) FROM campaigns GROUP BY status", {});
  if (!by) return Fail(by.error());
  auto rows = c.Query(
      "SELECT id, name, status, send_at, audience_size FROM campaigns "
      "WHERE status IN ('scheduled', 'sending') ORDER BY id DESC LIMIT ?",
      {static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  json active = json::array();
  for (const auto& r : *rows) {
    active.push_back({{"id", r.Int(0)},
                      {"name", r.Str(1)},
                      {"status", r.Str(2)},
                      {"send_at", TimeJson(r.OptInt(3))},
                      {"audience_size", r.Int(4)}});
  }
  return json{{"by_status", *by}, {"active", active}};
}

Result<json> AutomationSummary(store::Conn& c, int limit) {
  auto by = GroupCounts(c, "SELECT status, COUNT(*) FROM automations GROUP BY status", {});
  if (!by) return Fail(by.error());
  auto rows = c.Query(
      "SELECT a.id, a.name, a.trigger_type, "
      "(SELECT COUNT(*) FROM automation_enrolments e WHERE e.automation_id = a.id) "
      "FROM automations a WHERE a.status = 'active' ORDER BY a.id DESC LIMIT ?",
      {static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  json active = json::array();
  for (const auto& r : *rows) {
    active.push_back(
        {{"id", r.Int(0)}, {"name", r.Str(1)}, {"trigger", r.Str(2)}, {"enrolments", r.Int(3)}});
  }
  return json{{"by_status", *by}, {"active", active}};
}

Result<json> SequenceSummary(store::Conn& c) {
  auto by = GroupCounts(c, "SELECT status, COUNT(*) FROM sequences GROUP BY status", {});
  if (!by) return Fail(by.error());
  return json{{"by_status", *by}};
}

}  // namespace crmd::crm::dashboard
