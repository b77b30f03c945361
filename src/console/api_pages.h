#pragma once
// The console's "Webhook & API" section (administrators only, shell.h's rules):
//   GET  /console/api-keys                      keys: name, prefix, role, status, last used
//   POST /console/api-keys                      action=create (name, role): the key shown
//                                               once; action=enable|disable|delete (id)
//   GET  /console/webhooks                      outgoing endpoints and the form to add one
//   POST /console/webhooks                      action=create (url, events, description):
//                                               the signing secret shown once;
//                                               action=enable|disable|delete (id)
//   GET  /console/webhooks/deliveries?endpoint_id=N   the endpoint's delivery log
//   GET  /console/webhooks/delivery?id=N        one delivery and its attempts
//   POST /console/webhooks/delivery             id: redeliver (same webhook-id and body)
// Every change goes through the same services as REST's /admin routes and crmctl
// (governance::ApiKeys, webhooks::Endpoints, webhooks::Deliveries); the console adds no rule.
// Thread-safe; handlers block on the database (worker pool).
#include <string>

#include "src/console/shell.h"
#include "src/governance/api_keys.h"
#include "src/webhooks/deliveries.h"
#include "src/webhooks/endpoints.h"

namespace crmd::console {

struct ApiPagesDeps {
  governance::ApiKeys* api_keys = nullptr;
  webhooks::Endpoints* endpoints = nullptr;
  webhooks::Deliveries* deliveries = nullptr;
  ConsolePeople people;
  std::string rest_base_url;  // e.g. http://127.0.0.1:8080/api/crm/v1, shown with new keys
};

ConsoleRoutes ApiRoutes(ApiPagesDeps deps);

}  // namespace crmd::console
