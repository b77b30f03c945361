#pragma once
// governance::Services: the rules every write on every face passes through (audit,
// idempotency, settings, confirmations and approvals, API keys), built once by the composition root
// (src/app) and handed to the contact book, marketing and the faces. Owns its services;
// borrows db, clock, random and metrics (they must outlive it). Thread-safe once built.
#include <memory>
#include <string>

#include "src/core/clock.h"
#include "src/core/metrics.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/governance/api_keys.h"
#include "src/governance/audit.h"
#include "src/governance/confirmations.h"
#include "src/governance/idempotency.h"
#include "src/governance/settings.h"
#include "src/store/db.h"

namespace crmd::governance {

struct ServicesOptions {
  store::Database* db = nullptr;
  // Reads that tolerate lag (reports, exports): a standby behind a router
  // (src/store/replica.h); null: db.
  store::Database* read_db = nullptr;
  store::Database& LagTolerantDb() const { return read_db ? *read_db : *db; }
  Clock* clock = nullptr;
  Random* random = nullptr;
  // The approval page's URL is approval_url_base + "/console/approvals/" + id (the issuer).
  std::string approval_url_base;
  metrics::Registry* metrics = nullptr;  // nullptr: confirmations record no metrics
};

struct Services {
  explicit Services(ServicesOptions options);
  ~Services();
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  const ServicesOptions options;
  const std::unique_ptr<AuditLog> audit;
  const std::unique_ptr<Idempotency> idempotency;
  const std::unique_ptr<SettingsService> settings;
  const std::unique_ptr<ConfirmationService> confirmations;
  const std::unique_ptr<ApiKeys> api_keys;  // REST and console keys
};

// kInternal when db, clock or random is missing.
Result<std::unique_ptr<Services>> MakeServices(ServicesOptions options);

}  // namespace crmd::governance
