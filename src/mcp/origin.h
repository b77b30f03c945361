#pragma once
// DNS-rebinding protection for the MCP endpoint (MCP basic/transports, "Security
// Warning"): a present Origin must be this server's own origin or explicitly allowed, and
// the Host must name this server (its public host) or a loopback name. Pure; thread-safe.
#include <optional>
#include <string>
#include <vector>

#include "src/core/http_types.h"

namespace crmd::mcp {

struct OriginPolicy {
  std::string own_origin;  // scheme://host[:port] of the issuer, e.g. "https://crm.example.com"
  std::string own_host;    // host[:port] as clients send it in Host, e.g. "crm.example.com"
  std::vector<std::string> allowed_origins;  // exact origins (config.allowed_origins)
};

// Builds the policy from the issuer URL (config.Issuer()) and the allowed origins.
OriginPolicy MakeOriginPolicy(const std::string& issuer, std::vector<std::string> allowed_origins);

// True when `host` (a Host header value) is localhost, 127.0.0.1 or [::1], any port.
bool IsLoopbackHost(std::string_view host);

// 403 (JSON-RPC error body without id) when Origin or Host is refused; nullopt otherwise.
std::optional<http::Response> CheckOriginAndHost(const http::Request& req,
                                                 const OriginPolicy& policy);

// CORS for browser-based MCP clients on an allowed origin. REQUIRES: CheckOriginAndHost
// passed, so any Origin present is allowed. No credentials mode: tokens travel in the
// Authorization header, never in cookies.
// The answer to an OPTIONS preflight (204).
http::Response CorsPreflight(const http::Request& req);
// Adds Access-Control-Allow-Origin / -Expose-Headers when the request has an Origin.
void AddCorsHeaders(const http::Request& req, http::Response& res);

}  // namespace crmd::mcp
