#include "src/webhooks/endpoints_repo.h"

#include <nlohmann/json.hpp>
#include <string_view>

namespace crmd::webhooks::endpoints_repo {
namespace {

constexpr std::string_view kColumns =
    "id, url, events, description, enabled, consecutive_failures, disabled_reason, created_at, "
    "updated_at, failing_since, disabled_at";

Endpoint FromRow(const store::Row& r) {
  Endpoint e;
  e.id = r.Int(0);
  e.url = r.Str(1);
  auto events = nlohmann::json::parse(r.Str(2), nullptr, false);
  if (events.is_array())
    for (const auto& v : events)
      if (v.is_string()) e.events.push_back(v.get<std::string>());
  e.description = r.Str(3);
  e.enabled = r.Int(4) != 0;
  e.consecutive_failures = r.Int(5);
  e.disabled_reason = r.OptStr(6);
  e.created_at = r.Int(7);
  e.updated_at = r.Int(8);
  e.failing_since = r.OptInt(9);
  e.disabled_at = r.OptInt(10);
  return e;
}

}  // namespace

Result<int64_t> Insert(store::Conn& c, const std::string& url, const std::string& secret,
                       const std::string& events_json, const std::string& description, bool enabled,
                       int64_t now) {
  return c.InsertReturningId(
      "INSERT INTO webhook_endpoints (id, url, secret, events, description, enabled, created_at, "
      "updated_at) VALUES (" +
          store::NextIdSql("webhook_endpoints") + ", ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      {url, secret, events_json, description, int64_t{enabled ? 1 : 0}, now, now});
}

Result<std::vector<Endpoint>> List(store::Conn& c) {
  auto rows = c.Query("SELECT " + std::string(kColumns) + " FROM webhook_endpoints ORDER BY id");
  if (!rows) return Fail(rows.error());
  std::vector<Endpoint> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<StateCounts> CountByState(store::Conn& c) {
  // An operator's disable records kOperatorDisabled as the reason (older rows: none); any
  // other reason is the failure rule's.
  const std::string op(kOperatorDisabled);
  auto row = c.QueryOne(
      "SELECT COALESCE(SUM(CASE WHEN enabled = 1 THEN 1 ELSE 0 END), 0), "
      "COALESCE(SUM(CASE WHEN enabled = 0 AND (disabled_reason IS NULL OR disabled_reason = ?) "
      "THEN 1 ELSE 0 END), 0), "
      "COALESCE(SUM(CASE WHEN enabled = 0 AND disabled_reason IS NOT NULL AND disabled_reason <> ? "
      "THEN 1 ELSE 0 END), 0) "
      "FROM webhook_endpoints",
      {op, op});
  if (!row) return Fail(row.error());
  return StateCounts{
      .enabled = (*row)->Int(0), .disabled = (*row)->Int(1), .failing_disabled = (*row)->Int(2)};
}

Result<std::optional<Endpoint>> Find(store::Conn& c, int64_t id) {
  auto row =
      c.QueryOne("SELECT " + std::string(kColumns) + " FROM webhook_endpoints WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Endpoint>{};
  return std::optional<Endpoint>(FromRow(**row));
}

Result<bool> Exists(store::Conn& c, int64_t id) {
  auto exists = c.QueryOne("SELECT id FROM webhook_endpoints WHERE id = ?", {id});
  if (!exists) return Fail(exists.error());
  return exists->has_value();
}

Status SetUrl(store::Conn& c, int64_t id, const std::string& url) {
  return Discard(c.Exec("UPDATE webhook_endpoints SET url = ? WHERE id = ?", {url, id}));
}

Status SetEvents(store::Conn& c, int64_t id, const std::string& events_json) {
  return Discard(c.Exec("UPDATE webhook_endpoints SET events = ? WHERE id = ?", {events_json, id}));
}

Status SetDescription(store::Conn& c, int64_t id, const std::string& description) {
  return Discard(
      c.Exec("UPDATE webhook_endpoints SET description = ? WHERE id = ?", {description, id}));
}

Status SetEnabled(store::Conn& c, int64_t id, bool enabled, int64_t now) {
  return Discard(enabled
                     ? c.Exec("UPDATE webhook_endpoints SET enabled = 1, consecutive_failures = 0, "
                              "failing_since = NULL, disabled_reason = NULL, disabled_at = NULL "
                              "WHERE id = ?",
                              {id})
                     : c.Exec("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, "
                              "disabled_at = ? WHERE id = ?",
                              {std::string(kOperatorDisabled), now, id}));
}

Status SetUpdatedAt(store::Conn& c, int64_t id, int64_t now) {
  return Discard(c.Exec("UPDATE webhook_endpoints SET updated_at = ? WHERE id = ?", {now, id}));
}

Result<bool> Delete(store::Conn& c, int64_t id) {
  // Explicit, in case the connection runs without foreign-key enforcement.
  if (auto r = c.Exec("DELETE FROM webhook_attempts WHERE delivery_id IN "
                      "(SELECT id FROM webhook_deliveries WHERE endpoint_id = ?)",
                      {id});
      !r)
    return Fail(r.error());
  if (auto r = c.Exec("DELETE FROM webhook_deliveries WHERE endpoint_id = ?", {id}); !r)
    return Fail(r.error());
  auto n = c.Exec("DELETE FROM webhook_endpoints WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Result<std::vector<Subscription>> Subscribed(store::Conn& c) {
  // An endpoint the worker disabled after failures keeps queueing (its deliveries wait
  // until it is enabled again, within the retry horizon); one an operator disabled does
  // not.
  auto endpoints = c.Query(
      "SELECT id, events FROM webhook_endpoints WHERE enabled = 1 OR "
      "(disabled_reason IS NOT NULL AND disabled_reason <> ?)",
      {std::string(kOperatorDisabled)});
  if (!endpoints) return Fail(endpoints.error());
  std::vector<Subscription> subs;
  for (const auto& e : *endpoints) {
    Subscription s{e.Int(0), {}};
    auto j = nlohmann::json::parse(e.Str(1), nullptr, false);
    if (j.is_array())
      for (const auto& v : j)
        if (v.is_string()) s.events.push_back(v.get<std::string>());
    subs.push_back(std::move(s));
  }
  return subs;
}

Result<std::optional<int64_t>> RecordSuccess(store::Conn& c, int64_t id) {
  auto row = c.QueryOne("SELECT failing_since FROM webhook_endpoints WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<int64_t>{};
  std::optional<int64_t> since = (*row)->OptInt(0);
  if (auto r = c.Exec("UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL "
                      "WHERE id = ? AND (consecutive_failures <> 0 OR failing_since IS NOT NULL)",
                      {id});
      !r)
    return Fail(r.error());
  return since;
}

Result<FailureRun> RecordFailure(store::Conn& c, int64_t id, int64_t now) {
  auto ep = c.QueryOne(
      "UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1, "
      "failing_since = COALESCE(failing_since, ?) "
      "WHERE id = ? RETURNING consecutive_failures, failing_since",
      {now, id});
  if (!ep) return Fail(ep.error());
  if (!*ep) return FailureRun{};
  return FailureRun{.count = (*ep)->Int(0), .since = (*ep)->Int(1)};
}

Result<bool> DisableForFailures(store::Conn& c, int64_t id, const std::string& reason,
                                int64_t now) {
  auto n = c.Exec(
      "UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, disabled_at = ?, "
      "updated_at = ? WHERE id = ? AND enabled = 1",
      {reason, now, now, id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Result<std::optional<std::string>> SecretForUrl(store::Conn& c, const std::string& url) {
  auto row =
      c.QueryOne("SELECT secret FROM webhook_endpoints WHERE url = ? ORDER BY id LIMIT 1", {url});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<std::string>{};
  return std::optional<std::string>((*row)->Str(0));
}

}  // namespace crmd::webhooks::endpoints_repo
