// GET /openapi.json: the OpenAPI 3.1 document of this API, embedded from schemas/rest/,
// with its server URL set to this node's REST base path (rest_root, rest_namespace).
#include <nlohmann/json.hpp>

#include "src/core/embedded.h"
#include "src/rest/problem.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {

void AddMetaRoutes(RestRouter& router, const RestDeps& deps) {
  std::string served;
  if (auto doc = embedded::Find("rest/openapi.json")) {
    auto j = nlohmann::json::parse(*doc, nullptr, false);
    if (j.is_object()) {
      j["servers"] = nlohmann::json::array(
          {{{"url", RestBasePath(*deps.config)}, {"description", "This server's REST base path"}}});
      served = j.dump();
    }
  }
  router.Add({"GET", "/openapi.json", Access::kPublic, false, [served](RestContext& ctx) {
                if (served.empty())
                  return Problem(ctx.req,
                                 {.status = 404, .code = "not_found", .detail = "no document"});
                auto r = http::Response::Text(200, served, "application/json");
                r.Set("Cache-Control", "public, max-age=300");
                return r;
              }});
}

}  // namespace crmd::rest
