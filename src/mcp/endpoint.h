#pragma once
// McpEndpoint: the Streamable HTTP transport of MCP (basic/transports) on one path,
// after the caller has checked Origin/Host (src/mcp/origin.h) and authenticated the
// bearer token. Answers every POSTed request with one application/json body (never
// SSE), notifications and responses with 202, DELETE ends a session, GET is 405 (no
// server-initiated stream: crmd sends no notifications or requests).
//
// Two eras on the same path (2026-07-28 basic/versioning "dual-era"): initialize opens a
// 2025-era session (2025-11-25, 2025-06-18, 2025-03-26); a request whose _meta names a
// newer version (or whose MCP-Protocol-Version header does) is served statelessly as
// 2026-07-28 (src/mcp/modern.h), including multi round-trip tools/call whose state
// travels sealed in requestState (src/mcp/request_state.h).
//
// Thread-safe: Handle() may be called concurrently; it takes no lock while a tool runs.
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/http_types.h"
#include "src/core/metrics.h"
#include "src/core/principal.h"
#include "src/core/random.h"
#include "src/mcp/apps.h"
#include "src/mcp/jsonrpc.h"
#include "src/mcp/rate_limiter.h"
#include "src/mcp/registry.h"
#include "src/mcp/request_state.h"
#include "src/mcp/session.h"

namespace crmd::mcp {

// Session-based revisions (initialize, Mcp-Session-Id), newest first; initialize answers
// the client's version when listed, else the first (the highest both speak: a client
// asking for a newer revision than these gets the newest session-based one).
inline constexpr std::array<std::string_view, 3> kSupportedProtocolVersions = {
    "2025-11-25", "2025-06-18", "2025-03-26"};
// Stateless revisions (version and capabilities in every request's _meta), newest first.
inline constexpr std::array<std::string_view, 1> kModernProtocolVersions = {"2026-07-28"};
// Assumed when a request carries no MCP-Protocol-Version and no session says otherwise.
inline constexpr std::string_view kDefaultProtocolVersion = "2025-03-26";

// Session-based revisions only (initialize and the MCP-Protocol-Version of a session).
bool IsSupportedProtocolVersion(std::string_view version);
bool IsModernProtocolVersion(std::string_view version);
std::string NegotiateProtocolVersion(std::string_view requested);
// Every revision crmd speaks, newest first (server/discover, UnsupportedProtocolVersion).
nlohmann::json AllProtocolVersions();

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
  // 2026-07-28 requestState keys (src/mcp/request_state.h): the first seals, all open.
  // Every node behind one load balancer needs the same keys. Empty: one random key for
  // this endpoint's lifetime (one node; a restart invalidates pending round trips).
  std::vector<RequestStateKey> request_state_keys;
  RequestStateOptions request_state;
  // 2026-07-28 caching hints on server/discover and tools/list (server/utilities/caching).
  // The tool set is the same for every caller and changes only with a deployment.
  int64_t list_ttl_ms = 10 * 60 * 1000;
  // crmd_mcp_requests_total{method}, crmd_mcp_tool_calls_total{tool,outcome},
  // crmd_mcp_tool_call_duration_seconds{tool}, crmd_errors_total{face="mcp",code}
  // (GET /metrics). Null: not recorded. Must outlive the endpoint.
  metrics::Registry* metrics = nullptr;
  // MCP Apps views, offered to the clients that declare the extension (src/mcp/apps.h).
  // Null or empty: the extension is never declared. Must outlive the endpoint.
  const UiResources* ui = nullptr;
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
  void CountMethod(const jsonrpc::Message* m) const;
  void AdoptMetaTrace(const nlohmann::json& params) const;
  http::Response Post(const http::Request& req, const Principal& principal);
  http::Response Delete(const http::Request& req, const Principal& principal);
  // A 2025-era request (session_requests.cc): initialize opens a session, every other
  // request names it.
  http::Response Initialize(const nlohmann::json& id, const nlohmann::json& params,
                            const Principal& principal);
  http::Response PostInSession(const http::Request& req, const jsonrpc::Message& m,
                               const Principal& principal);
  // A 2026-07-28 request (modern.cc): no session; _meta and headers checked on every
  // request.
  http::Response PostModern(const http::Request& req, const jsonrpc::Message& m,
                            const Principal& principal);
  http::Response CallToolModern(const http::Request& req, const jsonrpc::Message& m,
                                const Principal& principal,
                                const nlohmann::json& client_capabilities);
  // MCP Apps (apps_answers.cc): whether this request's client sees the views, the
  // server's capabilities for it, and resources/list|read.
  bool OffersUi(bool client_declared) const {
    return client_declared && options_.ui && !options_.ui->empty();
  }
  nlohmann::json ServerCapabilities(bool ui) const;
  // nullopt when `m` is not a resources method.
  std::optional<http::Response> ResourcesAnswer(const jsonrpc::Message& m, bool modern) const;
  // resultType "complete" and the server's identity in _meta.
  nlohmann::json Complete(nlohmann::json result) const;
  nlohmann::json ServerInfo() const;

  // The call within the principal's rate on this node (answers.cc).
  CallOutcome RunToolCall(const ToolContext& context, const nlohmann::json& params,
                          const std::string& owner);
  // One line per tools/call, and its metrics.
  void LogToolCall(const http::Request& req, const Principal& principal,
                   const nlohmann::json& params, const CallOutcome& out, int64_t duration_us) const;
  // A tool's series of crmd_mcp_tool_calls_total (by outcome) and
  // crmd_mcp_tool_call_duration_seconds, found in the registry on first use and kept
  // (metrics::Kept).
  struct ToolSeries {
    std::array<std::atomic<metrics::Counter*>, 6> calls{};
    std::atomic<metrics::Histogram*> duration{nullptr};
  };

  const McpEndpointOptions options_;
  const ToolRegistry& tools_;
  // Keyed by the registered tool names and "unknown"; filled once, at the first call
  // (ToolRegistry: every tool is registered before the first call), read-only afterwards.
  mutable std::once_flag tool_series_once_;
  mutable std::map<std::string, std::unique_ptr<ToolSeries>, std::less<>> tool_series_;
  std::unique_ptr<SessionStore> own_sessions_;  // when no shared store was given
  Sessions* const sessions_;
  RateLimiter limiter_;
  std::unique_ptr<RequestStateCodec> request_states_;
};

// `Bearer error="insufficient_scope", scope="...", resource_metadata="..."` (RFC 6750 §3,
// MCP basic/authorization "Runtime Insufficient Scope Errors").
std::string InsufficientScopeChallenge(const std::string& scope,
                                       const std::string& resource_metadata_url);

}  // namespace crmd::mcp
