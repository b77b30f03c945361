// Email over REST: a campaign's delivery report and per-recipient log
// (GET /campaigns/{id}/recipients), and bounce and complaint notifications from a relay
// (POST /mail/events). Any enabled API key; docs/mail.md says how to point a relay here.
#include "src/crm/services.h"
#include "src/marketing/services.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {

void AddMailRoutes(RestRouter& router, const RestDeps& deps) {
  marketing::CampaignDelivery* delivery = deps.marketing->delivery.get();

  router.Add(
      {"GET", "/campaigns/{id}/recipients", Access::kKey, false,
       [delivery, csv = deps.marketing->recipients_csv.get()](RestContext& ctx) {
         auto id = ParseId(ctx.Param("id"));
         if (!id) return NotFound(ctx.req, "no such campaign");
         auto format = http::FormValue(http::ParseForm(ctx.req.query), "format");
         if (format == "csv") return CampaignRecipientsCsv(ctx, *csv, *id);
         std::string status, cursor;
         int limit = 100;
         std::vector<FieldError> errors;
         for (const auto& [k, v] : http::ParseForm(ctx.req.query)) {
           if (k == "status") {
             if (v != "pending" && v != "sent" && v != "failed" && v != "skipped")
               errors.push_back(
                   {"status", "invalid_option", "must be pending, sent, failed or skipped"});
             status = v;
           } else if (k == "format") {
             if (v != "json")
               errors.push_back({"format", "invalid_option", "must be json (the default) or csv"});
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
         if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
         auto page = delivery->Recipients(*id, status, cursor, limit);
         if (!page) return ProblemFromError(ctx.req, page.error());
         auto stats = delivery->Stats(*id);
         if (!stats) return ProblemFromError(ctx.req, stats.error());
         nlohmann::json items = nlohmann::json::array();
         for (const auto& r : page->items) items.push_back(marketing::ToJson(r));
         return Reply(200, {{"campaign_id", *id},
                            {"counts", marketing::ToJson(*stats)},
                            {"recipients", std::move(items)},
                            {"next_cursor", page->next_cursor ? nlohmann::json(*page->next_cursor)
                                                              : nlohmann::json(nullptr)}});
       }});

  router.Add(
      {"POST", "/mail/events", Access::kKey, true, [delivery](RestContext& ctx) {
         // One event, or {"events": [...]} with up to 100.
         std::vector<nlohmann::json> events;
         if (ctx.body.is_object() && ctx.body.contains("events")) {
           if (!ctx.body["events"].is_array() || ctx.body["events"].empty() ||
               ctx.body["events"].size() > 100)
             return Invalid(ctx.req,
                            {{"events", "invalid", "must be an array of 1 to 100 events"}});
           for (const auto& e : ctx.body["events"]) events.push_back(e);
         } else {
           events.push_back(ctx.body);
         }
         std::vector<FieldError> errors;
         for (size_t i = 0; i < events.size(); ++i) {
           const auto& e = events[i];
           std::string at = events.size() > 1 || ctx.body.contains("events")
                                ? "events[" + std::to_string(i) + "]."
                                : "";
           if (!e.is_object()) {
             errors.push_back({at.empty() ? "body" : at.substr(0, at.size() - 1), "invalid",
                               "must be an object"});
             continue;
           }
           if (!e.contains("email") || !e["email"].is_string())
             errors.push_back({at + "email", "required", "is required (a string)"});
           if (!e.contains("type") || !e["type"].is_string() ||
               (e["type"] != "bounce" && e["type"] != "complaint"))
             errors.push_back({at + "type", "invalid_option", "must be bounce or complaint"});
           if (e.contains("message_id") && !e["message_id"].is_string())
             errors.push_back({at + "message_id", "invalid", "must be a string"});
         }
         if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
         governance::Actor actor{.kind = "api_key",
                                 .subject = ctx.key ? std::to_string(ctx.key->id) : "",
                                 .request_id = ctx.req.request_id};
         nlohmann::json results = nlohmann::json::array();
         for (const auto& e : events) {
           auto r = delivery->Feedback(actor, e["email"].get<std::string>(),
                                       e["type"].get<std::string>(), e.value("message_id", ""));
           if (!r) {
             if (r.error().code == Errc::kNotFound) {
               results.push_back({{"email", e["email"]},
                                  {"applied", false},
                                  {"reason", "no contact has this address"}});
               continue;
             }
             if (r.error().code == Errc::kInvalidArgument)
               results.push_back(
                   {{"email", e["email"]}, {"applied", false}, {"reason", r.error().message}});
             else
               return ProblemFromError(ctx.req, r.error());
             continue;
           }
           nlohmann::json out = *r;
           out["email"] = e["email"];
           out["applied"] = true;
           results.push_back(std::move(out));
         }
         return Reply(200, {{"results", std::move(results)}});
       }});
}

}  // namespace crmd::rest
