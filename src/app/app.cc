#include "src/app/app.h"

#include "src/app/shared_secrets.h"
#include "src/console/api_pages.h"
#include "src/console/approvals.h"
#include "src/console/apps_pages.h"
#include "src/console/forms_pages.h"
#include "src/console/hooks_pages.h"
#include "src/console/links.h"
#include "src/console/overview_pages.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "auth/bearer.h"
#include "auth/token_routes.h"
#include "src/app/services.h"
#include "src/app/shared_secrets.h"
#include "src/console/links.h"
#include "src/core/crypto.h"
#include "src/core/log.h"
#include "src/crm/automation_runs_repo.h"
#include "src/crm/campaign_send_repo.h"
#include "src/http/allowed_hosts.h"
#include "src/http/forwarding.h"
#include "src/webhooks/deliveries_repo.h"
#include "src/webhooks/endpoints_repo.h"
#include "src/http/client.h"
#include "src/webhooks/signing.h"
#include "src/mcp/origin.h"
#include "src/crm/marketing.h"
#include "tools/automations.h"
#include "tools/campaigns.h"
#include "tools/confirm.h"
#include "tools/reports.h"
#include "tools/sequences.h"
#include "tools/contacts.h"
#include "tools/lists.h"
#include "tools/settings.h"
#include "tools/tags.h"
#include "auth/scopes.h"

