// Email templates: GET|POST /templates, GET|PUT|DELETE /templates/{id} (any API key).
// A template is {id, name, html, text, revision, builtin, created_at, updated_at}
// (marketing::TemplateService). PUT carries the `revision` it read: a stale one is 409
// revision_conflict with the current template in `current`. DELETE of a template in use
// is 409 dependency_blocked with the users in `users` ({kind, id, name, emails | steps}).
#include "src/marketing/services.h"
#include "src/marketing/templates.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

using nlohmann::json;

const ErrorMeaning kTemplateMeaning{.not_found_code = "template_not_found"};

governance::Actor TemplateActor(const RestContext& ctx) {
  return {.kind = "api_key",
          .subject = ctx.key ? std::to_string(ctx.key->id) : "",
          .client_id = "",
          .request_id = ctx.req.request_id};
}

// A problem answer with one more member (e.g. the records that block a deletion).
http::Response ProblemWith(const http::Request& req, const Error& e, const char* member,
                           const json& value) {
  http::Response r = ProblemFromError(req, e, kTemplateMeaning);
  auto body = json::parse(r.body, nullptr, false);
  if (!body.is_object()) return r;
  body[member] = value;
  r.body = body.dump();
  return r;
}

// ?cursor=&limit= of GET /templates; field errors otherwise.
std::vector<FieldError> ListQuery(const std::string& query, std::string* cursor, int* limit) {
  std::vector<FieldError> errors;
  for (const auto& [k, v] : http::ParseForm(query)) {
    if (k == "cursor") {
      *cursor = v;
    } else if (k == "limit") {
      auto n = ParseId(v);
      if (!n || *n > marketing::kMaxPageSize)
        errors.push_back({"limit", "invalid", "must be an integer from 1 to 100"});
      else
        *limit = static_cast<int>(*n);
    } else {
      errors.push_back({k, "unknown_parameter", "is not a parameter of this list"});
    }
  }
  return errors;
}

// The body of POST and PUT: name, html, text (and, for PUT, revision).
std::vector<FieldError> CheckBody(const json& body, bool put) {
  std::vector<FieldError> errors;
  if (put)
    UnknownMembers(body, {"name", "html", "text", "revision"}, &errors);
  else
    UnknownMembers(body, {"name", "html", "text"}, &errors);
  for (const char* key : {"name", "html"})
    if (!put && !body.contains(key)) errors.push_back({key, "required", "is required"});
  (void)OptString(body, "name", &errors);
  (void)OptString(body, "html", &errors);
  if (body.contains("text") && !body["text"].is_null()) (void)OptString(body, "text", &errors);
  if (put && (!body.contains("revision") || !body["revision"].is_number_integer() ||
              body["revision"].get<int64_t>() < 1))
    errors.push_back({"revision", "required", "the revision you read (an integer >= 1)"});
  return errors;
}

json Fields(const json& body) {
  json f = json::object();
  for (const char* key : {"name", "html", "text"})
    if (body.contains(key)) f[key] = body[key];
  return f;
}

}  // namespace

void AddTemplateRoutes(RestRouter& router, const RestDeps& deps) {
  marketing::TemplateService* templates = deps.marketing->templates.get();

  router.Add({"GET", "/templates", Access::kKey, false, [templates](RestContext& ctx) {
                std::string cursor;
                int limit = marketing::kDefaultPageSize;
                if (auto errors = ListQuery(ctx.req.query, &cursor, &limit); !errors.empty())
                  return Invalid(ctx.req, std::move(errors));
                auto page = templates->List(cursor, limit);
                if (!page) return ProblemFromError(ctx.req, page.error());
                json items = json::array();
                for (const auto& t : page->items) items.push_back(marketing::ToJson(t, false));
                return Reply(200, {{"templates", items},
                                   {"next_cursor",
                                    page->next_cursor ? json(*page->next_cursor) : json(nullptr)}});
              }});

  router.Add({"POST", "/templates", Access::kKey, true, [templates](RestContext& ctx) {
                if (auto errors = CheckBody(ctx.body, false); !errors.empty())
                  return Invalid(ctx.req, std::move(errors));
                auto t = templates->Create(TemplateActor(ctx), Fields(ctx.body));
                if (!t) return ProblemFromError(ctx.req, t.error(), kTemplateMeaning);
                return Reply(201, marketing::ToJson(*t));
              }});

  router.Add({"GET", "/templates/{id}", Access::kKey, false, [templates](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such template");
                auto t = templates->Get(*id);
                if (!t) return ProblemFromError(ctx.req, t.error(), kTemplateMeaning);
                return Reply(200, marketing::ToJson(*t));
              }});

  router.Add({"PUT", "/templates/{id}", Access::kKey, true, [templates](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such template");
                if (auto errors = CheckBody(ctx.body, true); !errors.empty())
                  return Invalid(ctx.req, std::move(errors));
                auto t = templates->Update(TemplateActor(ctx), *id,
                                           ctx.body["revision"].get<int64_t>(), Fields(ctx.body));
                if (t) return Reply(200, marketing::ToJson(*t));
                if (t.error().code == Errc::kRevisionConflict)
                  if (auto current = templates->Get(*id))
                    return ProblemWith(ctx.req, t.error(), "current", marketing::ToJson(*current));
                return ProblemFromError(ctx.req, t.error(), kTemplateMeaning);
              }});

  router.Add({"DELETE", "/templates/{id}", Access::kKey, false, [templates](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return NotFound(ctx.req, "no such template");
                auto t = templates->Delete(TemplateActor(ctx), *id);
                if (t) return Reply(200, {{"deleted", marketing::ToJson(*t, false)}});
                if (t.error().code == Errc::kDependencyBlocked)
                  if (auto uses = templates->Uses(*id))
                    return ProblemWith(ctx.req, t.error(), "users", marketing::ToJson(*uses));
                return ProblemFromError(ctx.req, t.error(), kTemplateMeaning);
              }});
}

}  // namespace crmd::rest
