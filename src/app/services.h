#pragma once
// Everything the composition root owns. Each module adds its services here and wires
// them in app.cc (its own section). Only src/app and tests include this header.
#include <functional>
#include <memory>

#include "auth/authorize.h"
#include "auth/bearer.h"
#include "auth/cimd.h"
#include "auth/clients.h"
#include "auth/consent.h"
#include "auth/grants.h"
#include "auth/login_session.h"
#include "auth/person_sign_in.h"
#include "auth/rate_limit.h"
#include "auth/registration.h"
#include "auth/sign_in_throttle.h"
#include "auth/token_service.h"
#include "auth/users.h"
#include "src/app/app.h"
#include "src/app/mcp_sessions.h"
#include "src/app/router.h"
#include "src/core/clock.h"
#include "src/core/config.h"
#include "src/core/http_client.h"
#include "src/core/metrics.h"
#include "src/core/principal.h"
#include "src/core/random.h"
#include "src/crm/services.h"
#include "src/governance/services.h"
#include "src/http/server.h"
#include "src/jobs/automation_runner.h"
#include "src/jobs/bounce_poller.h"
#include "src/jobs/campaign_sender.h"
#include "src/jobs/housekeeping.h"
#include "src/jobs/import_runner.h"
#include "src/jobs/mail_runtime.h"
#include "src/mail/unsubscribe.h"
#include "src/marketing/services.h"
#include "src/marketing/usage.h"
#include "src/mcp/endpoint.h"
#include "src/mcp/registry.h"
#include "src/rest/rest_api.h"
#include "src/store/db.h"
#include "src/webhooks/deliveries.h"
#include "src/webhooks/endpoints.h"
#include "src/webhooks/incoming.h"
#include "src/webhooks/worker.h"

namespace crmd::app {

struct App::Services {
  Config config;
  // ops: every metric GET /metrics shows (docs/operations.md); declared first so that it
  // outlives everything that records into it.
  std::unique_ptr<metrics::Registry> metrics;
  std::unique_ptr<Clock> clock;
  std::unique_ptr<Random> random;
  std::unique_ptr<store::Database> db;
  // database_read_url's standby behind a router (src/store/replica.h), or null; handed to
  // the services whose reads tolerate lag (reports, exports). Declared after `db`, which
  // it refers to, so destroyed before it.
  std::unique_ptr<store::Database> read_db;
  std::unique_ptr<http::HttpClient> http_client;
  std::unique_ptr<http::Server> server;
  Router router;
  // ops: the optional second listener (metrics_listen_address) and its routes.
  std::unique_ptr<http::Server> ops_server;
  Router ops_router;
  // Set by auth: verifies a request's bearer token (signature, expiry, issuer, audience =
  // config.McpResource(), revocation). kUnauthenticated when missing or invalid; the
  // message says which (for WWW-Authenticate error_description).
  std::function<Result<std::shared_ptr<const Principal>>(const http::Request&)> authenticate;

  // --- module services (each module adds its own members below) ---

  // mcp: the tool registry (tools register into it in app.cc's "tools" section) and the
  // /mcp endpoint serving it.
  std::unique_ptr<mcp::ToolRegistry> tools;
  std::unique_ptr<mcp::UiResources> mcp_views;  // MCP Apps views (tools/views.h)
  std::unique_ptr<DbSessions> mcp_sessions;     // the endpoint's sessions, in the database
  std::unique_ptr<mcp::McpEndpoint> mcp;

  // auth, token side: access-token minting/verification, signing keys, bearer guard.
  std::unique_ptr<auth::TokenService> tokens;
  std::unique_ptr<auth::BearerGuard> bearer;

  // authz: users, clients, registration, authorization pages (auth/*.h).
  std::unique_ptr<auth::Users> users;
  std::unique_ptr<auth::ClientStore> clients;
  std::unique_ptr<auth::RateLimiter> rate_limiter;
  // Failed sign-ins, on the OAuth login page and the console alike.
  std::unique_ptr<auth::SignInThrottle> sign_in_throttle;
  std::unique_ptr<auth::CimdResolver> cimd;
  std::unique_ptr<auth::LoginSessions> login_sessions;
  std::unique_ptr<auth::Consents> consents;
  std::unique_ptr<auth::Registration> registration;
  std::unique_ptr<auth::AuthorizationEndpoint> authorization;
  // The console's sign-in (approval pages): same accounts, sessions and throttle.
  std::unique_ptr<auth::PersonSignIn> person_sign_in;
  // Grants as the console's Connected apps page lists and revokes them.
  std::unique_ptr<auth::Grants> grants;

  // The domain, in its three rooms (each built on the ones before it): governance (audit,
  // idempotency, settings, confirmations, API keys), the contact book (with the DNS
  // resolver email validation uses, and marketing's usage hooks), marketing.
  std::unique_ptr<crm::Resolver> resolver;
  // This site's mail context (link tokens signed with a secret every node shares, the
  // default sender): campaigns render previews with it, the mail runtime sends with it.
  std::unique_ptr<mail::LinkTokens> link_tokens;
  marketing::MailContext mail_context;
  std::unique_ptr<marketing::MarketingUsage> marketing_usage;
  std::unique_ptr<governance::Services> governance;
  std::unique_ptr<crm::Services> crm;
  std::unique_ptr<marketing::Services> marketing;
  // rest: the REST API v1 (src/rest/rest_api.h).
  std::unique_ptr<rest::RestApi> rest_api;
  // rest: outgoing webhooks; the worker thread runs between App::Start and App::Stop.
  std::unique_ptr<webhooks::Endpoints> webhook_endpoints;
  std::unique_ptr<webhooks::Deliveries> webhook_deliveries;
  std::unique_ptr<webhooks::DeliveryWorker> webhook_worker;
  // jobs: email. Link tokens (unsubscribe, tracking, confirmation) are signed with a secret
  // every node shares; the sender threads run between App::Start and App::Stop.
  std::unique_ptr<jobs::MailRuntime> mail_runtime;
  std::unique_ptr<jobs::CampaignSender> campaign_sender;
  // jobs: the bounce mailbox (docs/mail.md): what comes back to the VERP return paths
  // (bounce_domain set), polled when bounce_mailbox_url is set.
  std::unique_ptr<marketing::BounceMailbox> bounce_mailbox;
  std::unique_ptr<jobs::BouncePoller> bounce_poller;
  // jobs: automations, sequences and double opt-in (src/jobs/automation_runner.h).
  std::unique_ptr<marketing::AutomationRuns> automation_runs;
  std::unique_ptr<jobs::AutomationRunner> automation_runner;
  // jobs: the housekeeping sweep (started in App::Start, stopped in App::Stop).
  std::unique_ptr<jobs::Housekeeping> housekeeping;
  // jobs: contact imports (src/jobs/import_runner.h), started and stopped with the others.
  std::unique_ptr<jobs::ImportRunner> import_runner;
  // rest: incoming webhooks (POST <rest base>/hooks/<token>), upserting via crm->contacts.
  std::unique_ptr<webhooks::IncomingHooks> incoming_hooks;
};

}  // namespace crmd::app