namespace crmd::app {

App::App() : s_(std::make_unique<Services>()) {}
App::~App() {
  if (s_ && s_->server) s_->server->Stop();
  if (s_ && s_->ops_server) s_->ops_server->Stop();
}

const Config& App::config() const { return s_->config; }
App::Services& App::services() { return *s_; }

namespace {

// The job queues /readyz and /metrics report, read in one snapshot.
struct JobQueues {
  store::QueueStats webhook_deliveries, campaign_sends, automation_steps;
};

Result<JobQueues> ReadJobQueues(store::Database& db, int64_t now) {
  return db.Read([&](store::Conn& c) -> Result<JobQueues> {
    auto w = webhooks::deliveries_repo::QueueStats(c, now);
    if (!w) return Fail(w.error());
    auto k = crm::campaign_send_repo::QueueStats(c, now);
    if (!k) return Fail(k.error());
    auto a = crm::automation_runs_repo::QueueStats(c, now);
    if (!a) return Fail(a.error());
    return JobQueues{*w, *k, *a};
  });
}

nlohmann::json QueueJson(const store::QueueStats& q, int64_t now) {
  return {{"pending", q.pending}, {"due", q.due}, {"lag_seconds", q.LagSeconds(now)}};
}

// /healthz: the process answers. /readyz: this node can serve (database reachable, schema
// at this binary's level), with the job queues' lag for the operator (lag alone does not
// make a node unready: more nodes would not be refused work they could take).
void AddHealthRoutes(App::Services& s, Router& router) {
  router.Exact("/healthz", [](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    return http::Response::Json(200, {{"status", "ok"}});
  });
  router.Exact("/readyz", [&s](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    const int64_t now = s.clock->NowUnix();
    auto level = store::CheckMigrations(*s.db);
    if (!level) {
      spdlog::warn(R"("event":"readyz_database_unavailable","detail":"{}")",
                   JsonEscape(level.error().detail.empty() ? level.error().message : level.error().detail));
      return http::Response::Json(503, {{"status", "unavailable"}, {"database", {{"ok", false}}}});
    }
    nlohmann::json body = {
        {"database", {{"ok", true}, {"dialect", s.db->dialect() == store::Dialect::kSqlite ? "sqlite" : "postgresql"}}},
        {"migrations", {{"expected", level->expected}, {"applied", level->applied}, {"pending", level->pending}}}};
    if (auto q = ReadJobQueues(*s.db, now)) {
      body["jobs"] = {{"webhook_deliveries", QueueJson(q->webhook_deliveries, now)},
                      {"campaign_sends", QueueJson(q->campaign_sends, now)},
                      {"automation_steps", QueueJson(q->automation_steps, now)}};
    } else {
      body["database"]["ok"] = false;
    }
    bool ready = body["database"]["ok"].get<bool>() && level->pending == 0;
    body["status"] = ready ? "ready" : "unavailable";
    return http::Response::Json(ready ? 200 : 503, body);
  });
}

// GET /metrics (Prometheus text format 0.0.4) to clients in metrics_allow only.
void AddMetricsRoute(App::Services& s, Router& router, std::shared_ptr<const http::ProxyTrust> allow) {
  router.Exact("/metrics", [&s, allow](const http::Request& req) {
    if (auto r = RequireMethod(req, "GET, HEAD")) return *r;
    auto ip = http::ParseIp(req.remote_ip);
    if (!ip || !allow->Trusts(*ip))
      return http::Response::Json(403, {{"error", "forbidden"},
                                        {"error_description", "this address may not read metrics (metrics_allow)"}});
    return http::Response::Text(200, s.metrics->Render(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

// Database connections a node opens at most: one per handler thread that may hold one at
// once, capped at 16 + 2. Handler threads beyond the cap wait for a connection in a
// BlockingRegion (src/core/worker_pool.h; both engines), so a PostgreSQL server's
// max_connections is sized by nodes, not by worker_threads (docs/postgres.md).
int DbPoolSize(const Config& c) { return std::min(c.worker_threads, 16) + 2; }

// Values read when scraped: process memory, the database pool, the schema level, job
// queues and webhook endpoints (cheap indexed counts).
void AddCollectors(App::Services& s) {
  metrics::Registry& m = *s.metrics;
  m.AddCollector([&s, &m] {
    m.Gauge("crmd_process_resident_memory_bytes", "Resident set size of the crmd process.")
        .Set(metrics::ProcessRssBytes());
    m.Gauge("crmd_db_pool_size", "Database connections this node may open for transactions.")
        .Set(DbPoolSize(s.config));
    const int64_t now = s.clock->NowUnix();
    auto level = store::CheckMigrations(*s.db);
    auto queues = level ? ReadJobQueues(*s.db, now) : Result<JobQueues>(Fail(level.error()));
    auto endpoints = queues ? s.db->Read([](store::Conn& c) { return webhooks::endpoints_repo::CountByState(c); })
                            : Result<webhooks::endpoints_repo::StateCounts>(Fail(queues.error()));
    m.Gauge("crmd_db_up", "1 when the database answered this scrape's queries.").Set(endpoints ? 1 : 0);
    if (level) {
      m.Gauge("crmd_schema_migrations", "Schema migration level: this binary's (expected), the database's (applied), and how many of this binary's are missing (pending).",
              {{"level", "expected"}}).Set(level->expected);
      m.Gauge("crmd_schema_migrations", "", {{"level", "applied"}}).Set(level->applied);
      m.Gauge("crmd_schema_migrations", "", {{"level", "pending"}}).Set(level->pending);
    }
    if (queues) {
      for (auto [name, q] : {std::pair<std::string_view, const store::QueueStats*>{"webhook_deliveries", &queues->webhook_deliveries},
                             {"campaign_sends", &queues->campaign_sends},
                             {"automation_steps", &queues->automation_steps}}) {
        m.Gauge("crmd_job_queue_pending", "Rows waiting in a job queue (leased ones included).", {{"queue", name}}).Set(q->pending);
        m.Gauge("crmd_job_queue_due", "Rows of a job queue that are due now and not leased.", {{"queue", name}}).Set(q->due);
        m.Gauge("crmd_job_queue_lag_seconds", "How long the oldest due row of a job queue has waited.", {{"queue", name}})
            .Set(q->LagSeconds(now));
      }
    }
    if (endpoints) {
      m.Gauge("crmd_webhook_endpoints", "Outgoing webhook endpoints by state.", {{"state", "enabled"}}).Set(endpoints->enabled);
      m.Gauge("crmd_webhook_endpoints", "", {{"state", "disabled"}}).Set(endpoints->disabled);
      m.Gauge("crmd_webhook_endpoints", "", {{"state", "disabled_after_failures"}}).Set(endpoints->failing_disabled);
    }
  });
}

// --- mcp ---

// Told to every client at initialize (TOOLS.md: explain confirmation and revisions once).
constexpr const char* kMcpInstructions =
    "crmd is a CRM: contacts, lists, tags, campaigns, automations, sequences, settings and "
    "reports. Lists paginate: pass the returned next_cursor as cursor. "
    "Confirmation: destructive or far-reaching tools (deletions, activations) change nothing "
    "on the first call; they return status \"confirmation_required\", a preview of the impact "
    "and a confirmation token. Show the preview to the user and, only after the user agrees, "
    "call confirm_action with that token (it expires after a few minutes and works once). "
    "Some actions also need the user's own approval (approval_required in the preview): "
    "show the user approval_url, where they sign in and approve; you cannot approve. "
    "Revisions: every updatable record has an integer revision; updates take "
    "expected_revision, and a revision_conflict error returns the current record: re-read, "
    "re-apply the change, retry. Errors come back as tool results with isError and a stable "
    "error.code (not_found, validation_failed naming the field, revision_conflict, ...).";

// A refused bearer token on /mcp (RFC 6750 §3, RFC 9728 §5.1, MCP basic/authorization):
// the status and challenge come from auth (one mapping), with every scope as the hint.
http::Response McpUnauthorized(const App::Services& s, const Error& error) {
  std::string scope;
  for (const auto& sc : auth::AllScopes()) scope += (scope.empty() ? "" : " ") + sc;
  int status = auth::BearerStatus(error);
  auto r = http::Response::Json(
      status, {{"jsonrpc", "2.0"},
               {"error", {{"code", -32000}, {"message", status == 503 ? "Service unavailable" : "Unauthorized"}}}});
  if (status != 503) {
    r.Set("WWW-Authenticate",
          auth::BearerChallenge(error, s.config.Issuer() + "/.well-known/oauth-protected-resource/mcp", scope));
  }
  return r;
}

void CreateMcpRegistry(App::Services& s) {
  s.tools = std::make_unique<mcp::ToolRegistry>(mcp::ToolRegistryOptions{
      // Tool output is checked in every build: a mismatch is a bug we want in the logs.
      .validate_output = s.config.mcp_validate_output,
  });
}

Status AddMcpRoutes(App::Services& s) {
  auto state_key = SharedSecret(*s.db, "mcp_request_state_v1", *s.random, *s.clock);
  if (!state_key) return Fail(state_key.error());
  // Sessions live in the database so that every node answers every session.
  s.mcp_sessions = std::make_unique<DbSessions>(DbSessionsOptions{}, *s.db, *s.clock, *s.random);
  s.mcp = std::make_unique<mcp::McpEndpoint>(
      mcp::McpEndpointOptions{
          .server_name = "crmd",
          .server_title = "crmd CRM",
          .server_version = "0.1.0",
          .instructions = kMcpInstructions,
          .resource_metadata_url = s.config.Issuer() + "/.well-known/oauth-protected-resource/mcp",
          .shared_sessions = s.mcp_sessions.get(),
          .rate_limit = {.per_second = s.config.mcp_calls_per_second,
                         .burst = s.config.mcp_calls_burst},
          // 2026-07-28 requestState is sealed with a key every node on the database
          // shares (server_secrets), so any node finishes a round trip another started,
          // also after a restart.
          .request_state_keys = {{.id = "s1", .secret = std::move(*state_key)}},
          .metrics = s.metrics.get(),
      },
      *s.tools, *s.clock, *s.random);
  auto policy = std::make_shared<mcp::OriginPolicy>(
      mcp::MakeOriginPolicy(s.config.Issuer(), s.config.allowed_origins));
  s.router.Exact("/mcp", [&s, policy](const http::Request& req) {
    // DNS rebinding first: a foreign Host or Origin learns nothing, not even 401.
    if (auto refused = mcp::CheckOriginAndHost(req, *policy)) return *refused;
    // A browser's preflight carries no token; the Origin is already known to be allowed.
    if (req.method == "OPTIONS") return mcp::CorsPreflight(req);
    http::Response res = [&] {
      // The guard also refuses a token in the query string (invalid_request).
      Result<Principal> principal =
          Fail(Errc::kUnauthenticated, "authorization required", std::string(auth::kBearerMissing));
      if (s.authenticate) principal = s.authenticate(req);
      if (!principal) return McpUnauthorized(s, principal.error());
      return s.mcp->Handle(req, *principal);
    }();
    mcp::AddCorsHeaders(req, res);
    return res;
  });
  return Ok();
}

// --- authz: users, client registry, registration, authorization pages ---
Status WireAuthz(App::Services& s) {
  s.users = std::make_unique<auth::Users>(*s.db, *s.clock);
  s.clients = std::make_unique<auth::ClientStore>(*s.db, *s.clock);
  s.rate_limiter = std::make_unique<auth::RateLimiter>(*s.db, *s.clock);
  s.cimd = std::make_unique<auth::CimdResolver>(
      *s.clients, *s.http_client, *s.clock,
      auth::CimdOptions{.allow_private = s.config.allow_private_network_targets});
  s.login_sessions = std::make_unique<auth::LoginSessions>(*s.db, *s.clock, *s.random);
  s.consents = std::make_unique<auth::Consents>(*s.db, *s.clock);
  s.registration = std::make_unique<auth::Registration>(
      *s.clients, *s.rate_limiter, *s.random, *s.clock, auth::RegistrationOptions{.issuer = s.config.Issuer()});
  s.authorization = std::make_unique<auth::AuthorizationEndpoint>(
      auth::AuthorizeServices{.db = *s.db,
                              .clients = *s.clients,
                              .cimd = *s.cimd,
                              .users = *s.users,
                              .sessions = *s.login_sessions,
                              .consents = *s.consents,
                              .limiter = *s.rate_limiter,
                              .random = *s.random,
                              .clock = *s.clock},
      auth::AuthorizeOptions{.issuer = s.config.Issuer(),
                             .resource = s.config.McpResource(),
                             .allowed_origins = s.config.allowed_origins,
                             .auth_code_ttl = s.config.auth_code_ttl});
  s.router.Exact("/oauth/register", [&s](const http::Request& r) { return s.registration->HandleRegister(r); });
  s.router.Prefix("/oauth/register/", [&s](const http::Request& r) { return s.registration->HandleConfiguration(r); });
  s.router.Exact("/oauth/authorize", [&s](const http::Request& r) { return s.authorization->HandleAuthorize(r); });
  s.router.Exact("/oauth/login", [&s](const http::Request& r) { return s.authorization->HandleLogin(r); });
  s.router.Exact("/oauth/consent", [&s](const http::Request& r) { return s.authorization->HandleConsent(r); });

  // The console's sign-in (the approval pages and the web console): the same accounts,
  // session cookie and rate limits as the OAuth login page.
  s.person_sign_in = std::make_unique<auth::PersonSignIn>(
      *s.users, *s.login_sessions, *s.rate_limiter, *s.random,
      auth::PersonSignInOptions{.issuer = s.config.Issuer(),
                                .allowed_origins = s.config.allowed_origins});
  s.grants = std::make_unique<auth::Grants>(*s.db, *s.clock);

  // First start: without any admin there is no way to sign in, so create one and show its
  // password once, on stdout (never in the log).
  auto admins = s.users->CountAdmins();
  if (!admins) return Fail(admins.error());
  if (*admins == 0) {
    const std::string email = "admin@localhost";
    std::string password = s.random->Token(18);
    auto user = s.users->Create(email, password, true);
    if (user) {
      std::printf(
          "crmd: created the first administrator\n  email:    %s\n  password: %s\n"
          "  (shown only now; change it with: crmctl user password %s)\n",
          user->email.c_str(), password.c_str(), user->email.c_str());
      std::fflush(stdout);
    } else if (user.error().code != Errc::kAlreadyExists) {
      return Fail(user.error());
    }
  }
  return Ok();
}

// The web console under /console (src/console): sign-in, overview, approvals, connected
// apps, Webhook & API, audit. It calls the same services as the tools, REST and crmctl.
console::ConsolePeople ConsolePeopleOf(App::Services& s) {
  auth::PersonSignIn* sign_in = s.person_sign_in.get();
  return console::ConsolePeople{
      .current = [sign_in](const http::Request& req) -> Result<std::optional<console::Person>> {
        auto who = sign_in->Current(req);
        if (!who) return Fail(who.error());
        if (!*who) return std::optional<console::Person>{};
        // The subject of this person's OAuth grants (auth/grant_common.cc GrantSubject).
        return std::optional<console::Person>(
            console::Person{.subject = std::to_string((*who)->user.id),
                            .email = (*who)->user.email,
                            .csrf_token = (*who)->session.csrf_token,
                            .is_admin = (*who)->user.is_admin});
      },
      .sign_in = [sign_in](const http::Request& req, const std::string& email,
                           const std::string& password) {
        auto attempt = sign_in->SignIn(req, email, password);
        return console::SignInResult{.ok = attempt.user.has_value(),
                                     .status = attempt.status,
                                     .error = attempt.error,
                                     .set_cookies = std::move(attempt.set_cookies)};
      },
      .origin_allowed = [sign_in](const http::Request& req) { return sign_in->OriginAllowed(req); },
      .sign_out = [sign_in](const http::Request& req) { return sign_in->SignOut(req); },
      .login_form_token =
          [sign_in](const http::Request& req) {
            auto t = sign_in->IssueLoginFormToken(req);
            return std::make_pair(std::move(t.token), std::move(t.set_cookie));
          },
      .login_form_token_valid =
          [sign_in](const http::Request& req, const std::string& presented) {
            return sign_in->LoginFormTokenValid(req, presented);
          },
  };
}

console::ConnectedAppsSource ConnectedAppsOf(App::Services& s) {
  return console::ConnectedAppsSource{
      .clients = [&s]() -> Result<std::vector<console::AppClient>> {
        auto list = s.clients->List();
        if (!list) return Fail(list.error());
        std::vector<console::AppClient> out;
        for (const auto& c : *list)
          out.push_back({.client_id = c.client_id,
                         .name = c.DisplayName(),
                         .source = c.source,
                         .revoked = c.revoked,
                         .created_at = c.created_at});
        return out;
      },
      .grants = [&s]() -> Result<std::vector<console::AppGrant>> {
        auto list = s.grants->List(std::nullopt);
        if (!list) return Fail(list.error());
        std::vector<console::AppGrant> out;
        for (const auto& g : *list)
          out.push_back({.grant_id = g.grant_id,
                         .client_id = g.client_id,
                         .user_email = g.user_email,
                         .scope = g.scope,
                         .created_at = g.created_at,
                         .revoked_at = g.revoked_at});
        return out;
      },
      .revoke_grant = [&s](const std::string& grant_id) -> Status {
        if (auto st = s.grants->Revoke(grant_id); !st) return st;
        s.tokens->RevocationsChanged();
        return Ok();
      },
      .revoke_client = [&s](const std::string& client_id) -> Status {
        if (auto st = s.clients->Revoke(client_id); !st) return st;
        s.tokens->RevocationsChanged();
        return Ok();
      },
      .consents = [&s]() -> Result<std::vector<console::AppConsent>> {
        auto list = s.consents->List();
        if (!list) return Fail(list.error());
        std::vector<console::AppConsent> out;
        for (const auto& c : *list)
          if (!c.revoked_at)
            out.push_back({.client_id = c.client_id,
                           .user_id = c.user_id,
                           .user_email = c.user_email,
                           .scope = c.scope,
                           .created_at = c.created_at});
        return out;
      },
      .revoke_consent = [&s](const std::string& client_id, int64_t user_id) -> Status {
        auto n = s.consents->Revoke(client_id, user_id);
        if (!n) return Fail(n.error());
        s.tokens->RevocationsChanged();
        return Ok();
      },
  };
}

void WireConsole(App::Services& s) {
  console::ConsoleRoutes routes = console::SessionRoutes(ConsolePeopleOf(s));
  routes.Append(console::ApprovalRoutes(
      {.confirmations = s.crm->confirmations.get(), .people = ConsolePeopleOf(s)}));
  routes.Append(console::OverviewRoutes({.reports = s.crm->reports.get(),
                                         .audit = s.crm->audit.get(),
                                         .people = ConsolePeopleOf(s)}));
  routes.Append(console::AppsRoutes(
      {.apps = ConnectedAppsOf(s), .audit = s.crm->audit.get(), .people = ConsolePeopleOf(s)}));
  routes.Append(console::ApiRoutes({.api_keys = s.api_keys.get(),
                                    .endpoints = s.webhook_endpoints.get(),
                                    .deliveries = s.webhook_deliveries.get(),
                                    .people = ConsolePeopleOf(s),
                                    .rest_base_url = s.config.Issuer() + s.rest_api->base_path()}));
  routes.Append(console::FormsRoutes({.forms = s.forms.get(),
                                      .people = ConsolePeopleOf(s),
                                      .rest_base_url = s.config.Issuer() + s.rest_api->base_path()}));
  routes.Append(console::HooksRoutes({.hooks = s.incoming_hooks.get(),
                                      .people = ConsolePeopleOf(s),
                                      .rest_base_url = s.config.Issuer() + s.rest_api->base_path()}));
  for (auto& [path, handler] : routes.exact) s.router.Exact(path, std::move(handler));
  for (auto& [prefix, handler] : routes.prefix) s.router.Prefix(prefix, std::move(handler));
}

// The host of an http(s) URL, for the default sender address.
std::string UrlHost(const std::string& url) {
  auto scheme = url.find("://");
  std::string rest = scheme == std::string::npos ? url : url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (!rest.empty() && rest.front() == '[') return "localhost";
  rest = rest.substr(0, rest.find(':'));
  if (rest.empty() || rest.find('.') == std::string::npos) return "localhost";
  return rest;
}

Status WireMail(App::Services& s) {
  auto secret = SharedSecret(*s.db, "mail_link_tokens_v1", *s.random, *s.clock);
  if (!secret) return Fail(secret.error());
  s.link_tokens = std::make_unique<mail::LinkTokens>(*secret, *s.clock);
  std::string from = s.config.mail_from;
  if (from.empty()) from = "crmd@" + UrlHost(s.config.Issuer());
  jobs::MailRuntimeOptions options{
      .smtp_url = s.config.smtp_url,
      .mail_dir = s.config.mail_dir,
      .rate_per_second = s.config.mail_rate_per_second,
      .context = {.public_base_url = s.config.Issuer(),
                  .default_sender = {"", from},
                  .links = s.link_tokens.get()},
  };
  if (!s.config.dkim_private_key_file.empty()) {
    options.dkim = mail::DkimOptions{.private_key_file = s.config.dkim_private_key_file,
                                     .selector = s.config.dkim_selector,
                                     .domain = s.config.dkim_domain};
  }
  auto runtime = jobs::MailRuntime::Create(std::move(options), *s.clock);
  if (!runtime) return Fail(runtime.error());
  s.mail_runtime = std::move(*runtime);
  s.crm->delivery->set_policy({.lease_s = s.config.mail_lease_s});
  s.crm->campaigns->SetMail(&s.mail_runtime->context(), s.crm->settings.get());
  s.campaign_sender = std::make_unique<jobs::CampaignSender>(
      *s.crm->delivery, *s.crm->campaigns, *s.crm->settings, *s.mail_runtime, *s.clock,
      jobs::CampaignSenderOptions{.concurrency = s.config.mail_concurrency,
                                  .poll_interval_ms = s.config.mail_poll_interval_ms,
                                  .metrics = s.metrics.get()});
  s.automation_runs = std::make_unique<crm::AutomationRuns>(
      *s.db, *s.clock, *s.crm->contacts, crm::RunPolicy{.lease_s = s.config.mail_lease_s});
  // call_webhook steps are signed with the secret of a webhook endpoint registered at the
  // same URL, else with this site's automation secret (docs/marketing.md).
  auto node_secret = SharedSecret(*s.db, "automation_webhooks_v1", *s.random, *s.clock);
  if (!node_secret) return Fail(node_secret.error());
  std::string fallback = std::string(webhooks::kSecretPrefix) + crypto::Base64Encode(*node_secret);
  jobs::WebhookSecretFor secret_for =
      [endpoints = s.webhook_endpoints.get(), fallback](const std::string& url) -> Result<std::string> {
    auto found = endpoints->SecretForUrl(url);
    if (!found) return Fail(found.error());
    return found->value_or(fallback);
  };
  s.automation_runner = std::make_unique<jobs::AutomationRunner>(
      *s.automation_runs, *s.crm->settings, *s.mail_runtime, *s.http_client, std::move(secret_for),
      *s.clock,
      jobs::AutomationRunnerOptions{.poll_interval_ms = s.config.mail_poll_interval_ms,
                                    .allow_private = s.config.allow_private_network_targets,
                                    .webhook_timeout_ms = s.config.webhook_timeout_ms,
                                    .metrics = s.metrics.get()});
  std::string business;
  if (auto doc = s.crm->settings->Get(); doc && doc->document.contains("business"))
    business = doc->document["business"].value("name", "");
  for (auto& [prefix, handler] : console::LinkRoutes({.delivery = s.crm->delivery.get(),
                                                      .contacts = s.crm->contacts.get(),
                                                      .tokens = s.link_tokens.get(),
                                                      .business_name = business}))
    s.router.Prefix(prefix, std::move(handler));
  return Ok();
}

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
  });

  s.server = std::make_unique<http::Server>(
      http::ServerOptions{
          .address = s.config.listen_address,
          .port = s.config.port,
          .tls_cert_file = s.config.tls_cert_file,
          .tls_key_file = s.config.tls_key_file,
          .io_threads = s.config.io_threads,
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
    // "host:port", "[v6]:port".
    const std::string& a = s.config.metrics_listen_address;
    auto colon = a.rfind(':');
    std::string host = colon == std::string::npos ? "" : a.substr(0, colon);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    int port = 0;
    try {
      port = colon == std::string::npos ? -1 : std::stoi(a.substr(colon + 1));
    } catch (...) {
      port = -1;
    }
    if (host.empty() || port < 0 || port > 65535)
      return Fail(Errc::kInvalidArgument, "metrics_listen_address must be host:port");
    AddHealthRoutes(s, s.ops_router);
    AddMetricsRoute(s, s.ops_router, allow);
    s.ops_server = std::make_unique<http::Server>(
        http::ServerOptions{.address = host,
                            .port = static_cast<uint16_t>(port),
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

  // --- crm: core services (contacts, lists, tags, settings, confirmations, audit) ---
  s.resolver = crm::MakeSystemResolver();
  auto crm_services = crm::MakeServices({.db = s.db.get(), .clock = s.clock.get(),
                                         .random = s.random.get(), .resolver = s.resolver.get()});
  if (!crm_services) return Fail(crm_services.error());
  s.crm = std::move(*crm_services);
  // Approval links point at this server's console (its public URL).
  s.crm->confirmations->SetApprovalUrlBase(s.config.Issuer());
  s.crm->confirmations->SetMetrics(s.metrics.get());
  // --- marketing: campaigns, automations, sequences, reports; confirmation actions; usage ---
  if (auto st = crm::InstallMarketing(*s.crm); !st) return Fail(st.error());

  // --- mcp: the registry first, so that the tools section can register into it ---
  CreateMcpRegistry(s);

  // --- tools: call tools::Register<Area>Tools(*s.tools, ...) here; a failure is fatal ---
  // e.g.  if (auto st = tools::RegisterContactTools(*s.tools, ...); !st) return Fail(st.error());
  // tools (contacts helper): contacts, lists, tags, confirm_action, settings.
  for (auto reg : {tools::RegisterContactTools, tools::RegisterListTools, tools::RegisterTagTools,
                   tools::RegisterConfirmTools, tools::RegisterSettingsTools,
                   tools::RegisterCampaignTools, tools::RegisterAutomationTools,
                   tools::RegisterSequenceTools, tools::RegisterReportTools}) {
    if (auto st = reg(*s.tools, *s.crm); !st) return Fail(st.error());
  }

  // --- mcp: the /mcp route (Origin/Host check, bearer authentication, endpoint) ---
  if (auto st = AddMcpRoutes(s); !st) return Fail(st.error());

  if (auto st = WireAuthz(s); !st) return Fail(st.error());

  // rest: API keys, REST API v1 under /<rest_root>/<rest_namespace>/v1.
  s.api_keys = std::make_unique<crm::ApiKeys>(*s.db, *s.clock, *s.random);
  s.forms = std::make_unique<crm::FormRepo>(*s.db, *s.clock, s.crm->contacts.get());
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
      .api_keys = s.api_keys.get(),
      .forms = s.forms.get(),
      .crm = s.crm.get(),
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

  s.housekeeping = std::make_unique<Housekeeping>(
      *s.db, *s.clock,
      HousekeepingOptions{.interval_s = s.config.housekeeping_interval_s,
                          .retention_days = s.config.retention_days});

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
