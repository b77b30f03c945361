#include "src/rest/rest_api.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/crypto.h"
#include "src/core/json_parse.h"
#include "src/core/log.h"
#include "src/crm/services.h"
#include "src/governance/api_keys.h"
#include "src/governance/idempotency.h"
#include "src/rest/problem.h"

namespace crmd::rest {
namespace {

std::string Trim(std::string s, char c) {
  while (!s.empty() && s.front() == c) s.erase(s.begin());
  while (!s.empty() && s.back() == c) s.pop_back();
  return s;
}

// Keys belong in headers only: URLs end up in logs, proxies and browser history.
bool KeyInQuery(const http::Request& req) {
  if (req.query.empty()) return false;
  for (const auto& [name, value] : http::ParseForm(req.query)) {
    std::string n;
    for (char c : name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n == "api_key" || n == "apikey" || n == "key" || n == "x-api-key" || n == "access_token" ||
        n == "token")
      return true;
    if (value.rfind(governance::ApiKeys::kKeyPrefix, 0) == 0) return true;
  }
  return false;
}

// The presented key: "Authorization: Bearer <key>" or "X-API-Key: <key>".
std::optional<std::string> PresentedKey(const http::Request& req) {
  if (auto auth = req.Header("Authorization")) {
    std::string_view v = *auth;
    if (v.size() > 7 && http::IEquals(v.substr(0, 7), "bearer ")) {
      v.remove_prefix(7);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return std::string(v);
    }
    return std::string();  // some other scheme: presented but unusable
  }
  if (auto k = req.Header("X-API-Key")) return std::string(*k);
  return std::nullopt;
}

bool IsJsonContentType(std::string_view ct) {
  auto semi = ct.find(';');
  std::string_view media = ct.substr(0, semi);
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  while (!media.empty() && media.front() == ' ') media.remove_prefix(1);
  if (http::IEquals(media, "application/json")) return true;
  return media.size() > 5 && http::IEquals(media.substr(media.size() - 5), "+json");
}

// An Idempotency-Key: 1 to 255 visible ASCII characters.
bool ValidIdempotencyKey(std::string_view k) {
  if (k.empty() || k.size() > 255) return false;
  for (char c : k)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

}  // namespace

std::string RestBasePath(const Config& config) {
  std::string base;
  for (const auto& part : {Trim(config.rest_root, '/'), Trim(config.rest_namespace, '/')})
    if (!part.empty()) base += "/" + part;
  return base + "/v1";
}

RestApi::RestApi(RestDeps deps) : deps_(deps), base_(RestBasePath(*deps.config)) {
  AddMetaRoutes(router_, deps_);
  AddAdminKeyRoutes(router_, deps_);
  if (deps_.crm) {
    AddContactRoutes(router_, deps_);
    AddSuppressionRoutes(router_, deps_);
    AddExportRoutes(router_, deps_);
    AddImportRoutes(router_, deps_);
  }
  if (deps_.forms) {
    AddFormRoutes(router_, deps_);
    AddAdminFormRoutes(router_, deps_);
  }
  if (deps_.endpoints && deps_.deliveries) AddAdminWebhookRoutes(router_, deps_);
  if (deps_.incoming) AddIncomingHookRoutes(router_, deps_);
  if (deps_.marketing) {
    AddMailRoutes(router_, deps_);
    AddMailReceiverRoutes(router_, deps_);
    AddTemplateRoutes(router_, deps_);
    AddCampaignTestRoutes(router_, deps_);
  }
}

RestApi::~RestApi() = default;

std::vector<std::pair<std::string, std::string>> RestApi::Routes() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& r : router_.routes()) out.emplace_back(r.method, r.pattern);
  return out;
}

http::Response RestApi::Handle(const http::Request& req) const {
  const Stopwatch started;
  const RestRoute* matched = nullptr;
  http::Response res = Guarded(req, &matched);
  if (deps_.metrics) Record(req, matched, res, started.ElapsedMicros());
  return res;
}

