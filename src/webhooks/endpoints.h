#pragma once
// Outgoing webhook endpoints: a target URL, a Standard Webhooks signing secret, the events
// it wants (of the 8 contact events and the opt-in email.* events), and an enabled flag (also
// cleared automatically when it has had no success for days, or on a 410 Gone; see deliveries.h).
// Enabling and disabling are written to the audit log; enabling makes the kept backlog due at once,
// with a fresh retry window.
//
// Targets on loopback, private, link-local or otherwise internal addresses are refused
// unless allow_private_network_targets is set. Only literal addresses and well-known
// internal names can be checked here; names that resolve to internal addresses are
// refused again at delivery time by the HTTP client's SSRF guard.
// Thread-safe.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::webhooks {

// disabled_reason when an operator disabled the endpoint (then no new events are queued).
inline constexpr const char* kOperatorDisabled = "disabled by an operator";

struct Endpoint {
  int64_t id = 0;
  std::string url;
  std::vector<std::string> events;  // of crm::events::kAll and kEmail
  std::string description;
  bool enabled = true;
  int64_t consecutive_failures = 0;
  std::optional<int64_t> failing_since;  // start of the current run of failures
  std::optional<std::string> disabled_reason;
  std::optional<int64_t> disabled_at;
  int64_t created_at = 0;
  int64_t updated_at = 0;
};
// Never includes the secret.
nlohmann::json EndpointJson(const Endpoint& e);

struct EndpointInput {
  std::optional<std::string> url;
  std::optional<std::vector<std::string>> events;  // empty vector: refused
  std::optional<std::string> description;
  std::optional<bool> enabled;
};
// Reads {"url","events","description","enabled"}; kInvalidArgument naming the field.
Result<EndpointInput> EndpointInputFromJson(const nlohmann::json& j);

// kInvalidArgument unless http(s) with a host; kPermissionDenied for internal targets
// when !allow_private.
Status ValidateTargetUrl(const std::string& url, bool allow_private);

namespace endpoints_repo {
struct StateCounts;
}  // namespace endpoints_repo

class Endpoints {
 public:
  // `retry_horizon_s`: the retry window a kept backlog gets again when the endpoint is
  // enabled (webhook_retry_horizon_s).
  Endpoints(store::Database& db, const Clock& clock, Random& random, bool allow_private,
            int64_t retry_horizon_s = 5 * 24 * 3600)
      : db_(db),
        clock_(clock),
        random_(random),
        allow_private_(allow_private),
        retry_horizon_s_(retry_horizon_s) {}
  Endpoints(const Endpoints&) = delete;
  Endpoints& operator=(const Endpoints&) = delete;

  // How many endpoints are enabled, auto-disabled and disabled by an operator (/metrics).
  Result<endpoints_repo::StateCounts> CountByState() const;

  // Returns the endpoint and its signing secret (shown once). url and events required.
  Result<std::pair<Endpoint, std::string>> Create(const EndpointInput& in);
  Result<std::vector<Endpoint>> List();
  Result<Endpoint> Get(int64_t id);
  // Enabling clears the failure counter and the disabled reason, and makes the endpoint's
  // pending deliveries due now (in order) with a fresh retry window. A change of `enabled`
  // is recorded in the audit log as done by `actor` (empty kind: "system").
  Result<Endpoint> Update(int64_t id, const EndpointInput& in, const governance::Actor& actor = {});
  Status Delete(int64_t id);  // its deliveries go with it
  // The signing secret of the endpoint registered at exactly `url`, for automation
  // call_webhook steps; nullopt when none is.
  Result<std::optional<std::string>> SecretForUrl(const std::string& url);

 private:
  Status Check(const EndpointInput& in, bool creating) const;

  store::Database& db_;
  const Clock& clock_;
  Random& random_;
  const bool allow_private_;
  const int64_t retry_horizon_s_;
};

}  // namespace crmd::webhooks
