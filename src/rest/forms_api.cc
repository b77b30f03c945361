// Form endpoints: POST /form/submit/{form_id}, GET /form/get/{form_id} (with CORS
// preflights), and the admin endpoints /admin/forms[/{id}].
//
// Which form: {form_id} is the form's public id (crm::IsFormPublicId), which cannot be
// guessed. A numeric id is found only for a caller with a valid API key (server-side
// integrations written before public ids); without one it is 404 like an unknown id, so
// counting ids tells nobody which forms exist. Without a key GET /form/get answers only
// crm::ToPublicJson; with one, the whole definition (crm::ToJson).
//
// Who may submit: a form with require_key=false is public: anyone may submit without a
// key, limited per client IP and form (config form_rate_limit_per_minute), and browsers
// only from the form's allowed_origins. A presented key must be valid; with a key there
// is no per-IP limit and no origin check. A form with require_key=true needs a key.
#include <chrono>
#include <memory>

#include "src/crm/contacts.h"
#include "src/crm/forms.h"
#include "src/rest/helpers.h"
#include "src/rest/ip_limiter.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

using nlohmann::json;

const ErrorMeaning kFormMeaning{.not_found_code = "form_not_found",
                                .not_found_detail = "no such form"};

http::Response FormNotFound(const http::Request& req) {
  return ProblemFromError(req, {Errc::kNotFound, "no such form", {}}, kFormMeaning);
}

// Access-Control-* for a browser Origin the form allows.
void AddCors(http::Response& r, const std::string& origin) {
  r.Set("Access-Control-Allow-Origin", origin);
  r.Set("Vary", "Origin");
  r.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After, Idempotent-Replayed");
}

// The form a path's {form_id} names for this caller: by public id for anyone, by numeric
// id only with an API key (`keyed`). kNotFound otherwise.
Result<crm::Form> FindForm(crm::FormService* forms, const std::string& form_id, bool keyed) {
  if (crm::IsFormPublicId(form_id)) return forms->GetByPublicId(form_id);
  if (auto id = ParseId(form_id); id && keyed) return forms->Get(*id);
  return Fail(Errc::kNotFound, "no such form");
}

// The finish hook of the form routes: CORS headers on every answer, errors included, when
// the request's Origin is one the form allows (browsers use public ids).
auto CorsFinish(crm::FormService* forms) {
  return [forms](const http::Request& req, const std::map<std::string, std::string>& params,
                 http::Response& resp) {
    auto origin = req.Header("Origin");
    if (!origin || resp.Header("Access-Control-Allow-Origin")) return;
    auto it = params.find("form_id");
    if (it == params.end()) return;
    auto form = FindForm(forms, it->second, false);
    if (form && form->AllowsOrigin(std::string(*origin))) AddCors(resp, std::string(*origin));
  };
}

// OPTIONS preflight for a form route (a browser's: public ids only).
RestHandler Preflight(crm::FormService* forms, std::string methods) {
  return [forms, methods](RestContext& ctx) {
    auto form = FindForm(forms, ctx.Param("form_id"), false);
    if (!form) return ProblemFromError(ctx.req, form.error(), kFormMeaning);
    auto origin = ctx.req.Header("Origin");
    if (!origin) {  // a plain OPTIONS, not a CORS preflight: say what the path allows
      http::Response r = http::Response::Empty(204);
      r.Set("Allow", methods);
      return r;
    }
    if (!form->AllowsOrigin(std::string(*origin)))
      return Problem(ctx.req, {.status = 403,
                               .code = "origin_not_allowed",
                               .detail = "this form does not accept requests from that origin"});
    http::Response r = http::Response::Empty(204);
    AddCors(r, std::string(*origin));
    r.Set("Access-Control-Allow-Methods", methods);
    r.Set("Access-Control-Allow-Headers",
          "Content-Type, Authorization, X-API-Key, Idempotency-Key");
    r.Set("Access-Control-Max-Age", "600");
    return r;
  };
}

// Loads the form of {form_id} and checks who may use it. Sets `out` or an error answer.
std::optional<http::Response> LoadForm(crm::FormService* forms, RestContext& ctx, crm::Form* out) {
  auto form = FindForm(forms, ctx.Param("form_id"), ctx.key.has_value());
  if (!form) return ProblemFromError(ctx.req, form.error(), kFormMeaning);
  if (form->require_key && !ctx.key)
    return Problem(
        ctx.req,
        {.status = 401, .code = "missing_api_key", .detail = "this form requires an API key"});
  if (!ctx.key) {
    auto origin = ctx.req.Header("Origin");
    if (origin && !form->AllowsOrigin(std::string(*origin)))
      return Problem(ctx.req, {.status = 403,
                               .code = "origin_not_allowed",
                               .detail = "this form does not accept requests from that origin"});
  }
  *out = std::move(*form);
  return std::nullopt;
}

}  // namespace

