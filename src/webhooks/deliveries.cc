#include "src/webhooks/deliveries.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/log.h"
#include "src/crm/outbox_repo.h"
#include "src/governance/audit_repo.h"
#include "src/webhooks/deliveries_repo.h"
#include "src/webhooks/endpoints_repo.h"

namespace crmd::webhooks {
namespace {

nlohmann::json OptJson(const std::optional<int64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}
nlohmann::json OptJson(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

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
  return {
      {"id", d.id},
      {"event_id", d.event_id},
      {"webhook_id", MessageId(d.event_id)},
      {"endpoint_id", d.endpoint_id},
      {"event_type", d.event_type},
      {"contact_id", OptJson(d.contact_id)},
      {"status", d.status},
      {"attempts", d.attempts},
      {"next_attempt_at",
       d.status == "pending" ? nlohmann::json(FormatRfc3339(d.next_attempt_at)) : nlohmann::json()},
      {"last_status_code", OptJson(d.last_status_code)},
      {"last_error", OptJson(d.last_error)},
      {"created_at", FormatRfc3339(d.created_at)},
      {"completed_at",
       d.completed_at ? nlohmann::json(FormatRfc3339(*d.completed_at)) : nlohmann::json()}};
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
    const std::string consumer(kConsumer);
    if (auto r = crm::outbox_repo::EnsureCursor(c, consumer); !r) return Fail(r.error());
    auto after = crm::outbox_repo::CursorPosition(c, consumer);
    if (!after) return Fail(after.error());
    // The window first (its count and last id only): an idle claim reads nothing more, and
    // with no endpoint the cursor moves past the events unread.
    auto window = crm::outbox_repo::WindowAfter(c, *after, limit);
    if (!window) return Fail(window.error());
    if (window->count == 0) return 0;
    auto subs = endpoints_repo::Subscribed(c);
    if (!subs) return Fail(subs.error());
    if (!subs->empty()) {
      auto events = crm::outbox_repo::StoredAfter(c, *after, limit);  // the window's events
      if (!events) return Fail(events.error());
      for (const auto& ev : *events) {
        std::string payload;
        for (const auto& s : *subs) {
          if (std::find(s.events.begin(), s.events.end(), ev.event_type) == s.events.end())
            continue;
          if (payload.empty()) payload = Payload(ev.id, ev.event_type, ev.occurred_at, ev.data);
          if (auto r = deliveries_repo::InsertPending(c, ev.id, s.id, ev.event_type, ev.contact_id,
                                                      payload, now, now + policy_.retry_horizon_s,
                                                      ev.traceparent, ev.tracestate);
              !r)
            return Fail(r.error());
        }
      }
    }
    if (auto r = crm::outbox_repo::AdvanceCursor(c, consumer, window->last_id); !r)
      return Fail(r.error());
    return window->count;
  });
}

