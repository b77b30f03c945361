#pragma once
// MCP 2026-07-28 ("modern": no initialize, no session; every request carries its version
// and the client's capabilities in params._meta). modern.cc holds McpEndpoint's whole
// path for these requests, and the pure functions it reads them with, declared here:
// a request's _meta (basic/index "_meta", "Per-request protocol fields") and the
// Streamable HTTP request metadata headers (basic/transports/streamable-http "Request
// Metadata": MCP-Protocol-Version, Mcp-Method, Mcp-Name, checked against the body).
// Thread-safe: no state.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/http_types.h"
#include "src/mcp/jsonrpc.h"

namespace crmd::mcp {

// _meta keys reserved by MCP (basic/index "Reserved keys").
inline constexpr const char* kMetaProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kMetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kMetaClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";
inline constexpr const char* kMetaServerInfo = "io.modelcontextprotocol/serverInfo";

// Error codes the MCP specification defines (basic/index "Error Codes", -32020..-32099).
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;
// 2025-11-25 client/elicitation "URL Elicitation Required Error".
inline constexpr int kUrlElicitationRequired = -32042;

// params._meta[io.modelcontextprotocol/protocolVersion] when it is a string.
std::optional<std::string> MetaProtocolVersion(const nlohmann::json& params);

// The per-request fields of a modern request.
struct RequestMeta {
  std::string protocol_version;
  nlohmann::json client_capabilities;  // an object
  nlohmann::json client_info;          // an Implementation object, or null when absent
  std::string log_level;               // empty when absent
};
struct MetaOutcome {
  std::optional<RequestMeta> meta;
  std::optional<jsonrpc::RpcError>
      error;  // -32602 (HTTP 400): a required field missing or malformed
};
MetaOutcome ReadRequestMeta(const nlohmann::json& params);

// The value of an Mcp-Name / Mcp-Param-* header: plain visible ASCII (and inner spaces), or
// "=?base64?<base64 of UTF-8>?=". nullopt when it has invalid characters or bad base64.
std::optional<std::string> DecodeMirroredHeader(std::string_view value);

// Server Validation: MCP-Protocol-Version equals `meta_version`, Mcp-Method equals the
// method, and for tools/call, resources/read, prompts/get Mcp-Name equals params.name (or
// params.uri), after decoding. nullopt when all hold, else a HeaderMismatch (-32020,
// HTTP 400) naming the header.
std::optional<jsonrpc::RpcError> CheckRequestHeaders(const http::Request& req,
                                                     const jsonrpc::Message& m,
                                                     std::string_view meta_version);

}  // namespace crmd::mcp