void AddFormRoutes(RestRouter& router, const RestDeps& deps) {
  crm::FormService* forms = deps.forms;
  auto limiter = std::make_shared<IpLimiter>(deps.config->form_rate_limit_per_minute, *deps.clock);

  router.Add({"POST", "/form/submit/{form_id}", Access::kForm, true,
              [forms, limiter](RestContext& ctx) {
                crm::Form form;
                if (auto err = LoadForm(forms, ctx, &form)) return *err;
                if (!ctx.key) {
                  if (int wait = limiter->Hit(ctx.req.remote_ip + "|" + std::to_string(form.id)))
                    return Problem(ctx.req, {.status = 429,
                                             .code = "rate_limited",
                                             .detail = "too many submissions from this address; "
                                                       "try again later",
                                             .retry_after_s = wait});
                }
                std::vector<FieldError> errors;
                for (const auto& [k, v] : ctx.body.items())
                  if (k != "fields")
                    errors.push_back({k, "unknown_member", "send {\"fields\": {...}}"});
                if (!ctx.body.contains("fields"))
                  errors.push_back({"fields", "required", "is required"});
                if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
                governance::Actor actor{
                    .kind = ctx.key ? "api_key" : "form",
                    .subject = ctx.key ? std::to_string(ctx.key->id) : std::to_string(form.id),
                    .client_id = "",
                    .request_id = ctx.req.request_id};
                auto r = forms->Submit(
                    actor, form, ctx.body["fields"], ctx.key.has_value(),
                    {.ip_address = ctx.req.remote_ip,
                     .user_agent = std::string(ctx.req.Header("User-Agent").value_or(""))});
                if (!r) return ProblemFromError(ctx.req, r.error());
                if (r->discarded) return Reply(200, {{"contact_id", nullptr}, {"created", false}});
                return Reply(r->created ? 201 : 200,
                             {{"contact_id", r->contact_id}, {"created", r->created}});
              },
              CorsFinish(forms)});

  router.Add({"OPTIONS", "/form/submit/{form_id}", Access::kPublic, false,
              Preflight(forms, "POST, OPTIONS"), nullptr});

  router.Add({"GET", "/form/get/{form_id}", Access::kForm, false,
              [forms](RestContext& ctx) {
                crm::Form form;
                if (auto err = LoadForm(forms, ctx, &form)) return *err;
                return Reply(200, ctx.key ? crm::ToJson(form) : crm::ToPublicJson(form));
              },
              CorsFinish(forms)});

  router.Add({"OPTIONS", "/form/get/{form_id}", Access::kPublic, false,
              Preflight(forms, "GET, OPTIONS"), nullptr});
}

void AddAdminFormRoutes(RestRouter& router, const RestDeps& deps) {
  crm::FormService* forms = deps.forms;

  router.Add({"GET", "/admin/forms", Access::kAdmin, false, [forms](RestContext& ctx) {
                auto list = forms->List();
                if (!list) return ProblemFromError(ctx.req, list.error());
                json out = json::array();
                for (const auto& f : *list) out.push_back(crm::ToJson(f));
                return Reply(200, {{"forms", out}});
              }});

  router.Add({"POST", "/admin/forms", Access::kAdmin, true, [forms](RestContext& ctx) {
                auto f = forms->Create(ctx.body);
                if (!f) return ProblemFromError(ctx.req, f.error());
                return Reply(201, crm::ToJson(*f));
              }});

  router.Add({"GET", "/admin/forms/{id}", Access::kAdmin, false, [forms](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return FormNotFound(ctx.req);
                auto f = forms->Get(*id);
                if (!f) return ProblemFromError(ctx.req, f.error(), kFormMeaning);
                return Reply(200, crm::ToJson(*f));
              }});

  router.Add({"PATCH", "/admin/forms/{id}", Access::kAdmin, true, [forms](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return FormNotFound(ctx.req);
                auto f = forms->Update(*id, ctx.body);
                if (!f) return ProblemFromError(ctx.req, f.error(), kFormMeaning);
                return Reply(200, crm::ToJson(*f));
              }});

  router.Add({"DELETE", "/admin/forms/{id}", Access::kAdmin, false, [forms](RestContext& ctx) {
                auto id = ParseId(ctx.Param("id"));
                if (!id) return FormNotFound(ctx.req);
                auto f = forms->Get(*id);
                if (!f) return ProblemFromError(ctx.req, f.error(), kFormMeaning);
                if (auto st = forms->Delete(*id); !st) return ProblemFromError(ctx.req, st.error());
                return Reply(200, {{"deleted", crm::ToJson(*f)}});
              }});
}

}  // namespace crmd::rest
