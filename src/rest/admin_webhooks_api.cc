// Admin endpoints for outgoing webhooks: /admin/webhooks[/{id}], the delivery log
// /admin/webhook-deliveries[/{id}] and manual redelivery. Admin role required.
#include <algorithm>

#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"
#include "src/webhooks/deliveries.h"
#include "src/webhooks/endpoints.h"

namespace crmd::rest {
namespace {

// kPermissionDenied from the SSRF check is 422 target_not_allowed (the URL is the
// problem, not the caller's rights).
const ErrorMeaning kInputMeaning{.refused_target_code = "target_not_allowed",
                                 .refused_target_field = "url"};

// The delivery log's filters from the query string; answers what is wrong with them.
std::vector<FieldError> ReadDeliveryFilter(std::string_view query, webhooks::DeliveryFilter& f) {
  std::vector<FieldError> errors;
  for (const auto& [k, v] : http::ParseForm(query)) {
    if (k == "endpoint_id") {
      f.endpoint_id = ParseId(v);
      if (!f.endpoint_id)
        errors.push_back({"endpoint_id", "invalid", "must be a positive integer"});
    } else if (k == "status") {
      if (v != "pending" && v != "succeeded" && v != "failed")
        errors.push_back({"status", "invalid_option", "must be pending, succeeded or failed"});
      f.status = v;
    } else if (k == "before_id") {
      f.before_id = ParseId(v);
      if (!f.before_id) errors.push_back({"before_id", "invalid", "must be a positive integer"});
    } else if (k == "limit") {
      auto n = ParseId(v);
      if (!n || *n > 1000)
        errors.push_back({"limit", "invalid", "must be an integer from 1 to 1000"});
      else
        f.limit = static_cast<int>(*n);
    } else {
      errors.push_back({k, "unknown_parameter", "is not a filter of this list"});
    }
  }
  return errors;
}

// /admin/webhooks[/{id}]: the endpoints, their secrets shown once at creation.
void AddWebhookEndpointRoutes(RestRouter& router, webhooks::Endpoints* eps) {
  router.Add({"GET", "/admin/webhooks", Access::kAdmin, false, [eps](RestContext& ctx) {
                auto list = eps->List();
                if (!list) return ProblemFromError(ctx.req, list.error());
                nlohmann::json out = nlohmann::json::array();
                for (const auto& e : *list) out.push_back(webhooks::EndpointJson(e));
                return Reply(200, {{"webhooks", out}});
              }});

  RestRoute create{"POST", "/admin/webhooks", Access::kAdmin, true, [eps](RestContext& ctx) {
                     auto in = webhooks::EndpointInputFromJson(ctx.body);
                     if (!in) return ProblemFromError(ctx.req, in.error(), kInputMeaning);
                     auto created = eps->Create(*in);
                     if (!created) return ProblemFromError(ctx.req, created.error(), kInputMeaning);
                     auto body = webhooks::EndpointJson(created->first);
                     body["secret"] = created->second;  // shown once
                     return Reply(201, body);
                   }};
  create.secret_members = {"secret"};  // never stored for an Idempotency-Key replay
  router.Add(std::move(create));

  router.Add({"GET", "/admin/webhooks/{id}", Access::kAdmin, false, [eps](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such webhook endpoint");
                auto e = eps->Get(*id);
                if (!e) return ProblemFromError(ctx.req, e.error());
                return Reply(200, webhooks::EndpointJson(*e));
              }});

  router.Add({"PATCH", "/admin/webhooks/{id}", Access::kAdmin, true, [eps](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such webhook endpoint");
                auto in = webhooks::EndpointInputFromJson(ctx.body);
                if (!in) return ProblemFromError(ctx.req, in.error(), kInputMeaning);
                auto e = eps->Update(
                    *id, *in,
                    governance::Actor{.kind = "api_key",
                                      .subject = ctx.key ? std::to_string(ctx.key->id) : "",
                                      .client_id = "",
                                      .request_id = ctx.req.request_id});
                if (!e) return ProblemFromError(ctx.req, e.error(), kInputMeaning);
                return Reply(200, webhooks::EndpointJson(*e));
              }});

  router.Add({"DELETE", "/admin/webhooks/{id}", Access::kAdmin, false, [eps](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such webhook endpoint");
                auto e = eps->Get(*id);
                if (!e) return ProblemFromError(ctx.req, e.error());
                if (auto st = eps->Delete(*id); !st) return ProblemFromError(ctx.req, st.error());
                return Reply(200, {{"deleted", webhooks::EndpointJson(*e)}});
              }});
}

// /admin/webhook-deliveries[/{id}]: the delivery log, newest first, and manual redelivery.
void AddWebhookDeliveryRoutes(RestRouter& router, webhooks::Deliveries* dels) {
  router.Add({"GET", "/admin/webhook-deliveries", Access::kAdmin, false, [dels](RestContext& ctx) {
                webhooks::DeliveryFilter f;
                std::vector<FieldError> errors = ReadDeliveryFilter(ctx.req.query, f);
                if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
                const int page = f.limit;
                f.limit = page + 1;  // one more than the page says whether another page follows
                auto list = dels->List(f);
                if (!list) return ProblemFromError(ctx.req, list.error());
                const bool more = static_cast<int>(list->size()) > page;
                if (more) list->resize(page);
                nlohmann::json out = nlohmann::json::array();
                for (const auto& d : *list) out.push_back(webhooks::DeliveryJson(d));
                // Newest first; when more follow, the id to pass as before_id for the next page.
                nlohmann::json next = nullptr;
                if (more) next = list->back().id;
                return Reply(200, {{"deliveries", out}, {"next_before_id", next}});
              }});

  router.Add(
      {"GET", "/admin/webhook-deliveries/{id}", Access::kAdmin, false, [dels](RestContext& ctx) {
         auto id = ParseId(ctx.Param("id"));
         if (!id) return NotFound(ctx.req, "no such delivery");
         auto d = dels->Get(*id);
         if (!d) return ProblemFromError(ctx.req, d.error());
         auto attempts = dels->Attempts(*id);
         if (!attempts) return ProblemFromError(ctx.req, attempts.error());
         auto body = webhooks::DeliveryJson(*d);
         body["attempt_log"] = nlohmann::json::array();
         for (const auto& a : *attempts) body["attempt_log"].push_back(webhooks::AttemptJson(a));
         return Reply(200, body);
       }});

  router.Add({"POST", "/admin/webhook-deliveries/{id}/redeliver", Access::kAdmin, false,
              [dels](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such delivery");
                auto d = dels->Redeliver(*id);
                if (!d) return ProblemFromError(ctx.req, d.error());
                return Reply(202, webhooks::DeliveryJson(*d));
              }});
}

}  // namespace

void AddAdminWebhookRoutes(RestRouter& router, const RestDeps& deps) {
  AddWebhookEndpointRoutes(router, deps.endpoints);
  AddWebhookDeliveryRoutes(router, deps.deliveries);
}

}  // namespace crmd::rest
