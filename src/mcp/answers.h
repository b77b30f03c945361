#pragma once
// What both protocol generations of McpEndpoint answer with: JSON-RPC errors over HTTP,
// and a tools/call result written once for either. Internal to src/mcp.
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/http_types.h"
#include "src/mcp/registry.h"

namespace crmd::mcp {

// Transport-level refusals (session, headers) use the implementation-defined range.
inline constexpr int kTransportError = -32000;
inline constexpr int kSessionNotFound = -32001;

http::Response RpcErrorResponse(int status, int code, std::string message,
                                nlohmann::json id = nullptr, nlohmann::json data = nullptr);

// The session-based revisions as a JSON array (an unsupported MCP-Protocol-Version).
nlohmann::json SupportedVersions();

// A tools/call whose outcome is a result, as the HTTP answer (see answers.cc).
http::Response ToolCallAnswer(const nlohmann::json& id, nlohmann::json result,
                              const CallOutcome& out);

// A tools/call refused for a scope the token lacks: HTTP 403 with the JSON-RPC error and
// the WWW-Authenticate challenge naming the scope (InsufficientScopeChallenge).
http::Response InsufficientScopeAnswer(const nlohmann::json& id, const std::string& scope,
                                       const std::string& resource_metadata_url);

}  // namespace crmd::mcp
