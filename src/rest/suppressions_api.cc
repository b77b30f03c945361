// The suppression list (docs/rest.md "Suppression list"), admin API keys only:
//   GET    /suppressions               paged (cursor, limit), filtered by reason and kind;
//                                      ?email= answers the one entry that applies to it
//   POST   /suppressions               {email | domain, reason}: 201 a new entry, 200 the
//                                      entry the address or domain already had
//   GET    /suppressions/{id}
//   DELETE /suppressions/{id}          an administrator's removal (audited)
// They call crm::SuppressionList, as crmctl and the console do.
#include "src/crm/services.h"
#include "src/crm/suppression.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

governance::Actor SuppressionActor(const RestContext& ctx) {
  return {.kind = "api_key",
          .subject = ctx.key ? std::to_string(ctx.key->id) : "",
          .request_id = ctx.req.request_id};
}

nlohmann::json SuppressionPageJson(const crm::SuppressionPage& page) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& s : page.items) items.push_back(crm::ToJson(s.entry, s.email));
  return {{"suppressions", std::move(items)},
          {"next_cursor", page.next_cursor ? nlohmann::json(*page.next_cursor) : nullptr}};
}

http::Response ListOrLookUp(crm::SuppressionList& list, RestContext& ctx) {
  crm::SuppressionFilter filter;
  std::optional<std::string> email;
  std::string cursor;
  int limit = 100;
  std::vector<FieldError> errors;
  for (const auto& [k, v] : http::ParseForm(ctx.req.query)) {
    if (k == "email") {
      email = v;
    } else if (k == "reason") {
      if (!crm::IsSuppressionReason(v))
        errors.push_back({"reason", "invalid_option",
                          "must be hard_bounce, complaint, unsubscribed, erased or manual"});
      filter.reason = v;
    } else if (k == "kind") {
      if (v != "address" && v != "domain")
        errors.push_back({"kind", "invalid_option", "must be address or domain"});
      filter.kind = v;
    } else if (k == "cursor") {
      cursor = v;
    } else if (k == "limit") {
      auto n = ParseId(v);
      if (!n || *n > 500)
        errors.push_back({"limit", "invalid", "must be an integer from 1 to 500"});
      else
        limit = static_cast<int>(*n);
    } else {
      errors.push_back({k, "unknown_parameter", "is not a filter of this list"});
    }
  }
  if (email && (filter.reason || filter.kind || !cursor.empty()))
    errors.push_back({"email", "invalid", "looks one address up: give it alone"});
  if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
  if (email) {
    auto hit = list.Check(*email);
    if (!hit) return ProblemFromError(ctx.req, hit.error());
    crm::SuppressionPage page;
    if (*hit) page.items.push_back({std::move(**hit), {}});
    return Reply(200, SuppressionPageJson(page));
  }
  auto page = list.List(filter, cursor, limit);
  if (!page) return ProblemFromError(ctx.req, page.error());
  return Reply(200, SuppressionPageJson(*page));
}

http::Response AddSuppression(crm::SuppressionList& list, const std::string& base,
                              RestContext& ctx) {
  std::vector<FieldError> errors;
  UnknownMembers(ctx.body, {"email", "domain", "reason"}, &errors);
  auto email = OptString(ctx.body, "email", &errors);
  auto domain = OptString(ctx.body, "domain", &errors);
  auto reason = OptString(ctx.body, "reason", &errors);
  if (errors.empty() && email.has_value() == domain.has_value())
    errors.push_back(
        {email ? "domain" : "email", "required", "give exactly one of email and domain"});
  if (reason && !crm::IsSuppressionReason(*reason))
    errors.push_back({"reason", "invalid_option",
                      "must be hard_bounce, complaint, unsubscribed, erased or manual"});
  if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
  const governance::Actor actor = SuppressionActor(ctx);
  auto added = list.Add(actor, {.email = email.value_or(""),
                                .domain = domain.value_or(""),
                                .reason = reason.value_or("manual"),
                                .source = actor.kind + ":" + actor.subject});
  if (!added) {
    if (added.error().code == Errc::kInvalidArgument)
      return Invalid(ctx.req, {{email ? "email" : "domain", "invalid", added.error().message}});
    return ProblemFromError(ctx.req, added.error());
  }
  auto resp = Reply(added->created ? 201 : 200,
                    {{"created", added->created}, {"suppression", crm::ToJson(added->entry)}});
  if (added->created)
    resp.Set("Location", base + "/suppressions/" + std::to_string(added->entry.id));
  return resp;
}

}  // namespace

void AddSuppressionRoutes(RestRouter& router, const RestDeps& deps) {
  crm::SuppressionList* list = deps.crm->suppressions.get();

  router.Add({"GET", "/suppressions", Access::kAdmin, false,
              [list](RestContext& ctx) { return ListOrLookUp(*list, ctx); }});

  router.Add({"POST", "/suppressions", Access::kAdmin, true,
              [list, base = RestBasePath(*deps.config)](RestContext& ctx) {
                return AddSuppression(*list, base, ctx);
              }});

  router.Add({"GET", "/suppressions/{id}", Access::kAdmin, false, [list](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such suppression entry");
                auto s = list->Get(*id);
                if (!s) return ProblemFromError(ctx.req, s.error());
                return Reply(200, {{"suppression", crm::ToJson(*s)}});
              }});

  router.Add({"DELETE", "/suppressions/{id}", Access::kAdmin, false, [list](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such suppression entry");
                auto removed = list->Remove(SuppressionActor(ctx), *id);
                if (!removed) return ProblemFromError(ctx.req, removed.error());
                return Reply(200, {{"deleted", crm::ToJson(*removed)}});
              }});
}

}  // namespace crmd::rest
