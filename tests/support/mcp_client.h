#pragma once
// A small MCP client for tests: JSON-RPC over real HTTP to a TestServer's /mcp with a
// bearer token. It keeps Mcp-Session-Id and MCP-Protocol-Version like a real client (or,
// after UseModern(), speaks stateless 2026-07-28 with _meta on every request) and,
// unless told not to, checks every server message against the MCP JSON schema
// (tests/data/mcp/2025-11-25.schema.json: JSONRPCErrorResponse, InitializeResult,
// ListToolsResult, CallToolResult, ...) and every successful structuredContent against
// the tool's outputSchema from tools/list. A violation is a test failure (ADD_FAILURE).
//
// Not thread-safe: one client per test thread.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "src/core/http_client.h"
#include "tests/support/test_server.h"

namespace crmd::mcp {
class CompiledSchema;
}

namespace crmd::testing {

struct McpClientOptions {
  std::string token;  // the bearer token; empty sends no Authorization header
  std::string path = "/mcp";
  bool validate = true;         // check server messages against the MCP schema
  http::Headers extra_headers;  // added to every request (e.g. Origin)
};

// MCP 2026-07-28 ("modern"): no initialize and no session; every request carries _meta
// (protocol version, client capabilities, client info) and the request metadata headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name). Set with McpClient::UseModern().
struct McpModernOptions {
  std::string version = "2026-07-28";
  nlohmann::json capabilities = nlohmann::json::object();  // clientCapabilities
  bool client_info = true;                                 // send clientInfo
};

// One HTTP exchange: status, headers, and the body parsed as JSON (null when empty or
// not JSON).
struct McpReply {
  int status = 0;
  http::Headers headers;
  std::string raw;
  nlohmann::json body;

  std::optional<std::string_view> Header(std::string_view name) const;
  bool ok() const { return status == 200 && body.contains("result"); }
  // at(): a missing member throws, which gtest reports as a failure.
  const nlohmann::json& result() const { return body.at("result"); }
  const nlohmann::json& error() const { return body.at("error"); }
  // CallToolResult shortcuts. A tool error carries its JSON in the text block only (no
  // structuredContent, which clients validate against the outputSchema); structured()
  // answers that parsed text for errors.
  bool is_tool_error() const { return ok() && result().value("isError", false); }
  const nlohmann::json& structured() const;

 private:
  mutable nlohmann::json error_structured_;
};

class McpClient {
 public:
  McpClient(TestServer& server, McpClientOptions options);
  ~McpClient();

  // initialize (keeping the session id and negotiated version), then, when it succeeded,
  // notifications/initialized. Returns the initialize reply.
  // `capabilities`: the ClientCapabilities object to declare (null: none).
  McpReply Initialize(const std::string& version = "2025-11-25",
                      const nlohmann::json& capabilities = nullptr);
  McpReply Ping();
  McpReply ListTools(const std::optional<std::string>& cursor = std::nullopt);
  // Every page of tools/list, concatenated (fails the test on an error).
  nlohmann::json ListAllTools();
  McpReply CallTool(const std::string& name,
                    const nlohmann::json& arguments = nlohmann::json::object());
  // tools/call expected to succeed: a test failure otherwise; returns structuredContent
  // (null on failure).
  nlohmann::json CallToolOk(const std::string& name,
                            const nlohmann::json& arguments = nlohmann::json::object());
  // tools/call expected to be a tool error (isError): returns structuredContent["error"]
  // ({code, message, details?, field?}), null (and a test failure) otherwise.
  nlohmann::json CallToolError(const std::string& name,
                               const nlohmann::json& arguments = nlohmann::json::object());
  // Any request / notification.
  McpReply Request(const std::string& method,
                   const nlohmann::json& params = nlohmann::json::object());
  McpReply Notify(const std::string& method,
                  const nlohmann::json& params = nlohmann::json::object());
  // DELETE with the current session id.
  McpReply EndSession();

  // Switches to 2026-07-28: from now on Request/ListTools/CallTool/... send _meta and the
  // mirrored headers, keep no session, and replies are validated against
  // tests/data/mcp/2026-07-28.schema.json (the JSON-RPC response type of each method, the
  // specific error types, resultType and _meta serverInfo on every result).
  void UseModern(McpModernOptions modern = {});
  bool modern() const { return modern_.has_value(); }
  McpReply Discover();
  // tools/call retried with inputResponses and requestState (basic/patterns/mrtr).
  McpReply CallToolRetry(const std::string& name, const nlohmann::json& arguments,
                         const nlohmann::json& input_responses, const std::string& request_state);
  // A modern request with its headers and _meta, then `extra` headers overriding; `params`
  // _meta members override the defaults (for malformed requests: the request itself is not
  // checked against the schema, the reply is).
  McpReply ModernRequest(const std::string& method, nlohmann::json params,
                         http::Headers extra = {});

  // A POST of exactly `body` with the usual headers plus `extra` (overriding same-named
  // ones). Not validated: for malformed input.
  McpReply RawPost(const std::string& body, http::Headers extra = {});
  // Any method, with the usual headers plus `extra`. Not validated.
  McpReply RawSend(const std::string& method, const std::string& body, http::Headers extra = {});

  const std::string& session_id() const { return session_id_; }
  void set_session_id(std::string id) { session_id_ = std::move(id); }
  const std::string& protocol_version() const { return protocol_version_; }
  void set_protocol_version(std::string v) { protocol_version_ = std::move(v); }
  void set_token(std::string token) { options_.token = std::move(token); }

 private:
  McpReply Exchange(const std::string& http_method, const std::string& body, http::Headers extra);
  McpReply Rpc(const std::string& method, const nlohmann::json& params, bool notification,
               http::Headers extra = {}, bool check_request = true);
  void Check(const std::string& method, const McpReply& reply, const nlohmann::json& params);
  void CheckModern(const std::string& method, const McpReply& reply, const nlohmann::json& request);
  void RememberOutputSchemas(const McpReply& reply);
  void CheckStructured(const McpReply& reply, const nlohmann::json& params);

  TestServer& server_;
  McpClientOptions options_;
  std::string session_id_;
  std::string protocol_version_;
  int next_id_ = 1;
  std::map<std::string, std::shared_ptr<mcp::CompiledSchema>> output_schemas_;
  std::optional<McpModernOptions> modern_;
};

// Validates `doc` against the MCP schema definition `type` (e.g. "CallToolResult") of
// tests/data/mcp/<version>.schema.json; returns the violation message, or nullopt.
std::optional<std::string> ValidateMcpType(const std::string& type, const nlohmann::json& doc,
                                           const std::string& version = "2025-11-25");

}  // namespace crmd::testing
