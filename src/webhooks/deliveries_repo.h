#pragma once
// SQL for webhook deliveries and their attempts (tables webhook_deliveries,
// webhook_attempts). Promises: InsertPending queues an (event, endpoint) pair at most
// once, however often it is called; Lease is exclusive: of any number of workers racing
// for one due row, on either engine, exactly one gets it (LeaseCandidates also skips rows
// another transaction holds, FOR UPDATE SKIP LOCKED on PostgreSQL). Stateless; any
// thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"
#include "src/webhooks/deliveries.h"

namespace crmd::webhooks::deliveries_repo {

// REQUIRES (all writes): inside Database::Write. Lookups: Read or Write.

// A pending delivery due now, kept until retry_until; no-op when the pair exists.
// `traceparent`/`tracestate`: the event's (outbox_repo::StoredEvent), handed to Work.
Status InsertPending(store::Conn& c, int64_t event_id, int64_t endpoint_id,
                     const std::string& event_type, std::optional<int64_t> contact_id,
                     const std::string& payload, int64_t now, int64_t retry_until,
                     std::optional<std::string> traceparent = std::nullopt,
                     std::optional<std::string> tracestate = std::nullopt);
// Pending deliveries due at `now` to enabled endpoints, oldest due first, skipping any
// whose contact has an earlier pending event for the same endpoint (per-contact order).
// `msg_id` is left empty; `attempt` is the next attempt's number.
Result<std::vector<Work>> LeaseCandidates(store::Conn& c, int64_t now, int limit);
// Moves a due pending row's next_attempt_at to `lease_until`; false when another worker
// leased it first (or it is no longer due).
Result<bool> Lease(store::Conn& c, int64_t id, int64_t now, int64_t lease_until);
// The delivery's retry_until; nullopt when the delivery is gone.
Result<std::optional<int64_t>> FindRetryUntil(store::Conn& c, int64_t id);
Status InsertAttempt(store::Conn& c, int64_t delivery_id, int64_t attempt, int64_t started_at,
                     std::optional<int64_t> status_code, std::optional<std::string> error,
                     int64_t duration_ms);
Status MarkSucceeded(store::Conn& c, int64_t id, int64_t attempt,
                     std::optional<int64_t> status_code, int64_t now);
Status MarkFailed(store::Conn& c, int64_t id, int64_t attempt, std::optional<int64_t> status_code,
                  const std::string& error, int64_t now);
Status ScheduleRetry(store::Conn& c, int64_t id, int64_t attempt,
                     std::optional<int64_t> status_code, const std::string& error,
                     int64_t next_attempt_at, int64_t now);
// Newest first, at most f.limit (clamped to 1..1000).
Result<std::vector<Delivery>> List(store::Conn& c, const DeliveryFilter& f);
Result<std::optional<Delivery>> Find(store::Conn& c, int64_t id);
Result<std::vector<Attempt>> Attempts(store::Conn& c, int64_t delivery_id);
// Back to pending, due now, until retry_until; false when there is no such delivery.
Result<bool> Redeliver(store::Conn& c, int64_t id, int64_t now, int64_t retry_until);
// After an outage ends: the endpoint's pending deliveries waiting for a later retry become
// due at `now` (in-flight ones are left alone). Answers how many.
Result<int64_t> ReleaseWaiting(store::Conn& c, int64_t endpoint_id, int64_t now);
// When an endpoint is enabled again: its kept backlog becomes due at `now`, each with a
// retry window until at least `retry_until`. Answers how many.
Result<int64_t> ResumeBacklog(store::Conn& c, int64_t endpoint_id, int64_t now,
                              int64_t retry_until);

// The delivery queue at `now`: pending rows, and those due to enabled endpoints (what
// LeaseCandidates walks; a leased row's next attempt is in the future, so it is not due).
Result<store::QueueStats> QueueStats(store::Conn& c, int64_t now);

// Housekeeping: removes attempts started at or before `cutoff`; answers how many.
// REQUIRES: inside Database::Write.
Result<int64_t> DeleteAttemptsBefore(store::Conn& c, int64_t cutoff);

}  // namespace crmd::webhooks::deliveries_repo
