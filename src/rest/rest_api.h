#pragma once
// The REST API v1 face: /<rest_root>/<rest_namespace>/v1/... (default /api/crm/v1).
// Handle() runs every request through the same steps: route (404/405), key in the query
// string (400), authentication (401/403), body size (413), content type (415), JSON parse
// (400), then the route's handler; anything unexpected becomes a 500 problem here and
// nowhere else. Errors are RFC 9457 problem JSON (src/rest/problem.h).
//
// Thread-safe after construction: the route table is immutable and every service it uses
// is thread-safe.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/core/clock.h"
#include "src/core/config.h"
#include "src/core/http_types.h"
#include "src/core/metrics.h"
#include "src/core/random.h"
#include "src/rest/router.h"

namespace crmd::governance {
class ApiKeys;
}

namespace crmd::crm {
class FormService;
struct Services;
}  // namespace crmd::crm
namespace crmd::marketing {
struct Services;
class RecipientsExporter;
}  // namespace crmd::marketing
namespace crmd::webhooks {
class Endpoints;
class Deliveries;
class IncomingHooks;
}  // namespace crmd::webhooks

namespace crmd::rest {

struct RestDeps {
  const Config* config = nullptr;
  const Clock* clock = nullptr;
  Random* random = nullptr;
  governance::ApiKeys* api_keys = nullptr;
  crm::FormService* forms = nullptr;
  crm::Services* crm = nullptr;              // contacts, and through crm->governance idempotency
  marketing::Services* marketing = nullptr;  // the send queue (delivery reports)
  webhooks::Endpoints* endpoints = nullptr;
  webhooks::Deliveries* deliveries = nullptr;
  webhooks::IncomingHooks* incoming = nullptr;
  // crmd_rest_requests_total{method,route,status}, crmd_rest_request_duration_seconds
  // {method,route}, crmd_errors_total{face="rest",code} (GET /metrics); null: not recorded.
  metrics::Registry* metrics = nullptr;
};

// "/api/crm/v1" from the config (no trailing slash).
std::string RestBasePath(const Config& config);
// The REST requests whose content the listener streams to the handler
// (http::ServerOptions::stream_body): a CSV file sent as the body of POST .../imports, held
// to import_max_bytes instead of max_body_bytes and stored as it arrives.
bool StreamsRequestBody(const Config& config, std::string_view method, std::string_view path,
                        std::string_view content_type);

class RestApi {
 public:
  explicit RestApi(RestDeps deps);
  ~RestApi();
  RestApi(const RestApi&) = delete;
  RestApi& operator=(const RestApi&) = delete;

  const std::string& base_path() const { return base_; }
  http::Response Handle(const http::Request& req) const;
  // Every (method, pattern) served below base_path(), e.g. ("POST", "/contact").
  std::vector<std::pair<std::string, std::string>> Routes() const;

 private:
  http::Response Guarded(const http::Request& req, const RestRoute** matched) const;
  http::Response HandleUnguarded(const http::Request& req, const RestRoute** matched) const;
  void Record(const http::Request& req, const RestRoute* matched, const http::Response& res,
              int64_t duration_us) const;
  http::Response Route(const http::Request& req, const RestRoute& route, RestContext& ctx) const;
  http::Response WithIdempotency(const http::Request& req, const RestRoute& route,
                                 RestContext& ctx) const;

  RestDeps deps_;
  std::string base_;
  RestRouter router_;
};

// Route groups (one file each), called by the RestApi constructor.
void AddMetaRoutes(RestRouter& router, const RestDeps& deps);
void AddAdminKeyRoutes(RestRouter& router, const RestDeps& deps);
void AddContactRoutes(RestRouter& router, const RestDeps& deps);
void AddExportRoutes(RestRouter& router, const RestDeps& deps);  // crm
// The ?format=csv answer of GET /campaigns/{id}/recipients (exports_api.cc).
http::Response CampaignRecipientsCsv(RestContext& ctx, marketing::RecipientsExporter& exporter,
                                     int64_t campaign_id);
// POST /imports, GET /imports/{id}[/errors], DELETE /imports/{id} (crm->imports).
void AddImportRoutes(RestRouter& router, const RestDeps& deps);
void AddFormRoutes(RestRouter& router, const RestDeps& deps);
void AddAdminFormRoutes(RestRouter& router, const RestDeps& deps);
// REQUIRES: deps.endpoints and deps.deliveries.
void AddAdminWebhookRoutes(RestRouter& router, const RestDeps& deps);
// REQUIRES: deps.incoming. POST /hooks/{token} and /admin/incoming-hooks[/{id}].
void AddIncomingHookRoutes(RestRouter& router, const RestDeps& deps);
void AddMailRoutes(RestRouter& router, const RestDeps& deps);  // marketing->delivery
// POST /mail/events/{mailgun,postmark,sendgrid} and /admin/mail-receivers[/{provider}]
// (marketing->receivers).
void AddMailReceiverRoutes(RestRouter& router, const RestDeps& deps);
// REQUIRES: deps.marketing. /templates[/{id}] (marketing->templates, any key).
void AddTemplateRoutes(RestRouter& router, const RestDeps& deps);
// REQUIRES: deps.marketing. POST /campaigns/{id}/test (marketing->test_sends, any key).
void AddCampaignTestRoutes(RestRouter& router, const RestDeps& deps);
// REQUIRES: deps.crm. /suppressions[/{id}] (admin keys).
void AddSuppressionRoutes(RestRouter& router, const RestDeps& deps);
// The full receiving URL of an incoming webhook: <issuer><rest base>/hooks/<token>.
std::string IncomingHookUrl(const Config& config, const std::string& token);

}  // namespace crmd::rest
