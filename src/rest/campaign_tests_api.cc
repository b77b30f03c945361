// Test sends: POST /campaigns/{id}/test {"test_recipients": [...], "test_fields": {...}} (any
// API key). The campaign goes out now, exactly as it will be sent, with "[Test] " before the
// subject, to those one to five addresses only (console users' or listed in settings
// test_recipients_allowed); the campaign does not change (marketing::CampaignTestSends).
// 200 {"status":"test_sent",...}; 422 validation_failed naming the field (an address not
// allowed names the setting); 404 campaign_not_found; 503 when the relay refuses.
#include "src/marketing/services.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {

void AddCampaignTestRoutes(RestRouter& router, const RestDeps& deps) {
  marketing::CampaignTestSends* tests = deps.marketing->test_sends.get();
  router.Add({"POST", "/campaigns/{id}/test", Access::kKey, true, [tests](RestContext& ctx) {
                static const ErrorMeaning kMeaning{.not_found_code = "campaign_not_found"};
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such campaign");
                std::vector<FieldError> errors;
                UnknownMembers(ctx.body, {"test_recipients", "test_fields"}, &errors);
                if (!ctx.body.contains("test_recipients"))
                  errors.push_back({"test_recipients", "required", "1 to 5 email addresses"});
                if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
                governance::Actor actor{.kind = "api_key",
                                        .subject = ctx.key ? std::to_string(ctx.key->id) : "",
                                        .request_id = ctx.req.request_id};
                auto sent = tests->Send(actor, *id, ctx.body["test_recipients"],
                                        ctx.body.value("test_fields", nlohmann::json(nullptr)));
                if (!sent) return ProblemFromError(ctx.req, sent.error(), kMeaning);
                return Reply(200, *sent);
              }});
}

}  // namespace crmd::rest
