// Admin endpoints for API keys: /admin/api-keys[/{id}]. Admin role required.
#include "src/governance/api_keys.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {

void AddAdminKeyRoutes(RestRouter& router, const RestDeps& deps) {
  governance::ApiKeys* keys = deps.api_keys;

  router.Add({"GET", "/admin/api-keys", Access::kAdmin, false, [keys](RestContext& ctx) {
                auto list = keys->List();
                if (!list) return ProblemFromError(ctx.req, list.error());
                nlohmann::json out = nlohmann::json::array();
                for (const auto& k : *list) out.push_back(governance::ApiKeyJson(k));
                return Reply(200, {{"api_keys", out}});
              }});

  RestRoute create{"POST", "/admin/api-keys", Access::kAdmin, true, [keys](RestContext& ctx) {
                     std::vector<FieldError> errors;
                     UnknownMembers(ctx.body, {"name", "role"}, &errors);
                     auto name = OptString(ctx.body, "name", &errors);
                     auto role_name = OptString(ctx.body, "role", &errors);
                     if (!name && errors.empty())
                       errors.push_back({"name", "required", "is required"});
                     auto role = governance::ParseApiKeyRole(role_name.value_or("integration"));
                     if (!role)
                       errors.push_back({"role", "invalid_option", "must be integration or admin"});
                     if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
                     auto created = keys->Create(*name, *role);
                     if (!created) return ProblemFromError(ctx.req, created.error());
                     auto body = governance::ApiKeyJson(created->key);
                     body["key"] = created->secret;  // shown once
                     return Reply(201, body);
                   }};
  create.secret_members = {"key"};
  router.Add(std::move(create));

  router.Add({"GET", "/admin/api-keys/{id}", Access::kAdmin, false, [keys](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such API key");
                auto key = keys->Get(*id);
                if (!key) return ProblemFromError(ctx.req, key.error());
                return Reply(200, governance::ApiKeyJson(*key));
              }});

  router.Add({"PATCH", "/admin/api-keys/{id}", Access::kAdmin, true, [keys](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such API key");
                std::vector<FieldError> errors;
                UnknownMembers(ctx.body, {"status"}, &errors);
                auto status = OptString(ctx.body, "status", &errors);
                if (!status && errors.empty())
                  errors.push_back({"status", "required", "is required"});
                if (status && *status != "enabled" && *status != "disabled")
                  errors.push_back({"status", "invalid_option", "must be enabled or disabled"});
                if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
                auto key = keys->SetEnabled(*id, *status == "enabled");
                if (!key) return ProblemFromError(ctx.req, key.error());
                return Reply(200, governance::ApiKeyJson(*key));
              }});

  router.Add({"DELETE", "/admin/api-keys/{id}", Access::kAdmin, false, [keys](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such API key");
                auto key = keys->Get(*id);
                if (!key) return ProblemFromError(ctx.req, key.error());
                if (auto st = keys->Delete(*id); !st) return ProblemFromError(ctx.req, st.error());
                return Reply(200, {{"deleted", governance::ApiKeyJson(*key)}});
              }});
}

}  // namespace crmd::rest
