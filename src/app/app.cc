#include "src/app/app.h"

#include <spdlog/spdlog.h>

#include "src/app/services.h"
#include "src/app/wiring.h"
#include "src/http/client.h"

namespace crmd::app {

App::App() : s_(std::make_unique<Services>()) {}
App::~App() {
  if (s_ && s_->server) s_->server->Stop();
  if (s_ && s_->ops_server) s_->ops_server->Stop();
}

const Config& App::config() const { return s_->config; }
App::Services& App::services() { return *s_; }

Result<std::unique_ptr<App>> App::Create(Config config) {
  std::unique_ptr<App> app(new App());
  Services& s = *app->s_;
  s.config = std::move(config);
  s.clock = std::make_unique<SystemClock>();
  s.random = std::make_unique<SecureRandom>();
  s.http_client = http::MakeHttpClient();
  s.metrics = std::make_unique<metrics::Registry>();
  s.router.SetMetrics(s.metrics.get(), rest::RestBasePath(s.config));
  s.ops_router.SetMetrics(s.metrics.get(), "");
  // The database, the listeners (a port-0 listener's port is known after this), health,
  // metrics and the optional operations listener.
  if (auto st = WireTransport(s); !st) return Fail(st.error());

  // auth, token side: /oauth/token, /oauth/revoke, /oauth/introspect, JWKS, metadata and
  // the bearer guard behind s.authenticate.
  WireTokens(s);

  // --- the domain: governance, the contact book, marketing (src/governance, src/crm,
  // src/marketing); each registers its confirmation actions ---
  if (auto st = BuildDomain(s); !st) return Fail(st.error());

  // --- mcp: the registry first, so that the tools section can register into it ---
  CreateMcpRegistry(s);

  // --- tools: the 48 tools, by area, into the registry ---
  if (auto st = RegisterTools(s); !st) return Fail(st.error());

  // --- mcp: the /mcp route (Origin/Host check, bearer authentication, endpoint) ---
  if (auto st = AddMcpRoutes(s); !st) return Fail(st.error());

  if (auto st = WireAuthz(s); !st) return Fail(st.error());

  // webhooks: outgoing (endpoints, deliveries, the delivery worker) and incoming.
  WireWebhooks(s);
  // rest: REST API v1 under /<rest_root>/<rest_namespace>/v1.
  WireRest(s);

  // jobs: email (docs/mail.md).
  if (auto st = WireMail(s); !st) return Fail(st.error());

  // console: the web console under /console.
  WireConsole(s);

  // jobs: the housekeeping sweep.
  WireHousekeeping(s);

  return app;
}

Result<uint16_t> App::Start() {
  s_->server->Run();
  if (s_->ops_server) s_->ops_server->Run();
  if (s_->webhook_worker) s_->webhook_worker->Start();  // rest: outgoing webhooks
  if (s_->housekeeping) s_->housekeeping->Start();
  if (s_->import_runner) s_->import_runner->Start();
  if (s_->campaign_sender) s_->campaign_sender->Start();
  if (s_->automation_runner) s_->automation_runner->Start();
  if (s_->bounce_poller) s_->bounce_poller->Start();
  spdlog::info(R"("event":"listening","issuer":"{}")", s_->config.Issuer());
  return s_->config.port;
}

void App::Stop() {
  s_->server->Stop();
  if (s_->ops_server) s_->ops_server->Stop();
  if (s_->webhook_worker) s_->webhook_worker->Stop();  // rest: outgoing webhooks
  if (s_->housekeeping) s_->housekeeping->Stop();
  if (s_->import_runner) s_->import_runner->Stop();
  if (s_->campaign_sender) s_->campaign_sender->Stop();
  if (s_->automation_runner) s_->automation_runner->Stop();
  if (s_->bounce_poller) s_->bounce_poller->Stop();
}
void App::Wait() { s_->server->Wait(); }
void App::StopOnSignals() { s_->server->StopOnSignals(); }

}  // namespace crmd::app
