#include "src/governance/services.h"

namespace crmd::governance {

Services::Services(ServicesOptions o)
    : options(std::move(o)),
      audit(std::make_unique<AuditLog>(options.clock, options.db)),
      idempotency(std::make_unique<Idempotency>(options.db, options.clock)),
      settings(std::make_unique<SettingsService>(
          SettingsOptions{.db = options.db, .clock = options.clock, .audit = audit.get()})),
      confirmations(std::make_unique<ConfirmationService>(
          ConfirmationOptions{.db = options.db,
                              .clock = options.clock,
                              .random = options.random,
                              .settings = settings.get(),
                              .approval_url_base = options.approval_url_base,
                              .metrics = options.metrics})),
      api_keys(std::make_unique<ApiKeys>(*options.db, *options.clock, *options.random)) {}

Services::~Services() = default;

Result<std::unique_ptr<Services>> MakeServices(ServicesOptions options) {
  if (!options.db || !options.clock || !options.random)
    return Fail(Error::Internal("governance::Services needs db, clock and random"));
  return std::make_unique<Services>(std::move(options));
}

}  // namespace crmd::governance
