#include "src/webhooks/deliveries.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace crmd::webhooks {
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

nlohmann::json OptJson(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json OptJson(const std::optional<std::string>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

// The body sent for an outbox event: {"id","type","timestamp","occurred_at","data"}.
std::string Payload(int64_t event_id, const std::string& type, int64_t occurred_at,
                    const std::string& data_text) {
  auto data = nlohmann::json::parse(data_text, nullptr, false);
  if (data.is_discarded()) data = nlohmann::json::object();
  nlohmann::json body = {{"id", MessageId(event_id)},
                         {"type", type},
                         {"timestamp", FormatRfc3339(occurred_at)},
                         {"occurred_at", FormatRfc3339(occurred_at)},
                         {"data", data}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Truncate(std::string s, size_t n) {
  if (s.size() > n) s.resize(n);
  return s;
}

}  // namespace

std::string MessageId(int64_t event_id) { return "evt_" + std::to_string(event_id); }

nlohmann::json DeliveryJson(const Delivery& d) {
  return {{"id", d.id},
          {"event_id", d.event_id},
          {"webhook_id", MessageId(d.event_id)},
          {"endpoint_id", d.endpoint_id},
          {"event_type", d.event_type},
          {"contact_id", OptJson(d.contact_id)},
          {"status", d.status},
          {"attempts", d.attempts},
          {"next_attempt_at", d.status == "pending" ? nlohmann::json(FormatRfc3339(d.next_attempt_at))
                                                    : nlohmann::json()},
          {"last_status_code", OptJson(d.last_status_code)},
          {"last_error", OptJson(d.last_error)},
          {"created_at", FormatRfc3339(d.created_at)},
          {"completed_at", d.completed_at ? nlohmann::json(FormatRfc3339(*d.completed_at)) : nlohmann::json()}};
}

nlohmann::json AttemptJson(const Attempt& a) {
  return {{"attempt", a.attempt},
          {"started_at", FormatRfc3339(a.started_at)},
          {"status_code", OptJson(a.status_code)},
          {"error", OptJson(a.error)},
          {"duration_ms", a.duration_ms}};
}

int64_t Deliveries::BackoffSeconds(const DeliveryPolicy& policy, int64_t failed_attempts) {
  int64_t delay = std::max<int64_t>(policy.backoff_base_s, 1);
  for (int64_t i = 1; i < failed_attempts && delay < policy.backoff_max_s; ++i) delay *= 2;
  return std::min(delay, std::max<int64_t>(policy.backoff_max_s, 1));
}

int64_t Deliveries::Jitter(int64_t delay) {
  // Uniform in [delay/2, delay]: spreads retries of a failed burst apart.
  std::string b = random_.Bytes(2);
  uint32_t r = (static_cast<uint8_t>(b[0]) << 8) | static_cast<uint8_t>(b[1]);
  int64_t half = delay / 2;
  return delay - half + static_cast<int64_t>((static_cast<uint64_t>(half) * r) / 65535);
}

Result<int> Deliveries::ClaimEvents(int limit) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<int> {
    // Creating the cursor row first also serialises concurrent claimers on it.
    if (auto r = c.Exec("INSERT INTO outbox_cursors (consumer, last_event_id) VALUES (?, 0) "
                        "ON CONFLICT (consumer) DO NOTHING",
                        {std::string(kConsumer)});
        !r)
      return Fail(r.error());
    auto cur = c.QueryOne("SELECT last_event_id FROM outbox_cursors WHERE consumer = ?",
                          {std::string(kConsumer)});
    if (!cur) return Fail(cur.error());
    const int64_t after = (*cur)->Int(0);
    auto events = c.Query(
        "SELECT id, event_type, contact_id, data, occurred_at FROM outbox_events WHERE id > ? "
        "ORDER BY id LIMIT ?",
        {after, int64_t{limit}});
    if (!events) return Fail(events.error());
    if (events->empty()) return 0;
    // An endpoint the worker disabled after failures keeps queueing (its deliveries wait
    // until it is enabled again, within the retry horizon); one an operator disabled does
    // not.
    auto endpoints = c.Query(
        "SELECT id, events FROM webhook_endpoints WHERE enabled = 1 OR "
        "(disabled_reason IS NOT NULL AND disabled_reason <> 'disabled by an operator')");
    if (!endpoints) return Fail(endpoints.error());
    struct Sub {
      int64_t id;
      std::vector<std::string> events;
    };
    std::vector<Sub> subs;
    for (const auto& e : *endpoints) {
      Sub s{e.Int(0), {}};
      auto j = nlohmann::json::parse(e.Str(1), nullptr, false);
      if (j.is_array())
        for (const auto& v : j)
          if (v.is_string()) s.events.push_back(v.get<std::string>());
      subs.push_back(std::move(s));
    }
    int64_t last = after;
    for (const auto& ev : *events) {
      last = ev.Int(0);
      const std::string type = ev.Str(1);
      std::string payload;
      for (const auto& s : subs) {
        if (std::find(s.events.begin(), s.events.end(), type) == s.events.end()) continue;
        if (payload.empty()) payload = Payload(ev.Int(0), type, ev.Int(4), ev.Str(3));
        auto r = c.Exec(
            "INSERT INTO webhook_deliveries (event_id, endpoint_id, event_type, contact_id, payload, "
            "status, attempts, next_attempt_at, retry_until, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?) "
            "ON CONFLICT (event_id, endpoint_id) DO NOTHING",
            {ev.Int(0), s.id, type, ev.at(2), payload, now, now + policy_.retry_horizon_s, now, now});
        if (!r) return Fail(r.error());
      }
    }
    if (auto r = c.Exec("UPDATE outbox_cursors SET last_event_id = ? WHERE consumer = ?",
                        {last, std::string(kConsumer)});
        !r)
      return Fail(r.error());
    return static_cast<int>(events->size());
  });
}

Result<std::vector<Work>> Deliveries::LeaseDue(int limit) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<std::vector<Work>> {
    auto rows = c.Query(
        "SELECT d.id, d.endpoint_id, d.event_id, d.attempts, e.url, e.secret, d.payload "
        "FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id "
        "WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND e.enabled = 1 "
        "AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id "
        "  AND p.contact_id = d.contact_id AND p.status = 'pending' AND p.event_id < d.event_id) "
        "ORDER BY d.next_attempt_at, d.id LIMIT ?" + store::SkipLocked(c.dialect(), "d"),
        {now, int64_t{limit}});
    if (!rows) return Fail(rows.error());
    std::vector<Work> out;
    for (const auto& r : *rows) {
      // The guard makes the lease exclusive when several workers race for the same row.
      auto leased = c.Exec(
          "UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ? "
          "WHERE id = ? AND status = 'pending' AND next_attempt_at <= ?",
          {now + policy_.lease_s, now, r.Int(0), now});
      if (!leased) return Fail(leased.error());
      if (*leased == 0) continue;
      out.push_back(Work{.delivery_id = r.Int(0),
                         .endpoint_id = r.Int(1),
                         .event_id = r.Int(2),
                         .attempt = r.Int(3) + 1,
                         .url = r.Str(4),
                         .secret = r.Str(5),
                         .payload = r.Str(6),
                         .msg_id = MessageId(r.Int(2))});
    }
    return out;
  });
}

