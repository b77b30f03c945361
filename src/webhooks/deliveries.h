#pragma once
// The durable side of outgoing webhooks. Every piece of delivery state lives in the
// database, so a crash or restart loses nothing (at-least-once):
//  - ClaimEvents() reads outbox_events after this consumer's cursor and, in ONE
//    transaction, creates a webhook_deliveries row per (event, subscribed enabled
//    endpoint) and advances the cursor.
//  - LeaseDue() picks due pending deliveries and leases them by pushing next_attempt_at
//    past the attempt's timeout: if the process dies mid-attempt the lease runs out and
//    the delivery is picked again. Per-contact order per endpoint: a delivery is due only
//    when no earlier event of the same contact for the same endpoint is still pending
//    (an event is pending until it succeeded or was given up).
//  - RecordAttempt() stores the outcome: success; or a retry with exponential backoff and
//    jitter (Retry-After honoured, each delay capped at backoff_max_s), given up once the
//    retry window is over.
//  - Outages: an endpoint is disabled only when it has had no success for
//    disable_after_s (counted from the first failure of the current run) AND at least
//    disable_after_failures failed attempts in that run, or on 410 Gone; the disabling is
//    written to the audit log. A burst of failures during a short outage never disables.
//    While disabled its deliveries stay pending (and new events keep queueing) until it is
//    enabled again (Endpoints::Update). The first success after a run of failures longer
//    than backoff_base_s makes the endpoint's waiting deliveries due at once, so the
//    backlog drains as soon as the receiver is back, not at the end of each backoff.
// Thread-safe; several workers (or nodes) may run concurrently.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::webhooks {

struct DeliveryPolicy {
  int64_t backoff_base_s = 30;
  int64_t backoff_max_s = 3600;
  int64_t retry_horizon_s = 5 * 24 * 3600;  // Config::webhook_retry_horizon_s
  int64_t lease_s = 45;                     // longer than an attempt's timeout
  int64_t disable_after_s = 5 * 24 * 3600;  // no success for this long ...
  int disable_after_failures = 20;          // ... and at least this many failures: disabled
                                            // (<= 0: never auto-disabled, 410 Gone aside)
};

struct Delivery {
  int64_t id = 0;
  int64_t event_id = 0;
  int64_t endpoint_id = 0;
  std::string event_type;
  std::optional<int64_t> contact_id;
  std::string status;  // pending | succeeded | failed
  int64_t attempts = 0;
  int64_t next_attempt_at = 0;
  std::optional<int64_t> last_status_code;
  std::optional<std::string> last_error;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::optional<int64_t> completed_at;
};
nlohmann::json DeliveryJson(const Delivery& d);

struct Attempt {
  int64_t attempt = 0;
  int64_t started_at = 0;
  std::optional<int64_t> status_code;
  std::optional<std::string> error;
  int64_t duration_ms = 0;
};
nlohmann::json AttemptJson(const Attempt& a);

// One leased delivery, with what the sender needs.
struct Work {
  int64_t delivery_id = 0;
  int64_t endpoint_id = 0;
  int64_t event_id = 0;
  int64_t attempt = 0;  // this attempt's number (1 = first)
  std::string url;
  std::string secret;
  std::string payload;
  std::string msg_id;  // webhook-id: the same for every attempt and endpoint of an event
  // The trace context of the request whose change caused the event (empty: none); each
  // attempt is a child span of it (src/core/trace.h).
  std::string traceparent;
  std::string tracestate;
};

struct Outcome {
  std::optional<int> status_code;  // the receiver's answer, if any
  std::string error;               // transport error text (no secrets)
  int64_t duration_ms = 0;
  int64_t retry_after_s = 0;  // from a Retry-After header, when present
  bool Succeeded() const { return status_code && *status_code >= 200 && *status_code < 300; }
};

struct DeliveryFilter {
  std::optional<int64_t> endpoint_id;
  std::optional<std::string> status;
  std::optional<int64_t> before_id;  // the next page: only deliveries older than this id
  int limit = 50;
};

class Deliveries {
 public:
  static constexpr const char* kConsumer = "webhooks";

  Deliveries(store::Database& db, const Clock& clock, Random& random, DeliveryPolicy policy)
      : db_(db), clock_(clock), random_(random), policy_(policy) {}
  Deliveries(const Deliveries&) = delete;
  Deliveries& operator=(const Deliveries&) = delete;

  // Returns how many outbox events were consumed (0: nothing new).
  Result<int> ClaimEvents(int limit = 200);
  Result<std::vector<Work>> LeaseDue(int limit = 20);
  Status RecordAttempt(const Work& work, const Outcome& outcome);

  Result<std::vector<Delivery>> List(const DeliveryFilter& filter);
  Result<Delivery> Get(int64_t id);
  Result<std::vector<Attempt>> Attempts(int64_t delivery_id);
  // Makes a delivery pending again, due now, with a fresh retry window. The receiver sees
  // the same webhook-id and body.
  Result<Delivery> Redeliver(int64_t id);

  // The backoff before attempt n+1 after n failed attempts, before jitter.
  static int64_t BackoffSeconds(const DeliveryPolicy& policy, int64_t failed_attempts);

 private:
  int64_t Jitter(int64_t delay);

  store::Database& db_;
  const Clock& clock_;
  Random& random_;
  const DeliveryPolicy policy_;
};

// "evt_<outbox id>".
std::string MessageId(int64_t event_id);

}  // namespace crmd::webhooks
