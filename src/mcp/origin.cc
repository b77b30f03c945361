#include "src/mcp/origin.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "src/core/text.h"
#include "src/mcp/jsonrpc.h"

namespace crmd::mcp {

namespace {

// "host:port" -> "host"; "[::1]:80" -> "[::1]".
std::string_view HostName(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

http::Response Forbidden(const std::string& why) {
  return http::Response::Json(403,
                              jsonrpc::MakeError({-32000, "Forbidden: " + why, nullptr, nullptr}));
}

}  // namespace

OriginPolicy MakeOriginPolicy(const std::string& issuer, std::vector<std::string> allowed_origins) {
  OriginPolicy p;
  auto scheme_end = issuer.find("://");
  std::string rest = scheme_end == std::string::npos ? issuer : issuer.substr(scheme_end + 3);
  std::string authority = rest.substr(0, rest.find('/'));
  p.own_host = text::AsciiLower(authority);
  p.own_origin =
      text::AsciiLower(issuer.substr(0, scheme_end == std::string::npos ? 0 : scheme_end + 3)) +
      p.own_host;
  p.allowed_origins = std::move(allowed_origins);
  return p;
}

bool IsLoopbackHost(std::string_view host) {
  std::string name = text::AsciiLower(HostName(text::TrimOws(host)));
  return name == "localhost" || name == "127.0.0.1" || name == "[::1]";
}

std::optional<http::Response> CheckOriginAndHost(const http::Request& req,
                                                 const OriginPolicy& policy) {
  auto host = req.Header("Host");
  if (!host) return Forbidden("missing Host header");
  std::string h = text::AsciiLower(text::TrimOws(*host));
  if (h != policy.own_host && !IsLoopbackHost(h)) return Forbidden("Host not allowed");

  if (auto origin = req.Header("Origin")) {
    std::string o(text::TrimOws(*origin));
    bool ok = text::AsciiLower(o) == policy.own_origin ||
              std::find(policy.allowed_origins.begin(), policy.allowed_origins.end(), o) !=
                  policy.allowed_origins.end();
    if (!ok) return Forbidden("Origin not allowed");
  }
  return std::nullopt;
}

http::Response CorsPreflight(const http::Request& req) {
  http::Response r = http::Response::Empty(204);
  r.Set("Allow", "POST, DELETE, OPTIONS");
  if (auto origin = req.Header("Origin")) {
    r.Set("Access-Control-Allow-Origin", std::string(text::TrimOws(*origin)));
    r.Set("Access-Control-Allow-Methods", "POST, DELETE");
    // Mcp-Method and Mcp-Name: the 2026-07-28 request metadata headers a browser client
    // must be allowed to send.
    r.Set(
        "Access-Control-Allow-Headers",
        "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, "
        "Mcp-Method, Mcp-Name");
    r.Set("Access-Control-Max-Age", "600");
    r.Set("Vary", "Origin");
  }
  return r;
}

void AddCorsHeaders(const http::Request& req, http::Response& res) {
  auto origin = req.Header("Origin");
  if (!origin) return;
  res.Set("Access-Control-Allow-Origin", std::string(text::TrimOws(*origin)));
  res.Set("Access-Control-Expose-Headers",
          "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate");
  res.Set("Vary", "Origin");
}

}  // namespace crmd::mcp
