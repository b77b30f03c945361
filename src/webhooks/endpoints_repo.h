#pragma once
// SQL for outgoing webhook endpoints (table webhook_endpoints; Delete also removes the
// endpoint's deliveries and attempts). Promises: ids come from store::NextIdSql, so an
// id is never reused after Delete; each Set* touches one column of one row; Find and
// List never return the signing secret. Stateless; any thread, with its own Conn.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"
#include "src/webhooks/endpoints.h"

namespace crmd::webhooks::endpoints_repo {

// Answers the new id. `events_json` is a JSON array of event types.
// REQUIRES: inside Database::Write.
Result<int64_t> Insert(store::Conn& c, const std::string& url, const std::string& secret,
                       const std::string& events_json, const std::string& description, bool enabled,
                       int64_t now);
// By id. REQUIRES (lookups): inside Database::Read or Write.
Result<std::vector<Endpoint>> List(store::Conn& c);
// How many endpoints are enabled, disabled by an operator, and disabled after failures.
struct StateCounts {
  int64_t enabled = 0;
  int64_t disabled = 0;
  int64_t failing_disabled = 0;
};
Result<StateCounts> CountByState(store::Conn& c);
Result<std::optional<Endpoint>> Find(store::Conn& c, int64_t id);
Result<bool> Exists(store::Conn& c, int64_t id);

// REQUIRES (setters): inside Database::Write.
Status SetUrl(store::Conn& c, int64_t id, const std::string& url);
Status SetEvents(store::Conn& c, int64_t id, const std::string& events_json);
Status SetDescription(store::Conn& c, int64_t id, const std::string& description);
// Enabling clears consecutive_failures, failing_since, disabled_reason and disabled_at;
// disabling records that an operator did it, at `now`.
Status SetEnabled(store::Conn& c, int64_t id, bool enabled, int64_t now);
Status SetUpdatedAt(store::Conn& c, int64_t id, int64_t now);
// Removes the endpoint with its deliveries and attempts; false when there was no such
// endpoint. REQUIRES: inside Database::Write.
Result<bool> Delete(store::Conn& c, int64_t id);

// The signing secret of the endpoint at exactly `url` (the lowest id when several), for
// automation call_webhook steps. REQUIRES: inside Database::Read or Write.
Result<std::optional<std::string>> SecretForUrl(store::Conn& c, const std::string& url);

// Delivery bookkeeping on the endpoint row.
struct Subscription {
  int64_t id = 0;
  std::vector<std::string> events;
};
// Endpoints new events are queued for: enabled ones, and ones the worker (not an
// operator) disabled after failures. REQUIRES: inside Database::Read or Write.
Result<std::vector<Subscription>> Subscribed(store::Conn& c);
// REQUIRES (below): inside Database::Write.
// A success ends the run of failures; answers when that run began (nullopt when the
// endpoint was not failing, or is gone).
Result<std::optional<int64_t>> RecordSuccess(store::Conn& c, int64_t id);
// The run of failures after one more failed attempt at `now` (count 0 when the endpoint
// is gone).
struct FailureRun {
  int64_t count = 0;  // consecutive failed attempts
  int64_t since = 0;  // when the first of them happened
};
Result<FailureRun> RecordFailure(store::Conn& c, int64_t id, int64_t now);
// Disables an enabled endpoint, recording why and when; false when it was not enabled.
Result<bool> DisableForFailures(store::Conn& c, int64_t id, const std::string& reason, int64_t now);

}  // namespace crmd::webhooks::endpoints_repo
