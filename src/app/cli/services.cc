#include "src/app/cli/services.h"

#include "src/crm/marketing.h"

namespace crmd::app::cli {

Result<Services*> Context::services() {
  if (!services_ && !failed_) {
    if (auto st = Build(); !st) failed_ = st.error();
  }
  if (failed_) return Fail(*failed_);
  return services_.get();
}

Status Context::Build() {
  auto s = std::make_unique<Services>();
  auto db = store::Open(config_.database_url, 1);
  if (!db) return Fail(db.error());
  s->db = std::move(*db);
  store::Database& d = *s->db;
  s->users = std::make_unique<auth::Users>(d, s->clock);
  s->clients = std::make_unique<auth::ClientStore>(d, s->clock);
  s->consents = std::make_unique<auth::Consents>(d, s->clock);
  s->grants = std::make_unique<auth::Grants>(d, s->clock);
  // No resolver: crmctl validates addresses by syntax only.
  auto crm = crm::MakeServices({.db = &d, .clock = &s->clock, .random = &s->random});
  if (!crm) return Fail(crm.error());
  s->crm = std::move(*crm);
  if (auto st = crm::InstallMarketing(*s->crm); !st) return Fail(st.error());
  s->api_keys = std::make_unique<crm::ApiKeys>(d, s->clock, s->random);
  s->forms = std::make_unique<crm::FormRepo>(d, s->clock, s->crm->contacts.get());
  s->webhook_endpoints = std::make_unique<webhooks::Endpoints>(
      d, s->clock, s->random, config_.allow_private_network_targets,
      config_.webhook_retry_horizon_s);
  s->webhook_deliveries = std::make_unique<webhooks::Deliveries>(
      d, s->clock, s->random,
      webhooks::DeliveryPolicy{
          .backoff_base_s = config_.webhook_backoff_base_s,
          .backoff_max_s = config_.webhook_backoff_max_s,
          .retry_horizon_s = config_.webhook_retry_horizon_s,
          .lease_s = config_.webhook_timeout_ms / 1000 + config_.webhook_lease_grace_s,
          .disable_after_s = config_.webhook_disable_after_s,
          .disable_after_failures = config_.webhook_disable_after_failures,
      });
  s->incoming_hooks = std::make_unique<webhooks::IncomingHooks>(webhooks::IncomingHooksOptions{
      .db = &d,
      .clock = &s->clock,
      .random = &s->random,
      .contacts = s->crm->contacts.get(),
      .lists = s->crm->lists.get(),
  });
  services_ = std::move(s);
  return Ok();
}

}  // namespace crmd::app::cli
