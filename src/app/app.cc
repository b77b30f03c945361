#include "src/app/app.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "auth/bearer.h"
#include "auth/token_routes.h"
#include "src/app/services.h"
#include "src/app/wiring.h"
#include "src/core/worker_pool.h"
#include "src/marketing/services.h"
#include "src/http/allowed_hosts.h"
#include "src/http/client.h"
#include "src/http/forwarding.h"
#include "tools/automations.h"
#include "tools/campaigns.h"
#include "tools/confirm.h"
#include "tools/contacts.h"
#include "tools/lists.h"
#include "tools/reports.h"
#include "tools/sequences.h"
#include "tools/settings.h"
#include "tools/tags.h"

namespace crmd::app {

App::App() : s_(std::make_unique<Services>()) {}
App::~App() {
  if (s_ && s_->server) s_->server->Stop();
  if (s_ && s_->ops_server) s_->ops_server->Stop();
}

const Config& App::config() const { return s_->config; }
App::Services& App::services() { return *s_; }

namespace {

// Database connections a node opens at most: one per handler thread that may hold one at
// once, capped at 16 + 2. Handler threads beyond the cap wait for a connection in a
// BlockingRegion (src/core/worker_pool.h; both engines), so a PostgreSQL server's
// max_connections is sized by nodes, not by worker_threads (docs/postgres.md).
int DbPoolSize(const Config& c) { return std::min(c.worker_threads, 16) + 2; }

}  // namespace

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
  auto metrics_allow = http::ProxyTrust::Parse(s.config.metrics_allow);
  if (!metrics_allow)
    return Fail(Errc::kInvalidArgument, "metrics_allow: an entry is not an IP address or CIDR range",
                metrics_allow.error().message);
  auto allow = std::make_shared<const http::ProxyTrust>(std::move(*metrics_allow));

  auto db = store::Open(s.config.database_url, DbPoolSize(s.config));
  if (!db) return Fail(db.error());
  s.db = std::move(*db);
  s.db->set_metrics(store::DbMetrics{
      .read_seconds = &s.metrics->Histogram("crmd_db_transaction_duration_seconds",
                                            "Database transactions (waiting for a connection included).",
                                            {{"kind", "read"}}),
      .write_seconds = &s.metrics->Histogram("crmd_db_transaction_duration_seconds", "", {{"kind", "write"}}),
      .in_flight = &s.metrics->Gauge("crmd_db_transactions_in_flight",
                                     "Transactions running or waiting for a pooled connection."),
      .failed = &s.metrics->Counter("crmd_db_transactions_failed_total",
                                    "Transactions that returned an error and were rolled back."),
      .group_commit_seconds = &s.metrics->Histogram(
          "crmd_db_group_commit_duration_seconds",
          "SQLite: one group commit (a batch of concurrent writes in one transaction), its "
          "fsync included; writes per commit = write transactions / this count."),
  });

  s.server = std::make_unique<http::Server>(
      http::ServerOptions{
          .address = s.config.listen_address,
          .port = s.config.port,
          .tls_cert_file = s.config.tls_cert_file,
          .tls_key_file = s.config.tls_key_file,
          .io_threads = s.config.io_threads > 0 ? s.config.io_threads : WorkerPool::Cores(),
          .worker_threads = s.config.worker_threads,
          .max_header_bytes = s.config.max_header_bytes,
          .max_body_bytes = s.config.max_body_bytes,
          .read_timeout_s = s.config.read_timeout_s,
          .idle_timeout_s = s.config.idle_timeout_s,
          .max_connections = s.config.max_connections,
          .shutdown_grace_s = s.config.shutdown_grace_s,
          .access_log = spdlog::get_level() <= spdlog::level::info,
          // The issuer's host does not depend on the port, so a port-0 listener's default
          // is right before Listen() knows the port.
          .allowed_hosts = s.config.allowed_hosts.empty()
                               ? http::DefaultAllowedHosts(s.config.Issuer())
                               : s.config.allowed_hosts,
          .trusted_proxies = s.config.trusted_proxies,
      },
      [&s](const http::Request& req) { return s.router.Dispatch(req); });
  // Bind now so that a port-0 listener's real port is known before the issuer is fixed.
  auto port = s.server->Listen();
  if (!port) return Fail(port.error());
  if (s.config.public_base_url.empty()) s.config.port = *port;

