#include "src/app/cli/services.h"

#include "src/app/people_audit.h"
#include "src/app/shared_secrets.h"
#include "src/marketing/services.h"

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
  s->clients = std::make_unique<auth::ClientStore>(d, s->clock);
  s->consents = std::make_unique<auth::Consents>(d, s->clock);
  s->grants = std::make_unique<auth::Grants>(d, s->clock);
  // No resolver: crmctl validates addresses by syntax only.
  auto governance = governance::MakeServices({.db = &d, .clock = &s->clock, .random = &s->random});
  if (!governance) return Fail(governance.error());
  s->governance = std::move(*governance);
  s->users = std::make_unique<auth::Users>(d, s->clock, AuditPeopleChanges(*s->governance->audit));
  auto suppression_key = SharedSecret(d, kSuppressionSecret, s->random, s->clock);
  if (!suppression_key) return Fail(suppression_key.error());
  auto crm = crm::MakeServices(*s->governance, {.db = &d,
                                                .clock = &s->clock,
                                                .random = &s->random,
                                                .usage = &s->marketing_usage,
                                                .contact_exit = &s->marketing_usage,
                                                .suppression_key = *suppression_key,
                                                .import_max_bytes = config_.import_max_bytes});
  if (!crm) return Fail(crm.error());
  s->crm = std::move(*crm);
  auto marketing = marketing::MakeServices(*s->governance, *s->crm);
  if (!marketing) return Fail(marketing.error());
  s->marketing = std::move(*marketing);
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