Result<std::vector<Work>> Deliveries::LeaseDue(int limit) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<std::vector<Work>> {
    auto candidates = deliveries_repo::LeaseCandidates(c, now, limit);
    if (!candidates) return Fail(candidates.error());
    std::vector<Work> out;
    for (auto& w : *candidates) {
      auto leased = deliveries_repo::Lease(c, w.delivery_id, now, now + policy_.lease_s);
      if (!leased) return Fail(leased.error());
      if (!*leased) continue;
      w.msg_id = MessageId(w.event_id);
      out.push_back(std::move(w));
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
  std::optional<std::string> disabled_reason;  // set when this attempt disabled the endpoint
  auto done = db_.Write([&](store::Conn& c) -> Result<bool> {
    disabled_reason.reset();  // the transaction may be retried
    auto retry_until = deliveries_repo::FindRetryUntil(c, work.delivery_id);
    if (!retry_until) return Fail(retry_until.error());
    if (!*retry_until) return true;  // endpoint deleted meanwhile
    const std::optional<int64_t> code =
        outcome.status_code ? std::optional<int64_t>(*outcome.status_code) : std::nullopt;
    if (auto r = deliveries_repo::InsertAttempt(
            c, work.delivery_id, work.attempt, now - outcome.duration_ms / 1000, code,
            ok ? std::nullopt : std::optional<std::string>(error), outcome.duration_ms);
        !r)
      return Fail(r.error());
    if (ok) {
      if (auto r = deliveries_repo::MarkSucceeded(c, work.delivery_id, work.attempt, code, now); !r)
        return Fail(r.error());
      auto failing_since = endpoints_repo::RecordSuccess(c, work.endpoint_id);
      if (!failing_since) return Fail(failing_since.error());
      // The receiver is back after an outage (not a blip): what waits for a later retry
      // goes now, still in per-contact order (LeaseCandidates).
      if (*failing_since && now - **failing_since >= policy_.backoff_base_s)
        if (auto r = deliveries_repo::ReleaseWaiting(c, work.endpoint_id, now); !r)
          return Fail(r.error());
      return true;
    }
    const bool give_up = now + delay > **retry_until;
    auto r = give_up
                 ? deliveries_repo::MarkFailed(c, work.delivery_id, work.attempt, code, error, now)
                 : deliveries_repo::ScheduleRetry(c, work.delivery_id, work.attempt, code, error,
                                                  now + delay, now);
    if (!r) return Fail(r.error());
    auto run = endpoints_repo::RecordFailure(c, work.endpoint_id, now);
    if (!run) return Fail(run.error());
    std::optional<std::string> reason;
    if (outcome.status_code && *outcome.status_code == 410)
      reason = "the receiver answered 410 Gone";
    else if (policy_.disable_after_failures > 0 && run->count >= policy_.disable_after_failures &&
             now - run->since >= policy_.disable_after_s)
      reason = "no successful delivery since " + FormatRfc3339(run->since) + " (" +
               std::to_string(run->count) + " failed attempts)";
    if (!reason) return true;
    auto disabled = endpoints_repo::DisableForFailures(c, work.endpoint_id, *reason, now);
    if (!disabled) return Fail(disabled.error());
    if (!*disabled) return true;  // already disabled (another worker, or an operator)
    if (auto r = governance::audit_repo::Insert(
            c, now, governance::Actor{.kind = "system", .subject = "webhook_worker"},
            {.action = "disable_webhook_endpoint",
             .target_type = "webhook_endpoint",
             .target_ids = {work.endpoint_id},
             .details = {{"enabled", false},
                         {"reason", *reason},
                         {"failing_since", FormatRfc3339(run->since)},
                         {"failed_attempts", run->count},
                         {"last_error", error}}});
        !r)
      return Fail(r.error());
    disabled_reason = *reason;
    return true;
  });
  if (!done) return Fail(done.error());
  if (disabled_reason)
    spdlog::warn(R"("event":"webhook_endpoint_disabled","endpoint_id":{},"reason":"{}")",
                 work.endpoint_id, JsonEscape(*disabled_reason));
  return Ok();
}

Result<std::vector<Delivery>> Deliveries::List(const DeliveryFilter& f) {
  return db_.Read([&](store::Conn& c) { return deliveries_repo::List(c, f); });
}

Result<Delivery> Deliveries::Get(int64_t id) {
  return db_.Read([&](store::Conn& c) -> Result<Delivery> {
    auto row = deliveries_repo::Find(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(Errc::kNotFound, "no webhook delivery " + std::to_string(id));
    return std::move(**row);
  });
}

Result<std::vector<Attempt>> Deliveries::Attempts(int64_t delivery_id) {
  return db_.Read([&](store::Conn& c) { return deliveries_repo::Attempts(c, delivery_id); });
}

Result<Delivery> Deliveries::Redeliver(int64_t id) {
  const int64_t now = clock_.NowUnix();
  auto changed = db_.Write([&](store::Conn& c) {
    return deliveries_repo::Redeliver(c, id, now, now + policy_.retry_horizon_s);
  });
  if (!changed) return Fail(changed.error());
  if (!*changed) return Fail(Errc::kNotFound, "no webhook delivery " + std::to_string(id));
  return Get(id);
}

}  // namespace crmd::webhooks