  AddHealthRoutes(s, s.router);
  AddMetricsRoute(s, s.router, allow);
  AddCollectors(s);
  if (!s.config.metrics_listen_address.empty()) {
    // Config::Validate() has refused a malformed address already; this is for a Config
    // built in code.
    auto hp = SplitHostPort(s.config.metrics_listen_address);
    if (!hp) return Fail(hp.error());
    AddHealthRoutes(s, s.ops_router);
    AddMetricsRoute(s, s.ops_router, allow);
    s.ops_server = std::make_unique<http::Server>(
        http::ServerOptions{.address = hp->host,
                            .port = hp->port,
                            .io_threads = 1,
                            .worker_threads = 1,
                            .max_body_bytes = 1024,
                            .max_connections = 64,
                            .shutdown_grace_s = s.config.shutdown_grace_s,
                            .access_log = false,
                            .trusted_proxies = s.config.trusted_proxies},
        [&s](const http::Request& req) { return s.ops_router.Dispatch(req); });
    if (auto bound = s.ops_server->Listen(); !bound) return Fail(bound.error());
  }

  // --- module wiring (each module adds its own section below) ---

  // auth, token side: /oauth/token, /oauth/revoke, /oauth/introspect, JWKS, metadata and
  // the bearer guard behind s.authenticate.
  s.tokens = std::make_unique<auth::TokenService>(
      auth::TokenServiceOptions{.issuer = s.config.Issuer(),
                                .resource = s.config.McpResource(),
                                .access_token_ttl = s.config.access_token_ttl,
                                .refresh_token_ttl = s.config.refresh_token_ttl,
                                .signing_key_rotation = s.config.signing_key_rotation},
      *s.db, *s.clock, *s.random);
  s.bearer = std::make_unique<auth::BearerGuard>(*s.tokens);
  s.authenticate = [&s](const http::Request& req) {
    auto principal = s.bearer->Authenticate(req);
    if (!principal) {
      // RFC 6750 §3.1's words (missing, invalid_request, invalid_token) or "unavailable".
      std::string_view reason = principal.error().code == Errc::kUnavailable ? "unavailable"
                                : principal.error().detail == auth::kBearerMissing
                                    ? auth::kBearerMissing
                                : principal.error().detail == auth::kBearerInvalidRequest
                                    ? auth::kBearerInvalidRequest
                                    : auth::kBearerInvalidToken;
      s.metrics->Counter("crmd_bearer_refused_total", "Requests whose bearer token was refused, by reason.",
                         {{"reason", reason}})
          .Inc();
    }
    return principal;
  };
  for (auto& route : auth::TokenRoutes(*s.tokens)) {
    if (route.path == "/oauth/token") {
      // Tokens issued by grant type, token requests refused by OAuth error code (RFC 6749
      // §5.2); the label values are the RFC's fixed words, others become "other".
      route.handler = [&s, inner = std::move(route.handler)](const http::Request& req) {
        http::Response res = inner(req);
        if (req.method != "POST") return res;
        auto known = [](std::string_view v, std::initializer_list<std::string_view> words) {
          for (auto w : words)
            if (v == w) return w;
          return std::string_view("other");
        };
        if (res.status == 200) {
          std::string grant = http::FormValue(http::ParseForm(req.body), "grant_type").value_or("");
          s.metrics->Counter("crmd_oauth_tokens_issued_total", "Access tokens issued, by grant type.",
                             {{"grant_type", known(grant, {"authorization_code", "refresh_token",
                                                           "client_credentials"})}})
              .Inc();
        } else {
          auto body = nlohmann::json::parse(res.body, nullptr, false);
          std::string error = body.is_object() ? body.value("error", "") : "";
          auto code = known(error, {"invalid_request", "invalid_client", "invalid_grant",
                                    "unauthorized_client", "unsupported_grant_type", "invalid_scope",
                                    "invalid_target", "temporarily_unavailable", "server_error"});
          s.metrics->Counter("crmd_oauth_token_refused_total", "Token requests refused, by OAuth error code.",
                             {{"error", code}})
              .Inc();
          s.metrics->Counter("crmd_errors_total", "Errors answered, by face and stable error code.",
                             {{"face", "oauth"}, {"code", code}})
              .Inc();
        }
        return res;
      };
    }
    s.router.Exact(std::move(route.path), std::move(route.handler));
  }

