#include "src/crm/dashboard.h"

#include "src/store/schema_info.h"

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
  auto exists = store::TableExists(c, "forms");
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
  // Delivery figures come from the counters kept as messages go out (campaign_stats).
  auto rows = c.Query(
      "SELECT k.id, k.name, k.status, k.send_at, k.audience_size, COALESCE(s.sent, 0), "
      "COALESCE(s.failed, 0), COALESCE(s.opened, 0), COALESCE(s.clicked, 0) FROM campaigns k "
      "LEFT JOIN campaign_stats s ON s.campaign_id = k.id "
      "WHERE k.status IN ('scheduled', 'sending') ORDER BY k.id DESC LIMIT ?",
      {static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  json active = json::array();
  for (const auto& r : *rows) {
    active.push_back({{"id", r.Int(0)},
                      {"name", r.Str(1)},
                      {"status", r.Str(2)},
                      {"send_at", TimeJson(r.OptInt(3))},
                      {"audience_size", r.Int(4)},
                      {"sent", r.Int(5)},
                      {"failed", r.Int(6)},
                      {"opened", r.Int(7)},
                      {"clicked", r.Int(8)}});
  }
  auto totals = c.QueryOne(
      "SELECT COALESCE(SUM(sent), 0), COALESCE(SUM(failed), 0), COALESCE(SUM(bounced), 0), "
      "COALESCE(SUM(complained), 0), COALESCE(SUM(unsubscribed), 0), COALESCE(SUM(opened), 0), "
      "COALESCE(SUM(clicked), 0) FROM campaign_stats",
      {});
  if (!totals) return Fail(totals.error());
  json delivery = json::object();
  if (*totals) {
    const auto& t = **totals;
    delivery = {{"sent", t.Int(0)},         {"failed", t.Int(1)},  {"bounced", t.Int(2)},
                {"complained", t.Int(3)},   {"unsubscribed", t.Int(4)},
                {"opened", t.Int(5)},       {"clicked", t.Int(6)}};
  }
  return json{{"by_status", *by}, {"active", active}, {"delivery", delivery}};
}

Result<json> AutomationSummary(store::Conn& c, int limit) {
  auto by = GroupCounts(c, "SELECT status, COUNT(*) FROM automations GROUP BY status", {});
  if (!by) return Fail(by.error());
  auto rows = c.Query(
      "SELECT a.id, a.name, a.trigger_type, "
      "(SELECT COALESCE(MAX(s.enrolled), 0) FROM automation_stats s WHERE s.automation_id = a.id) "
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

Result<std::vector<std::pair<int64_t, int64_t>>> NewContactsPerBucket(store::Conn& c, int64_t from,
                                                                      int64_t to, int64_t bucket) {
  // The bucket is named once in a derived table: PostgreSQL does not match a GROUP BY
  // expression whose parameters are different placeholders.
  auto rows = c.Query(
      "SELECT b, COUNT(*) FROM (SELECT (created_at - ?) / ? AS b FROM contacts "
      "WHERE created_at >= ? AND created_at < ?) AS buckets GROUP BY b",
      {from, bucket, from, to});
  if (!rows) return Fail(rows.error());
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& r : *rows) out.emplace_back(r.Int(0), r.Int(1));
  return out;
}

Result<int64_t> ContactsCreatedBefore(store::Conn& c, int64_t before) {
  auto row = c.QueryOne("SELECT COUNT(*) FROM contacts WHERE created_at < ?", {before});
  if (!row) return Fail(row.error());
  return *row ? (*row)->Int(0) : 0;
}

Result<json> NewContactsBySource(store::Conn& c, int64_t from, int64_t to) {
  return GroupCounts(
      c, "SELECT source, COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ? GROUP BY source",
      {from, to});
}

Result<json> NewContactsByStatus(store::Conn& c, int64_t from, int64_t to) {
  return GroupCounts(
      c, "SELECT status, COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ? GROUP BY status",
      {from, to});
}

Result<json> RecipientsByStatus(store::Conn& c, int64_t campaign_id) {
  return GroupCounts(
      c, "SELECT status, COUNT(*) FROM campaign_recipients WHERE campaign_id = ? GROUP BY status",
      {campaign_id});
}

Result<std::optional<AutomationHead>> FindAutomationHead(store::Conn& c, int64_t id) {
  auto row = c.QueryOne("SELECT name, status, steps, trigger_type FROM automations WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<AutomationHead>{};
  return std::optional<AutomationHead>(
      AutomationHead{(*row)->Str(0), (*row)->Str(1), (*row)->Str(2), (*row)->Str(3)});
}

}  // namespace crmd::crm::dashboard
