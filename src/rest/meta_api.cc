// GET /openapi.json: the OpenAPI 3.1 document of this API, embedded from schemas/rest/.
#include "src/core/embedded.h"
#include "src/rest/problem.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {

void AddMetaRoutes(RestRouter& router, const RestDeps&) {
  router.Add({"GET", "/openapi.json", Access::kPublic, false, [](RestContext& ctx) {
    auto doc = embedded::Find("rest/openapi.json");
    if (!doc) return Problem(ctx.req, {.status = 404, .code = "not_found", .detail = "no document"});
    auto r = http::Response::Text(200, std::string(*doc), "application/json");
    r.Set("Cache-Control", "public, max-age=300");
    return r;
  }});
}

}  // namespace crmd::rest
