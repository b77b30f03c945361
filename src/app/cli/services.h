#pragma once
// The composition crmctl's commands share: the database and every service a command
// calls, built once, on first use (a command that fails on its arguments never opens the
// database). Commands call these services; none of them sees a connection or opens a
// transaction.
//
// Not thread-safe: crmctl runs one command on one thread.
#include <memory>
#include <optional>

#include "auth/clients.h"
#include "auth/consent.h"
#include "auth/grants.h"
#include "auth/users.h"
#include "src/core/clock.h"
#include "src/core/config.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/crm/services.h"
#include "src/governance/services.h"
#include "src/marketing/services.h"
#include "src/marketing/usage.h"
#include "src/store/db.h"
#include "src/webhooks/deliveries.h"
#include "src/webhooks/endpoints.h"
#include "src/webhooks/incoming.h"

namespace crmd::app::cli {

struct Services {
  Services() = default;
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  SystemClock clock;
  SecureRandom random;
  std::unique_ptr<store::Database> db;  // outlives the services below, which borrow it
  std::unique_ptr<auth::Users> users;
  std::unique_ptr<auth::ClientStore> clients;
  std::unique_ptr<auth::Consents> consents;
  std::unique_ptr<auth::Grants> grants;
  marketing::MarketingUsage marketing_usage;
  std::unique_ptr<governance::Services> governance;
  std::unique_ptr<crm::Services> crm;
  std::unique_ptr<marketing::Services> marketing;
  std::unique_ptr<webhooks::Endpoints> webhook_endpoints;
  std::unique_ptr<webhooks::Deliveries> webhook_deliveries;
  std::unique_ptr<webhooks::IncomingHooks> incoming_hooks;
};

class Context {
 public:
  explicit Context(Config config) : config_(std::move(config)) {}
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Config& config() const { return config_; }
  // The services, built on the first call (opening config().database_url applies pending
  // migrations); later calls answer the same object, or the same error.
  Result<Services*> services();

 private:
  Status Build();

  const Config config_;
  std::unique_ptr<Services> services_;
  std::optional<Error> failed_;
};

}  // namespace crmd::app::cli
