#include "src/webhooks/deliveries_repo.h"

#include <algorithm>
#include <string_view>
#include <variant>

namespace crmd::webhooks::deliveries_repo {
namespace {

constexpr std::string_view kColumns =
    "id, event_id, endpoint_id, event_type, contact_id, status, attempts, next_attempt_at, "
    "last_status_code, last_error, created_at, updated_at, completed_at";

Delivery FromRow(const store::Row& r) {
  Delivery d;
  d.id = r.Int(0);
  d.event_id = r.Int(1);
  d.endpoint_id = r.Int(2);
  d.event_type = r.Str(3);
  d.contact_id = r.OptInt(4);
  d.status = r.Str(5);
  d.attempts = r.Int(6);
  d.next_attempt_at = r.Int(7);
  d.last_status_code = r.OptInt(8);
  d.last_error = r.OptStr(9);
  d.created_at = r.Int(10);
  d.updated_at = r.Int(11);
  d.completed_at = r.OptInt(12);
  return d;
}

}  // namespace

Status InsertPending(store::Conn& c, int64_t event_id, int64_t endpoint_id,
                     const std::string& event_type, std::optional<int64_t> contact_id,
                     const std::string& payload, int64_t now, int64_t retry_until,
                     std::optional<std::string> traceparent,
                     std::optional<std::string> tracestate) {
  return Discard(c.Exec(
      "INSERT INTO webhook_deliveries (event_id, endpoint_id, event_type, contact_id, payload, "
      "status, attempts, next_attempt_at, retry_until, created_at, updated_at, traceparent, "
      "tracestate) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (event_id, endpoint_id) DO NOTHING",
      {event_id, endpoint_id, event_type, store::Opt(contact_id), payload, now, retry_until, now,
       now, store::Opt(traceparent), store::Opt(tracestate)}));
}

Result<std::vector<Work>> LeaseCandidates(store::Conn& c, int64_t now, int limit) {
  auto rows = c.Query(
      "SELECT d.id, d.endpoint_id, d.event_id, d.attempts, e.url, e.secret, d.payload, "
      "d.traceparent, d.tracestate "
      "FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id "
      "WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND e.enabled = 1 "
      "AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id "
      "  AND p.contact_id = d.contact_id AND p.status = 'pending' AND p.event_id < d.event_id) "
      "ORDER BY d.next_attempt_at, d.id LIMIT ?" +
          store::SkipLocked(c.dialect(), "d"),
      {now, int64_t{limit}});
  if (!rows) return Fail(rows.error());
  std::vector<Work> out;
  for (const auto& r : *rows)
    out.push_back(Work{.delivery_id = r.Int(0),
                       .endpoint_id = r.Int(1),
                       .event_id = r.Int(2),
                       .attempt = r.Int(3) + 1,
                       .url = r.Str(4),
                       .secret = r.Str(5),
                       .payload = r.Str(6),
                       .traceparent = r.Str(7),
                       .tracestate = r.Str(8)});
  return out;
}

Result<store::QueueStats> QueueStats(store::Conn& c, int64_t now) {
  // Both counts walk the (status, next_attempt_at) index.
  auto pending = c.QueryOne("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'pending'");
  if (!pending) return Fail(pending.error());
  auto due = c.QueryOne(
      "SELECT COUNT(*), MIN(d.next_attempt_at) FROM webhook_deliveries d "
      "JOIN webhook_endpoints e ON e.id = d.endpoint_id "
      "WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND e.enabled = 1",
      {now});
  if (!due) return Fail(due.error());
  store::QueueStats s{.pending = (*pending)->Int(0), .due = (*due)->Int(0)};
  if (s.due > 0) s.oldest_due_at = (*due)->Int(1);
  return s;
}

Result<bool> Lease(store::Conn& c, int64_t id, int64_t now, int64_t lease_until) {
  // The guard makes the lease exclusive when several workers race for the same row.
  auto leased = c.Exec(
      "UPDATE webhook_deliveries SET next_attempt_at = ?, lease_until = ?, updated_at = ? "
      "WHERE id = ? AND status = 'pending' AND next_attempt_at <= ?",
      {lease_until, lease_until, now, id, now});
  if (!leased) return Fail(leased.error());
  return *leased != 0;
}

Result<std::optional<int64_t>> FindRetryUntil(store::Conn& c, int64_t id) {
  auto row = c.QueryOne("SELECT status, retry_until FROM webhook_deliveries WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<int64_t>{};
  return std::optional<int64_t>((*row)->Int(1));
}

Status InsertAttempt(store::Conn& c, int64_t delivery_id, int64_t attempt, int64_t started_at,
                     std::optional<int64_t> status_code, std::optional<std::string> error,
                     int64_t duration_ms) {
  return Discard(
      c.Exec("INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, error, "
             "duration_ms) VALUES (?, ?, ?, ?, ?, ?)",
             {delivery_id, attempt, started_at, store::Opt(status_code),
              error ? store::Value(*error) : store::Null(), duration_ms}));
}

Status MarkSucceeded(store::Conn& c, int64_t id, int64_t attempt,
                     std::optional<int64_t> status_code, int64_t now) {
  return Discard(c.Exec(
      "UPDATE webhook_deliveries SET status = 'succeeded', attempts = ?, last_status_code = ?, "
      "last_error = NULL, lease_until = NULL, updated_at = ?, completed_at = ? WHERE id = ?",
      {attempt, store::Opt(status_code), now, now, id}));
}

Status MarkFailed(store::Conn& c, int64_t id, int64_t attempt, std::optional<int64_t> status_code,
                  const std::string& error, int64_t now) {
  return Discard(
      c.Exec("UPDATE webhook_deliveries SET status = 'failed', attempts = ?, "
             "last_status_code = ?, last_error = ?, lease_until = NULL, updated_at = ?, "
             "completed_at = ? WHERE id = ?",
             {attempt, store::Opt(status_code), error, now, now, id}));
}

Status ScheduleRetry(store::Conn& c, int64_t id, int64_t attempt,
                     std::optional<int64_t> status_code, const std::string& error,
                     int64_t next_attempt_at, int64_t now) {
  return Discard(
      c.Exec("UPDATE webhook_deliveries SET attempts = ?, last_status_code = ?, "
             "last_error = ?, next_attempt_at = ?, lease_until = NULL, updated_at = ? "
             "WHERE id = ?",
             {attempt, store::Opt(status_code), error, next_attempt_at, now, id}));
}

Result<std::vector<Delivery>> List(store::Conn& c, const DeliveryFilter& f) {
  // A whole literal to start from: GCC 12 reports a false -Warray-bounds on concatenation.
  std::string sql(
      "SELECT id, event_id, endpoint_id, event_type, contact_id, status, attempts, "
      "next_attempt_at, last_status_code, last_error, created_at, updated_at, completed_at "
      "FROM webhook_deliveries WHERE 1 = 1");
  // Values built in place: GCC 12 reports a false -Wmaybe-uninitialized on moving one in.
  std::vector<store::Value> params;
  params.reserve(4);
  if (f.endpoint_id) {
    sql += " AND endpoint_id = ?";
    params.emplace_back(std::in_place_type<int64_t>, *f.endpoint_id);
  }
  if (f.status) {
    sql += " AND status = ?";
    params.emplace_back(std::in_place_type<std::string>, *f.status);
  }
  if (f.before_id) {
    sql += " AND id < ?";
    params.emplace_back(std::in_place_type<int64_t>, *f.before_id);
  }
  sql += " ORDER BY id DESC LIMIT ?";
  params.emplace_back(std::in_place_type<int64_t>, std::clamp(f.limit, 1, 1001));
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<Delivery> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<std::optional<Delivery>> Find(store::Conn& c, int64_t id) {
  auto row =
      c.QueryOne("SELECT " + std::string(kColumns) + " FROM webhook_deliveries WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Delivery>{};
  return std::optional<Delivery>(FromRow(**row));
}

Result<std::vector<Attempt>> Attempts(store::Conn& c, int64_t delivery_id) {
  auto rows = c.Query(
      "SELECT attempt, started_at, status_code, error, duration_ms FROM webhook_attempts "
      "WHERE delivery_id = ? ORDER BY id",
      {delivery_id});
  if (!rows) return Fail(rows.error());
  std::vector<Attempt> out;
  for (const auto& r : *rows)
    out.push_back({r.Int(0), r.Int(1), r.OptInt(2), r.OptStr(3), r.Int(4)});
  return out;
}

Result<bool> Redeliver(store::Conn& c, int64_t id, int64_t now, int64_t retry_until) {
  auto n = c.Exec(
      "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, retry_until = ?, "
      "completed_at = NULL, updated_at = ? WHERE id = ?",
      {now, retry_until, now, id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Result<int64_t> ReleaseWaiting(store::Conn& c, int64_t endpoint_id, int64_t now) {
  return c.Exec(
      "UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ? "
      "WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at > ? AND lease_until IS "
      "NULL",
      {now, now, endpoint_id, now});
}

Result<int64_t> ResumeBacklog(store::Conn& c, int64_t endpoint_id, int64_t now,
                              int64_t retry_until) {
  return c.Exec(
      "UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ?, "
      "retry_until = CASE WHEN retry_until < ? THEN ? ELSE retry_until END "
      "WHERE endpoint_id = ? AND status = 'pending' AND (lease_until IS NULL OR lease_until <= ?)",
      {now, now, retry_until, retry_until, endpoint_id, now});
}

Result<int64_t> DeleteAttemptsBefore(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM webhook_attempts WHERE started_at <= ?", {cutoff});
}

}  // namespace crmd::webhooks::deliveries_repo
