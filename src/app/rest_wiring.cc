// The REST API v1 under /<rest_root>/<rest_namespace>/v1 (src/rest): API keys, forms,
// contacts, webhook administration, mail reports and incoming webhooks.
#include "src/app/services.h"
#include "src/app/wiring.h"

namespace crmd::app {

void WireRest(App::Services& s) {
  s.rest_api = std::make_unique<rest::RestApi>(rest::RestDeps{
      .config = &s.config,
      .clock = s.clock.get(),
      .random = s.random.get(),
      .api_keys = s.governance->api_keys.get(),
      .forms = s.crm->forms.get(),
      .crm = s.crm.get(),
      .marketing = s.marketing.get(),
      .endpoints = s.webhook_endpoints.get(),
      .deliveries = s.webhook_deliveries.get(),
      .incoming = s.incoming_hooks.get(),
      .metrics = s.metrics.get(),
  });
  s.router.Prefix(s.rest_api->base_path() + "/",
                  [api = s.rest_api.get()](const http::Request& req) { return api->Handle(req); });
}

}  // namespace crmd::app