void RestApi::Record(const http::Request& req, const RestRoute* matched, const http::Response& res,
                     int64_t duration_us) const {
  // Label values are the route table's patterns, never the request's path.
  std::string_view method = matched ? std::string_view(matched->method) : "";
  std::string_view route = matched ? std::string_view(matched->pattern) : "unmatched";
  static constexpr std::string_view kClass[] = {"1xx", "2xx", "3xx", "4xx", "5xx"};
  std::string_view status =
      res.status >= 100 && res.status < 600 ? kClass[res.status / 100 - 1] : "5xx";
  deps_.metrics
      ->Counter("crmd_rest_requests_total", "REST API v1 requests by route and status class.",
                {{"method", method}, {"route", route}, {"status", status}})
      .Inc();
  deps_.metrics
      ->Histogram("crmd_rest_request_duration_seconds", "REST API v1 latency by route.",
                  {{"method", method}, {"route", route}})
      .ObserveMicros(duration_us);
  if (res.status >= 400) {
    // The problem's stable code (src/rest/problem.h); read back only for errors.
    auto body = nlohmann::json::parse(res.body, nullptr, false);
    std::string code = body.is_object() ? body.value("code", "") : "";
    if (!code.empty())
      deps_.metrics
          ->Counter("crmd_errors_total", "Errors answered, by face and stable error code.",
                    {{"face", "rest"}, {"code", code}})
          .Inc();
  }
  (void)req;
}

http::Response RestApi::Guarded(const http::Request& req, const RestRoute** matched) const {
  try {
    return HandleUnguarded(req, matched);
  } catch (const std::exception& e) {
    spdlog::error(R"("event":"rest_exception","request_id":"{}","what":"{}")", req.request_id,
                  JsonEscape(e.what()));
  } catch (...) {
    spdlog::error(R"("event":"rest_exception","request_id":"{}")", req.request_id);
  }
  return Problem(req, {.status = 500, .code = "internal", .detail = "internal error"});
}

http::Response RestApi::HandleUnguarded(const http::Request& req, const RestRoute** matched) const {
  if (req.path.rfind(base_ + "/", 0) != 0)
    return Problem(req, {.status = 404, .code = "not_found", .detail = "no such endpoint"});
  std::string_view sub = std::string_view(req.path).substr(base_.size());
  auto match = router_.Find(req.method, sub);
  if (!match.route) {
    if (match.allow.empty())
      return Problem(req, {.status = 404, .code = "not_found", .detail = "no such endpoint"});
    auto r = Problem(
        req,
        {.status = 405, .code = "method_not_allowed", .detail = "allowed methods: " + match.allow});
    r.Set("Allow", match.allow);
    return r;
  }
  const RestRoute& route = *match.route;
  *matched = &route;
  if (KeyInQuery(req))
    return Problem(req, {.status = 400,
                         .code = "key_in_query",
                         .detail = "send API keys in the Authorization or X-API-Key header, "
                                   "never in the URL"});

  RestContext ctx{.req = req, .params = std::move(match.params), .key = std::nullopt, .body = {}};
  http::Response resp = Route(req, route, ctx);
  if (route.finish) route.finish(req, ctx.params, resp);
  return resp;
}

http::Response RestApi::Route(const http::Request& req, const RestRoute& route,
                              RestContext& ctx) const {
  if (route.admit)
    if (auto refused = route.admit(req)) return std::move(*refused);
  if (route.access != Access::kPublic) {
    auto presented = PresentedKey(req);
    if (!presented && route.access != Access::kForm)
      return Problem(req, {.status = 401,
                           .code = "missing_api_key",
                           .detail = "an API key is required (Authorization: Bearer <key> or "
                                     "X-API-Key)"});
    if (presented) {
      auto key = deps_.api_keys->Authenticate(*presented);
      if (!key) {
        return ProblemFromError(req, key.error(), {.unauthenticated_code = "invalid_api_key"});
      }
      ctx.key = std::move(*key);
    }
    if (route.access == Access::kAdmin && ctx.key->role != governance::ApiKeyRole::kAdmin)
      return Problem(req, {.status = 403,
                           .code = "insufficient_role",
                           .detail = "this endpoint needs an API key with the admin role"});
  }

  if (route.json_body) {
    if (req.body.size() > deps_.config->rest_max_body_bytes)
      return Problem(req, {.status = 413,
                           .code = "payload_too_large",
                           .detail = "the body is larger than " +
                                     std::to_string(deps_.config->rest_max_body_bytes) + " bytes"});
    auto ct = req.Header("Content-Type");
    if (!ct || !IsJsonContentType(*ct))
      return Problem(req, {.status = 415,
                           .code = "unsupported_media_type",
                           .detail = "send the body as application/json"});
    ParsedJson parsed = ParseJsonStrict(req.body);
    if (!parsed) {
      const char* code = parsed.problem == JsonProblem::kTooDeep        ? "json_too_deep"
                         : parsed.problem == JsonProblem::kDuplicateKey ? "duplicate_member"
                         : parsed.problem == JsonProblem::kNulCharacter ? "nul_character"
                                                                        : "malformed_json";
      return Problem(req, {.status = 400, .code = code, .detail = parsed.detail});
    }
    ctx.body = std::move(parsed.value);
    if (!ctx.body.is_object() && !(route.json_array && ctx.body.is_array()))
      return Problem(
          req,
          {.status = 400, .code = "malformed_json", .detail = "the body must be a JSON object"});
  }
  if (req.method == "POST" && route.idempotency && req.Header("Idempotency-Key") && deps_.crm)
    return WithIdempotency(req, route, ctx);
  return route.handler(ctx);
}

