#pragma once
// McpEndpoint: the Streamable HTTP transport of MCP (basic/transports) on one path,
// after the caller has checked Origin/Host (src/mcp/origin.h) and authenticated the
// bearer token. Answers every POSTed request with one application/json body (never
// SSE), notifications and responses with 202, DELETE ends a session, GET is 405 (no
// server-initiated stream: crmd sends no notifications or requests).
//
// Thread-safe: Handle() may be called concurrently; it takes no lock while a tool runs.
#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "src/core/clock.h"
#include "src/core/http_types.h"
#include "src/core/principal.h"
#include "src/core/random.h"
#include "src/mcp/rate_limiter.h"
#include "src/mcp/registry.h"
#include "src/mcp/session.h"

namespace crmd::mcp {

// Newest first; initialize answers the client's version when listed, else the first.
inline constexpr std::array<std::string_view, 3> kSupportedProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26"};
// Assumed when a request carries no MCP-Protocol-Version and no session says otherwise.
inline constexpr std::string_view kDefaultProtocolVersion = "2025-03-26";

bool IsSupportedProtocolVersion(std::string_view version);
std::string NegotiateProtocolVersion(std::string_view requested);

// JSON-RPC code for a tools/call refused with HTTP 403 insufficient_scope (in the
// implementation-defined server error range -32000..-32099).
inline constexpr int kInsufficientScopeCode = -32003;

struct McpEndpointOptions {
  std::string server_name = "crmd";
  std::string server_title = "crmd CRM";
  std::string server_version = "0.0.0";
  std::string instructions;  // initialize's `instructions`
  // <issuer>/.well-known/oauth-protected-resource/mcp, for WWW-Authenticate on 403.
  std::string resource_metadata_url;
  SessionStoreOptions sessions;
  // Where sessions live; nullptr: in memory on this node (SessionStore). Must outlive
  // the endpoint.
  Sessions* shared_sessions = nullptr;
  // tools/call per principal (OAuth client + subject) on this node.
  RateLimiterOptions rate_limit;
};

class McpEndpoint {
 public:
  // `tools`, `clock` and `random` must outlive the endpoint.
  McpEndpoint(McpEndpointOptions options, const ToolRegistry& tools, const Clock& clock,
              Random& random);
  McpEndpoint(const McpEndpoint&) = delete;
  McpEndpoint& operator=(const McpEndpoint&) = delete;

  // REQUIRES: Origin/Host checked and `principal` authenticated by the caller.
  http::Response Handle(const http::Request& req, const Principal& principal);

  Sessions& sessions() { return *sessions_; }
  const McpEndpointOptions& options() const { return options_; }

 private:
  http::Response Post(const http::Request& req, const Principal& principal);
  http::Response Delete(const http::Request& req, const Principal& principal);
  http::Response Initialize(const nlohmann::json& id, const nlohmann::json& params,
                            const Principal& principal);

  const McpEndpointOptions options_;
  const ToolRegistry& tools_;
  std::unique_ptr<SessionStore> own_sessions_;  // when no shared store was given
  Sessions* const sessions_;
  RateLimiter limiter_;
};

// `Bearer error="insufficient_scope", scope="...", resource_metadata="..."` (RFC 6750 §3,
// MCP basic/authorization "Runtime Insufficient Scope Errors").
std::string InsufficientScopeChallenge(const std::string& scope,
                                       const std::string& resource_metadata_url);

}  // namespace crmd::mcp
