// Incoming webhooks: the public receiving route /hooks/{token} (the token in the URL is the
// credential) and the admin endpoints /admin/incoming-hooks[/{id}].
#include <memory>

#include "src/rest/helpers.h"
#include "src/rest/ip_limiter.h"
#include "src/rest/rest_api.h"
#include "src/webhooks/incoming.h"

namespace crmd::rest {
namespace {

// The thin handler: everything that decides is in IncomingHooks::Receive.
http::Response Receive(webhooks::IncomingHooks& hooks, RestContext& ctx) {
  std::vector<webhooks::PayloadError> payload_errors;
  auto received =
      hooks.Receive({.token = ctx.Param("token"),
                     .raw_body = ctx.req.body,
                     .body = &ctx.body,
                     .signature = ctx.req.Header(webhooks::IncomingHooks::kSignatureHeader),
                     .request_id = ctx.req.request_id},
                    &payload_errors);
  if (!received) {
    ErrorMeaning meaning{.unauthenticated_code = "invalid_signature"};
    for (auto& p : payload_errors)
      meaning.errors.push_back({std::move(p.path), std::move(p.code), std::move(p.message)});
    return ProblemFromError(ctx.req, received.error(), meaning);
  }
  return Reply(200, {{"status", "accepted"},
                     {"contact_id", received->contact_id},
                     {"outcome", received->created   ? "created"
                                 : received->changed ? "updated"
                                                     : "unchanged"}});
}

}  // namespace

std::string IncomingHookUrl(const Config& config, const std::string& token) {
  return config.Issuer() + RestBasePath(config) + "/hooks/" + token;
}

void AddIncomingHookRoutes(RestRouter& router, const RestDeps& deps) {
  webhooks::IncomingHooks* hooks = deps.incoming;
  const Config* config = deps.config;

  // Public and unauthenticated but for the token: limited per client IP (as resolved from
  // trusted proxies' forwarding fields), before the token is even looked up, so neither a
  // flood nor token guessing reaches the database.
  auto limiter = std::make_shared<IpLimiter>(config->hook_rate_limit_per_minute, *deps.clock);
  // The token is in the path, which the idempotency store would keep in its scope in clear;
  // receiving is idempotent by nature anyway (the same payload again is "unchanged").
  RestRoute receive{"POST", "/hooks/{token}", Access::kPublic, true,
                    [hooks](RestContext& ctx) { return Receive(*hooks, ctx); }};
  receive.admit = [limiter](const http::Request& req) -> std::optional<http::Response> {
    if (int wait = limiter->Hit("hook|" + req.remote_ip))
      return Problem(req, {.status = 429,
                           .code = "rate_limited",
                           .detail = "too many requests from this address; try again later",
                           .retry_after_s = wait});
    return std::nullopt;
  };
  receive.idempotency = false;
  router.Add(std::move(receive));

  router.Add({"GET", "/admin/incoming-hooks", Access::kAdmin, false, [hooks](RestContext& ctx) {
                auto list = hooks->List();
                if (!list) return ProblemFromError(ctx.req, list.error());
                nlohmann::json out = nlohmann::json::array();
                for (const auto& h : *list) out.push_back(webhooks::IncomingHookJson(h));
                return Reply(200, {{"incoming_hooks", out}});
              }});

  RestRoute create{"POST", "/admin/incoming-hooks", Access::kAdmin, true,
                   [hooks, config](RestContext& ctx) {
                     auto in = webhooks::IncomingHookInputFromJson(ctx.body);
                     if (!in) return ProblemFromError(ctx.req, in.error());
                     auto created = hooks->Create(*in);
                     if (!created) return ProblemFromError(ctx.req, created.error());
                     auto body = webhooks::IncomingHookJson(created->hook);
                     body["url"] = IncomingHookUrl(*config, created->token);  // shown once
                     return Reply(201, body);
                   }};
  create.secret_members = {"url"};  // holds the token: never stored for an Idempotency-Key replay
  router.Add(std::move(create));

  router.Add(
      {"GET", "/admin/incoming-hooks/{id}", Access::kAdmin, false, [hooks](RestContext& ctx) {
         auto id = ParseId(ctx.Param("id"));
         if (!id) return NotFound(ctx.req, "no such incoming webhook");
         auto h = hooks->Get(*id);
         if (!h) return ProblemFromError(ctx.req, h.error());
         return Reply(200, webhooks::IncomingHookJson(*h));
       }});

  router.Add(
      {"PATCH", "/admin/incoming-hooks/{id}", Access::kAdmin, true, [hooks](RestContext& ctx) {
         auto id = ParseId(ctx.Param("id"));
         if (!id) return NotFound(ctx.req, "no such incoming webhook");
         auto in = webhooks::IncomingHookInputFromJson(ctx.body);
         if (!in) return ProblemFromError(ctx.req, in.error());
         auto h = hooks->Update(*id, *in);
         if (!h) return ProblemFromError(ctx.req, h.error());
         return Reply(200, webhooks::IncomingHookJson(*h));
       }});

  router.Add(
      {"DELETE", "/admin/incoming-hooks/{id}", Access::kAdmin, false, [hooks](RestContext& ctx) {
         auto id = ParseId(ctx.Param("id"));
         if (!id) return NotFound(ctx.req, "no such incoming webhook");
         auto h = hooks->Get(*id);
         if (!h) return ProblemFromError(ctx.req, h.error());
         if (auto st = hooks->Delete(*id); !st) return ProblemFromError(ctx.req, st.error());
         return Reply(200, {{"deleted", webhooks::IncomingHookJson(*h)}});
       }});
}

}  // namespace crmd::rest
