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

void AddHealthRoutes(App::Services& s, Router& router);
void AddMetricsRoute(App::Services& s, Router& router, std::shared_ptr<const http::ProxyTrust> allow);
void AddCollectors(App::Services& s);

// The domain services (governance, crm, marketing); src/app/domain_wiring.cc.
Status BuildDomain(App::Services& s);

void CreateMcpRegistry(App::Services& s);
Status AddMcpRoutes(App::Services& s);

Status WireAuthz(App::Services& s);

void WireConsole(App::Services& s);

Status WireMail(App::Services& s);

}  // namespace crmd::app