  // --- the domain: governance, the contact book, marketing (src/governance, src/crm,
  // src/marketing); each registers its confirmation actions ---
  if (auto st = BuildDomain(s); !st) return Fail(st.error());

  // --- mcp: the registry first, so that the tools section can register into it ---
  CreateMcpRegistry(s);

  // --- tools: call tools::Register<Area>Tools(*s.tools, ...) here; a failure is fatal ---
  // e.g.  if (auto st = tools::RegisterContactTools(*s.tools, ...); !st) return Fail(st.error());
  // tools (contacts helper): contacts, lists, tags, confirm_action, settings.
  for (auto reg : {tools::RegisterContactTools, tools::RegisterListTools, tools::RegisterTagTools,
                   tools::RegisterConfirmTools, tools::RegisterSettingsTools,
                   tools::RegisterCampaignTools, tools::RegisterAutomationTools,
                   tools::RegisterSequenceTools, tools::RegisterReportTools}) {
    if (auto st = reg(*s.tools, *s.marketing); !st) return Fail(st.error());
  }

  // --- mcp: the /mcp route (Origin/Host check, bearer authentication, endpoint) ---
  if (auto st = AddMcpRoutes(s); !st) return Fail(st.error());

  if (auto st = WireAuthz(s); !st) return Fail(st.error());

  // rest: API keys, REST API v1 under /<rest_root>/<rest_namespace>/v1.
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

  // jobs: email (docs/mail.md).
  if (auto st = WireMail(s); !st) return Fail(st.error());

  // console: the web console under /console.
  WireConsole(s);

  s.housekeeping = std::make_unique<jobs::Housekeeping>(
      *s.db, *s.clock,
      jobs::HousekeepingOptions{
          .interval_s = s.config.housekeeping_interval_s,
          .retention_days = s.config.retention_days,
          // Idle past the MCP session TTL (1 h) plus the touch granularity.
          .more_rules = {{"mcp_sessions", &DeleteMcpSessionsIdleSince,
                          [](int64_t now, int64_t) { return now - 2 * 3600; }}}});

  return app;
}

Result<uint16_t> App::Start() {
  s_->server->Run();
  if (s_->ops_server) s_->ops_server->Run();
  if (s_->webhook_worker) s_->webhook_worker->Start();  // rest: outgoing webhooks
  if (s_->housekeeping) s_->housekeeping->Start();
  if (s_->campaign_sender) s_->campaign_sender->Start();
  if (s_->automation_runner) s_->automation_runner->Start();
  spdlog::info(R"("event":"listening","issuer":"{}")", s_->config.Issuer());
  return s_->config.port;
}

void App::Stop() {
  s_->server->Stop();
  if (s_->ops_server) s_->ops_server->Stop();
  if (s_->webhook_worker) s_->webhook_worker->Stop();  // rest: outgoing webhooks
  if (s_->housekeeping) s_->housekeeping->Stop();
  if (s_->campaign_sender) s_->campaign_sender->Stop();
  if (s_->automation_runner) s_->automation_runner->Stop();
}
void App::Wait() { s_->server->Wait(); }
void App::StopOnSignals() { s_->server->StopOnSignals(); }

}  // namespace crmd::app
