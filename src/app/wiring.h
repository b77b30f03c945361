#pragma once
// How App::Create (app.cc) wires each face into the services and routers, one file each:
// ops_wiring.cc (/healthz, /readyz, /metrics and its collectors), mcp_wiring.cc (/mcp),
// authz_wiring.cc (users, clients, registration, authorization pages), console_wiring.cc
// (/console) and mail_wiring.cc (the campaign sender, automation runner and mail links).
// Internal to src/app.
#include <memory>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/core/result.h"

namespace crmd::http {
class ProxyTrust;
}

namespace crmd::app {

// Database connections a node opens at most (src/app/transport_wiring.cc).
int DbPoolSize(const Config& c);
// The database, the listeners, health and metrics routes; src/app/transport_wiring.cc.
Status WireTransport(App::Services& s);
// The token side of auth and the bearer guard; src/app/token_wiring.cc.
void WireTokens(App::Services& s);
// Outgoing and incoming webhooks; src/app/webhooks_wiring.cc.
void WireWebhooks(App::Services& s);
// The REST API v1; src/app/rest_wiring.cc.
void WireRest(App::Services& s);
// The housekeeping job; src/app/jobs_wiring.cc.
void WireHousekeeping(App::Services& s);
// The 48 tools into the registry CreateMcpRegistry made; src/app/mcp_wiring.cc.
Status RegisterTools(App::Services& s);

void AddHealthRoutes(App::Services& s, Router& router);
void AddMetricsRoute(App::Services& s, Router& router,
                     std::shared_ptr<const http::ProxyTrust> allow);
void AddCollectors(App::Services& s);

// The domain services (governance, crm, marketing); src/app/domain_wiring.cc.
Status BuildDomain(App::Services& s);

void CreateMcpRegistry(App::Services& s);
Status AddMcpRoutes(App::Services& s);

Status WireAuthz(App::Services& s);

void WireConsole(App::Services& s);

Status WireMail(App::Services& s);

}  // namespace crmd::app