// Idempotency-Key on POST (draft-ietf-httpapi-idempotency-key-header): the first 2xx
// answer is kept for 24 hours per caller, method and path; a repeat with the same body
// gets it again (Idempotent-Replayed: true), a repeat with another body a 422, and a
// repeat while the first is still running a 409. Failed requests are not kept, so they can
// be retried with the same key.
http::Response RestApi::WithIdempotency(const http::Request& req, const RestRoute& route,
                                        RestContext& ctx) const {
  std::string key(*req.Header("Idempotency-Key"));
  if (!ValidIdempotencyKey(key))
    return Problem(req, {.status = 400,
                         .code = "invalid_idempotency_key",
                         .detail = "Idempotency-Key must be 1-255 visible ASCII characters"});
  std::string who = ctx.key ? "api_key:" + std::to_string(ctx.key->id) : "ip:" + req.remote_ip;
  governance::Idempotency::Request request{
      .scope = "rest:" + who + ":" + req.method + " " + req.path,
      .key = key,
      .fingerprint = crypto::Sha256Hex(req.body)};
  http::Response resp;
  auto answer =
      deps_.crm->governance.idempotency->Run(request, [&]() -> std::optional<nlohmann::json> {
        resp = route.handler(ctx);
        if (resp.status < 200 || resp.status >= 300) return std::nullopt;
        std::string body = resp.body;
        if (!route.secret_members.empty()) {
          auto j = nlohmann::json::parse(body, nullptr, false);
          if (j.is_object()) {
            for (const auto& m : route.secret_members) j.erase(m);
            body = j.dump();
          }
        }
        return nlohmann::json{
            {"status", resp.status},
            {"body", body},
            {"location", std::string(resp.Header("Location").value_or(""))},
            {"content_type",
             std::string(resp.Header("Content-Type").value_or("application/json"))}};
      });
  if (!answer) return ProblemFromError(req, answer.error());
  switch (answer->outcome) {
    case governance::Idempotency::Outcome::kReused:
      return Problem(req,
                     {.status = 422,
                      .code = "idempotency_key_reused",
                      .detail = "this Idempotency-Key was used with a different request body"});
    case governance::Idempotency::Outcome::kInUse:
      return Problem(req, {.status = 409,
                           .code = "idempotency_key_in_use",
                           .detail = "a request with this Idempotency-Key is still being processed",
                           .retry_after_s = 1});
    case governance::Idempotency::Outcome::kReplayed: {
      const nlohmann::json& saved = answer->answer;
      http::Response r = http::Response::Text(saved.value("status", 200), saved.value("body", ""),
                                              saved.value("content_type", "application/json"));
      r.Set("Cache-Control", "no-store");
      r.Set("Idempotent-Replayed", "true");
      if (std::string loc = saved.value("location", ""); !loc.empty()) r.Set("Location", loc);
      return r;
    }
    case governance::Idempotency::Outcome::kRan:
      if (!answer->kept)
        spdlog::warn(R"("event":"idempotency_store_failed","request_id":"{}")", req.request_id);
      break;
  }
  return resp;
}

}  // namespace crmd::rest
