#include "auth/token_routes.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "auth/introspection.h"
#include "auth/metadata.h"
#include "auth/revocation.h"
#include "auth/token_endpoint.h"
#include "auth/token_errors.h"

namespace crmd::auth {

namespace {

// Discovery and keys are public documents that browser-based clients fetch cross-origin.
http::Response PublicCors(http::Response r) {
  r.Set("Access-Control-Allow-Origin", "*");
  return r;
}

std::optional<http::Response> PublicGetOnly(const http::Request& req) {
  if (req.method == "OPTIONS") {
    auto r = http::Response::Empty(204);
    r.Set("Access-Control-Allow-Origin", "*");
    r.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS");
    r.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version");
    r.Set("Access-Control-Max-Age", "86400");
    return r;
  }
  if (req.method == "GET" || req.method == "HEAD") return std::nullopt;
  auto r = http::Response::Json(405, {{"error", "method_not_allowed"}});
  r.Set("Allow", "GET, HEAD, OPTIONS");
  return PublicCors(std::move(r));
}

http::Response PublicJson(const nlohmann::json& body, std::string_view cache) {
  auto r = http::Response::Json(200, body);
  r.Set("Cache-Control", std::string(cache));
  return PublicCors(std::move(r));
}

// Browser-based public clients (OAuth 2.1 §7.2) call the token and revocation endpoints
// cross-origin. No cookies are involved, so a wildcard origin exposes nothing ambient.
http::Handler PostEndpoint(std::function<http::Response(const http::Request&)> handle, bool cors) {
  return [handle = std::move(handle), cors](const http::Request& req) {
    if (cors && req.method == "OPTIONS") {
      auto r = http::Response::Empty(204);
      r.Set("Access-Control-Allow-Origin", "*");
      r.Set("Access-Control-Allow-Methods", "POST, OPTIONS");
      r.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version");
      r.Set("Access-Control-Max-Age", "86400");
      return r;
    }
    http::Response r;
    if (req.method != "POST") {
      r = NoStoreJson(405, {{"error", "invalid_request"}, {"error_description", "use POST"}});
      r.Set("Allow", cors ? "POST, OPTIONS" : "POST");
    } else {
      r = handle(req);
    }
    if (cors) r.Set("Access-Control-Allow-Origin", "*");
    return r;
  };
}

}  // namespace

namespace {

// /oauth/token's outcomes: tokens issued by grant type, requests refused by OAuth error
// code (RFC 6749 §5.2).
http::Handler CountTokenOutcomes(metrics::Registry& m, http::Handler inner) {
  return [&m, inner = std::move(inner)](const http::Request& req) {
    http::Response res = inner(req);
    if (req.method != "POST") return res;
    auto known = [](std::string_view v, std::initializer_list<std::string_view> words) {
      for (auto w : words)
        if (v == w) return w;
      return std::string_view("other");
    };
    if (res.status == 200) {
      std::string grant = http::FormValue(http::ParseForm(req.body), "grant_type").value_or("");
      m.Counter("crmd_oauth_tokens_issued_total", "Access tokens issued, by grant type.",
                {{"grant_type",
                  known(grant, {"authorization_code", "refresh_token", "client_credentials"})}})
          .Inc();
    } else {
      auto body = nlohmann::json::parse(res.body, nullptr, false);
      std::string error = body.is_object() ? body.value("error", "") : "";
      auto code = known(error, {"invalid_request", "invalid_client", "invalid_grant",
                                "unauthorized_client", "unsupported_grant_type", "invalid_scope",
                                "invalid_target", "temporarily_unavailable", "server_error"});
      m.Counter("crmd_oauth_token_refused_total", "Token requests refused, by OAuth error code.",
                {{"error", code}})
          .Inc();
      m.Counter("crmd_errors_total", "Errors answered, by face and stable error code.",
                {{"face", "oauth"}, {"code", code}})
          .Inc();
    }
    return res;
  };
}

}  // namespace

std::vector<TokenRoute> TokenRoutes(TokenService& tokens, metrics::Registry* metrics) {
  std::vector<TokenRoute> routes;
  http::Handler token = PostEndpoint(
      [&tokens](const http::Request& r) { return HandleTokenRequest(tokens, r); }, true);
  if (metrics) token = CountTokenOutcomes(*metrics, std::move(token));
  routes.push_back({std::string(kTokenPath), std::move(token)});
  routes.push_back(
      {std::string(kRevokePath),
       PostEndpoint([&tokens](const http::Request& r) { return HandleRevocation(tokens, r); },
                    true)});
  routes.push_back(
      {std::string(kIntrospectPath),
       PostEndpoint([&tokens](const http::Request& r) { return HandleIntrospection(tokens, r); },
                    false)});
  const std::string issuer = tokens.options().issuer;
  const std::string resource = tokens.options().resource;

  auto jwks = [&tokens](const http::Request& req) {
    if (auto r = PublicGetOnly(req)) return *r;
    auto doc = tokens.keys().Jwks();
    if (!doc) {
      spdlog::error(R"("event":"jwks_failed","detail":"{}")", doc.error().detail);
      return PublicCors(http::Response::Json(503, {{"error", "temporarily_unavailable"}}));
    }
    // Short cache: clients must see a rotated key soon after it starts signing.
    return PublicJson(*doc, "public, max-age=300");
  };
  routes.push_back({std::string(kJwksPath), jwks});
  routes.push_back({std::string(kWellKnownJwksPath), jwks});

  auto as_meta = [doc = AuthorizationServerMetadata(issuer)](const http::Request& req) {
    if (auto r = PublicGetOnly(req)) return *r;
    return PublicJson(doc, "public, max-age=3600");
  };
  routes.push_back({std::string(kAsMetadataPath), as_meta});
  routes.push_back({std::string(kOidcConfigPath), as_meta});

  auto pr_meta = [doc = ProtectedResourceMetadata(issuer, resource)](const http::Request& req) {
    if (auto r = PublicGetOnly(req)) return *r;
    return PublicJson(doc, "public, max-age=3600");
  };
  routes.push_back({std::string(kPrMetadataPath), pr_meta});
  routes.push_back({std::string(kPrMetadataMcpPath), pr_meta});
  return routes;
}

}  // namespace crmd::auth
