// Webhooks: outgoing endpoints and deliveries with the delivery worker (started in
// App::Start), and incoming webhooks, which upsert through the contact book.
#include "src/app/services.h"
#include "src/app/wiring.h"

namespace crmd::app {

void WireWebhooks(App::Services& s) {
  s.webhook_endpoints = std::make_unique<webhooks::Endpoints>(
      *s.db, *s.clock, *s.random, s.config.allow_private_network_targets,
      s.config.webhook_retry_horizon_s);
  s.webhook_deliveries = std::make_unique<webhooks::Deliveries>(
      *s.db, *s.clock, *s.random,
      webhooks::DeliveryPolicy{
          .backoff_base_s = s.config.webhook_backoff_base_s,
          .backoff_max_s = s.config.webhook_backoff_max_s,
          .retry_horizon_s = s.config.webhook_retry_horizon_s,
          .lease_s = s.config.webhook_timeout_ms / 1000 + s.config.webhook_lease_grace_s,
          .disable_after_s = s.config.webhook_disable_after_s,
          .disable_after_failures = s.config.webhook_disable_after_failures,
      });
  s.webhook_worker = std::make_unique<webhooks::DeliveryWorker>(
      *s.webhook_deliveries, *s.http_client, *s.clock,
      webhooks::WorkerOptions{
          .poll_interval_ms = s.config.webhook_poll_interval_ms,
          .timeout_ms = s.config.webhook_timeout_ms,
          .allow_private = s.config.allow_private_network_targets,
          .batch = 20,
          .metrics = s.metrics.get(),
      });
  s.incoming_hooks = std::make_unique<webhooks::IncomingHooks>(webhooks::IncomingHooksOptions{
      .db = s.db.get(),
      .clock = s.clock.get(),
      .random = s.random.get(),
      .contacts = s.crm->contacts.get(),
      .lists = s.crm->lists.get(),
  });
}

}  // namespace crmd::app
