#include "src/marketing/reporting_repo.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>

#include "src/marketing/common.h"
#include "src/marketing/reports.h"
#include "src/store/schema_info.h"

namespace crmd::marketing::reporting_repo {

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

namespace {

constexpr int64_t kDay = 86400;
// An upper bound past any created_at, for "created at or after".
constexpr int64_t kFarFuture = int64_t{1} << 50;

int64_t DayFloor(int64_t t) { return t / kDay * kDay; }
int64_t DayCeil(int64_t t) { return DayFloor(t + kDay - 1); }

// [from, to) split at day boundaries: whole days [day_from, day_to) read from the counters
// (contact_daily), and the parts of a day at either end (at most a day each) counted from
// contacts through contacts_created_id.
struct DaySplit {
  int64_t day_from = 0, day_to = 0;                // unix seconds, multiples of kDay
  std::vector<std::pair<int64_t, int64_t>> edges;  // [from, to) ranges to count from contacts
};
DaySplit SplitAtDays(int64_t from, int64_t to) {
  DaySplit s;
  s.day_from = DayCeil(from);
  s.day_to = DayFloor(to);
  if (s.day_from >= s.day_to) {
    s.day_from = s.day_to = 0;
    if (from < to) s.edges.emplace_back(from, to);
    return s;
  }
  if (from < s.day_from) s.edges.emplace_back(from, s.day_from);
  if (s.day_to < to) s.edges.emplace_back(s.day_to, to);
  return s;
}

// Contacts created in [from, to).
Result<int64_t> CreatedBetween(store::Conn& c, int64_t from, int64_t to) {
  DaySplit s = SplitAtDays(from, to);
  int64_t n = 0;
  if (s.day_from < s.day_to) {
    auto row =
        c.QueryOne("SELECT COALESCE(SUM(n), 0) FROM contact_daily WHERE day >= ? AND day < ?",
                   {s.day_from / kDay, s.day_to / kDay});
    if (!row) return Fail(row.error());
    n += (*row)->Int(0);
  }
  for (auto [a, b] : s.edges) {
    auto row = c.QueryOne("SELECT COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ?",
                          {a, b});
    if (!row) return Fail(row.error());
    n += (*row)->Int(0);
  }
  return n;
}

}  // namespace

Status RebuildCounters(store::Conn& c) {
  // Adds gathered earlier in this transaction are written by the connection before the
  // first DELETE below (Conn::AddTo), so they cannot land on top of the recount.
  for (const char* sql : {"DELETE FROM contact_totals", "DELETE FROM contact_daily",
                          "DELETE FROM group_member_counts",
                          "INSERT INTO contact_totals (dim, val, n) "
                          "SELECT 'status', status, COUNT(*) FROM contacts GROUP BY status",
                          "INSERT INTO contact_totals (dim, val, n) "
                          "SELECT 'type', type, COUNT(*) FROM contacts GROUP BY type",
                          "INSERT INTO contact_daily (day, status, source, n) "
                          "SELECT created_at / 86400, status, source, COUNT(*) FROM contacts "
                          "GROUP BY created_at / 86400, status, source",
                          "INSERT INTO group_member_counts (kind, group_id, status, n) "
                          "SELECT 'list', m.list_id, k.status, COUNT(*) FROM contact_lists m "
                          "JOIN contacts k ON k.id = m.contact_id WHERE m.state = 'subscribed' "
                          "GROUP BY m.list_id, k.status",
                          "INSERT INTO group_member_counts (kind, group_id, status, n) "
                          "SELECT 'tag', m.tag_id, k.status, COUNT(*) FROM contact_tags m "
                          "JOIN contacts k ON k.id = m.contact_id GROUP BY m.tag_id, k.status"}) {
    if (auto r = c.Exec(sql); !r) return Fail(r.error());
  }
  return Ok();
}

Result<json> ContactCounts(store::Conn& c) {
  // Counters kept by triggers as contacts change (migration 0053): a few rows, no scan.
  auto by_status =
      GroupCounts(c, "SELECT val, n FROM contact_totals WHERE dim = 'status' AND n <> 0", {});
  if (!by_status) return Fail(by_status.error());
  auto by_type =
      GroupCounts(c, "SELECT val, n FROM contact_totals WHERE dim = 'type' AND n <> 0", {});
  if (!by_type) return Fail(by_type.error());
  int64_t total = 0;
  for (const auto& [k, v] : by_status->items()) total += v.get<int64_t>();
  return json{{"total", total}, {"by_status", *by_status}, {"by_type", *by_type}};
}

Result<json> ContactGrowth(store::Conn& c, int64_t now) {
  auto last_7 = CreatedBetween(c, now - 7 * kDay, kFarFuture);
  if (!last_7) return Fail(last_7.error());
  auto last_30 = CreatedBetween(c, now - 30 * kDay, kFarFuture);
  if (!last_30) return Fail(last_30.error());
  auto previous_30 = CreatedBetween(c, now - 60 * kDay, now - 30 * kDay);
  if (!previous_30) return Fail(previous_30.error());
  return json{
      {"last_7_days", *last_7}, {"last_30_days", *last_30}, {"previous_30_days", *previous_30}};
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
    delivery = {{"sent", t.Int(0)},       {"failed", t.Int(1)},       {"bounced", t.Int(2)},
                {"complained", t.Int(3)}, {"unsubscribed", t.Int(4)}, {"opened", t.Int(5)},
                {"clicked", t.Int(6)}};
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

Result<NewContacts> NewContactsIn(store::Conn& c, int64_t from, int64_t to, int64_t bucket) {
  NewContacts out;
  const int64_t first_day = DayFloor(from);
  const int64_t end_day = DayCeil(to);
  // Whole days wholly inside [from, to) count into by_source / by_status from the
  // counters; the days at either end do only when from / to fall on midnight.
  const int64_t inner_from = DayCeil(from), inner_to = DayFloor(to);
  auto rows = c.Query("SELECT day, status, source, n FROM contact_daily WHERE day >= ? AND day < ?",
                      {first_day / kDay, end_day / kDay});
  if (!rows) return Fail(rows.error());
  // prefix[i]: contacts created on the days before first_day + i days.
  std::vector<int64_t> prefix((end_day - first_day) / kDay + 1, 0);
  // Summed in maps and made JSON once at the end: a 365-day range at 1,000,000 contacts
  // is about 11,000 rows, and a JSON object's lookup and assignment per row cost more
  // than the read (docs/performance.md).
  std::map<std::string, int64_t, std::less<>> by_status, by_source;
  auto add = [](std::map<std::string, int64_t, std::less<>>& into, std::string key, int64_t n) {
    if (key.empty()) key = "unknown";  // as GroupCounts names an empty source
    auto it = into.find(key);
    if (it == into.end())
      into.emplace(std::move(key), n);
    else
      it->second += n;
  };
  for (auto& r : *rows) {
    const int64_t day = r.Int(0) * kDay, n = r.Int(3);
    prefix[(day - first_day) / kDay + 1] += n;
    if (day >= inner_from && day < inner_to) {
      add(by_status, r.TakeStr(1), n);
      add(by_source, r.TakeStr(2), n);
    }
  }
  for (size_t i = 1; i < prefix.size(); ++i) prefix[i] += prefix[i - 1];
  for (auto [a, b] : SplitAtDays(from, to).edges) {
    auto part = c.Query(
        "SELECT status, source, COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ? "
        "GROUP BY status, source",
        {a, b});
    if (!part) return Fail(part.error());
    for (auto& r : *part) {
      add(by_status, r.TakeStr(0), r.Int(2));
      add(by_source, r.TakeStr(1), r.Int(2));
    }
  }
  for (auto& [k, n] : by_status) out.by_status[k] = n;
  for (auto& [k, n] : by_source) out.by_source[k] = n;
  // Contacts created in [first_day, edge). An edge inside a day counts the shorter part
  // of its day from contacts: the part before it, added to the days before, or the part
  // after it, taken from the days up to the next midnight (each bucket edge of a report
  // that starts mid-day falls mid-day).
  auto before_edge = [&](int64_t edge) -> Result<int64_t> {
    int64_t day = DayFloor(edge);
    size_t d = static_cast<size_t>((day - first_day) / kDay);
    if (day == edge) return prefix[d];
    const bool from_midnight = edge - day <= kDay / 2;
    auto row = c.QueryOne("SELECT COUNT(*) FROM contacts WHERE created_at >= ? AND created_at < ?",
                          {from_midnight ? day : edge, from_midnight ? edge : day + kDay});
    if (!row) return Fail(row.error());
    return from_midnight ? prefix[d] + (*row)->Int(0) : prefix[d + 1] - (*row)->Int(0);
  };
  auto lower = before_edge(from);
  if (!lower) return Fail(lower.error());
  const int64_t at_from = *lower;
  for (int64_t i = 0, start = from; start < to; ++i, start += bucket) {
    auto upper = before_edge(std::min(start + bucket, to));
    if (!upper) return Fail(upper.error());
    if (*upper != *lower) out.per_bucket.emplace_back(i, *upper - *lower);
    lower = upper;
  }
  // Before `from`: all contacts less those created since (in range, and from `to` on).
  auto total = c.QueryOne("SELECT COALESCE(SUM(n), 0) FROM contact_totals WHERE dim = 'status'");
  if (!total) return Fail(total.error());
  auto after = CreatedBetween(c, to, kFarFuture);
  if (!after) return Fail(after.error());
  out.created_before = (*total)->Int(0) - (*lower - at_from) - *after;
  return out;
}

Result<json> RecipientsByStatus(store::Conn& c, int64_t campaign_id) {
  return GroupCounts(
      c, "SELECT status, COUNT(*) FROM campaign_recipients WHERE campaign_id = ? GROUP BY status",
      {campaign_id});
}

Result<std::optional<AutomationHead>> FindAutomationHead(store::Conn& c, int64_t id) {
  auto row =
      c.QueryOne("SELECT name, status, steps, trigger_type FROM automations WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<AutomationHead>{};
  return std::optional<AutomationHead>(
      AutomationHead{(*row)->Str(0), (*row)->Str(1), (*row)->Str(2), (*row)->Str(3)});
}

}  // namespace crmd::marketing::reporting_repo