Status Deliveries::RecordAttempt(const Work& work, const Outcome& outcome) {
  const int64_t now = clock_.NowUnix();
  const bool ok = outcome.Succeeded();
  std::string error = outcome.error;
  if (!ok && error.empty() && outcome.status_code)
    error = "HTTP " + std::to_string(*outcome.status_code);
  error = Truncate(error, 500);
  // Computed outside the transaction: Jitter() draws randomness.
  int64_t delay = Jitter(BackoffSeconds(policy_, work.attempt));
  if (outcome.retry_after_s > 0)
    delay = std::max(delay, std::min(outcome.retry_after_s, policy_.backoff_max_s));
  auto done = db_.Write([&](store::Conn& c) -> Result<bool> {
    auto row = c.QueryOne("SELECT status, retry_until FROM webhook_deliveries WHERE id = ?",
                          {work.delivery_id});
    if (!row) return Fail(row.error());
    if (!*row) return true;  // endpoint deleted meanwhile
    if (auto r = c.Exec(
            "INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, error, "
            "duration_ms) VALUES (?, ?, ?, ?, ?, ?)",
            {work.delivery_id, work.attempt, now - outcome.duration_ms / 1000,
             store::Opt(outcome.status_code), ok ? store::Null() : store::Value(error),
             outcome.duration_ms});
        !r)
      return Fail(r.error());
    const store::Value code = store::Opt(outcome.status_code);
    if (ok) {
      if (auto r = c.Exec(
              "UPDATE webhook_deliveries SET status = 'succeeded', attempts = ?, last_status_code = ?, "
              "last_error = NULL, updated_at = ?, completed_at = ? WHERE id = ?",
              {work.attempt, code, now, now, work.delivery_id});
          !r)
        return Fail(r.error());
      auto r = c.Exec("UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = ?",
                      {work.endpoint_id});
      if (!r) return Fail(r.error());
      return true;
    }
    const int64_t retry_until = (*row)->Int(1);
    const bool give_up = now + delay > retry_until;
    auto r = give_up
                 ? c.Exec("UPDATE webhook_deliveries SET status = 'failed', attempts = ?, "
                          "last_status_code = ?, last_error = ?, updated_at = ?, completed_at = ? "
                          "WHERE id = ?",
                          {work.attempt, code, error, now, now, work.delivery_id})
                 : c.Exec("UPDATE webhook_deliveries SET attempts = ?, last_status_code = ?, "
                          "last_error = ?, next_attempt_at = ?, updated_at = ? WHERE id = ?",
                          {work.attempt, code, error, now + delay, now, work.delivery_id});
    if (!r) return Fail(r.error());
    auto ep = c.QueryOne(
        "UPDATE webhook_endpoints SET consecutive_failures = consecutive_failures + 1 "
        "WHERE id = ? RETURNING consecutive_failures",
        {work.endpoint_id});
    if (!ep) return Fail(ep.error());
    const int64_t failures = *ep ? (*ep)->Int(0) : 0;
    std::optional<std::string> reason;
    if (outcome.status_code && *outcome.status_code == 410)
      reason = "the receiver answered 410 Gone";
    else if (policy_.disable_after_failures > 0 && failures >= policy_.disable_after_failures)
      reason = std::to_string(failures) + " consecutive failed deliveries";
    if (reason) {
      auto d = c.Exec("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = ?, updated_at = ? "
                      "WHERE id = ? AND enabled = 1",
                      {*reason, now, work.endpoint_id});
      if (!d) return Fail(d.error());
    }
    return true;
  });
  if (!done) return Fail(done.error());
  return Ok();
}

Result<std::vector<Delivery>> Deliveries::List(const DeliveryFilter& f) {
  return db_.Read([&](store::Conn& c) -> Result<std::vector<Delivery>> {
    std::string sql = "SELECT " + std::string(kColumns) + " FROM webhook_deliveries WHERE 1 = 1";
    std::vector<store::Value> params;
    if (f.endpoint_id) {
      sql += " AND endpoint_id = ?";
      params.push_back(*f.endpoint_id);
    }
    if (f.status) {
      sql += " AND status = ?";
      params.push_back(*f.status);
    }
    sql += " ORDER BY id DESC LIMIT ?";
    params.push_back(int64_t{std::clamp(f.limit, 1, 1000)});
    auto rows = c.Query(sql, params);
    if (!rows) return Fail(rows.error());
    std::vector<Delivery> out;
    for (const auto& r : *rows) out.push_back(FromRow(r));
    return out;
  });
}

Result<Delivery> Deliveries::Get(int64_t id) {
  return db_.Read([&](store::Conn& c) -> Result<Delivery> {
    auto row = c.QueryOne("SELECT " + std::string(kColumns) + " FROM webhook_deliveries WHERE id = ?", {id});
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no webhook delivery " + std::to_string(id));
    return FromRow(**row);
  });
}

Result<std::vector<Attempt>> Deliveries::Attempts(int64_t delivery_id) {
  return db_.Read([&](store::Conn& c) -> Result<std::vector<Attempt>> {
    auto rows = c.Query(
        "SELECT attempt, started_at, status_code, error, duration_ms FROM webhook_attempts "
        "WHERE delivery_id = ? ORDER BY id",
        {delivery_id});
    if (!rows) return Fail(rows.error());
    std::vector<Attempt> out;
    for (const auto& r : *rows)
      out.push_back({r.Int(0), r.Int(1), r.OptInt(2), r.OptStr(3), r.Int(4)});
    return out;
  });
}

Result<Delivery> Deliveries::Redeliver(int64_t id) {
  const int64_t now = clock_.NowUnix();
  auto changed = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    return c.Exec(
        "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, retry_until = ?, "
        "completed_at = NULL, updated_at = ? WHERE id = ?",
        {now, now + policy_.retry_horizon_s, now, id});
  });
  if (!changed) return Fail(changed.error());
  if (*changed == 0) return Fail(Errc::kNotFound, "no webhook delivery " + std::to_string(id));
  return Get(id);
}

}  // namespace crmd::webhooks
