#pragma once
// ToolRegistry: the tools the MCP endpoint serves. A tool is its descriptor (from
// schemas/tools/<name>.json, see src/mcp/tool.h) and a handler. At registration the
// descriptor is checked and its input and output schemas compiled once; tools/list and
// tools/call then only read.
//
// tools/call, in order: unknown tool -> JSON-RPC -32602; the principal lacks the tool's
// scope -> kInsufficientScope (the endpoint answers HTTP 403 insufficient_scope);
// arguments failing the input schema -> a tool error (isError) naming the field; the
// handler; a structured result checked against the output schema.
//
// Thread-safety: Register*() must all happen before the first List()/Call() (the
// composition root registers everything before the server starts); afterwards every
// const method is safe to call concurrently and takes no lock.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"
#include "src/mcp/jsonrpc.h"
#include "src/mcp/tool.h"

namespace crmd::mcp {

class CompiledSchema;

struct ToolRegistryOptions {
  // Check every structured result against the tool's outputSchema. On in tests and by
  // default; a mismatch is logged and the client gets a generic tool error.
  bool validate_output = true;
  // A tool's result given as text (ToolOutcome::OkText) becomes a tree in `result` as any
  // other. Off in the server (src/app/mcp_wiring.cc): the text stays text and the
  // endpoint writes it (CallOutcome::structured_in_text).
  bool materialize_text_results = true;
  // tools/list page size.
  size_t page_size = 50;
};

// What tools/call produced.
struct CallOutcome {
  // kInputRequired: the tool asked for input (2026-07-28 requests only); the endpoint seals
  // `input_state` into requestState. kMissingCapability: it asked for an elicitation mode
  // the client did not declare (MissingRequiredClientCapability, -32021).
  enum class Kind { kResult, kRpcError, kInsufficientScope, kInputRequired, kMissingCapability };
  Kind kind = Kind::kResult;
  nlohmann::json result;  // kResult: a CallToolResult
  // kResult: `structured_text` is DumpJson(result.structuredContent) (a tool's success,
  // whose content[0].text is DataText of it), so the answer's writer copies it instead of
  // serialising the tree a second time.
  bool text_is_structured = false;
  // kResult (materialize_text_results off): `result` has neither content nor
  // structuredContent; both come from `structured_text`, a JSON object's serialisation,
  // which the answer's writer puts in the text block of content[0] (as DataText) and
  // copies as structuredContent.
  bool structured_in_text = false;
  std::string structured_text;
  jsonrpc::RpcError rpc_error;           // kRpcError (the caller sets the id)
  std::string required_scope;            // kInsufficientScope
  nlohmann::json input_requests;         // kInputRequired: an InputRequests map
  nlohmann::json input_state;            // kInputRequired
  nlohmann::json required_capabilities;  // kMissingCapability: a ClientCapabilities object

  static CallOutcome Rpc(int code, std::string message) {
    CallOutcome o;
    o.kind = Kind::kRpcError;
    o.rpc_error = {code, std::move(message), nullptr, nullptr};
    return o;
  }
};

class ToolRegistry {
 public:
  explicit ToolRegistry(ToolRegistryOptions options = {});
  ~ToolRegistry();
  ToolRegistry(const ToolRegistry&) = delete;
  ToolRegistry& operator=(const ToolRegistry&) = delete;

  // Loads embedded schemas/tools/<name>.json and registers it. Fails (kInvalidArgument)
  // when the file is missing, malformed, names another tool, has an invalid schema, or
  // the name is already registered.
  Status Register(std::string name, ToolHandler handler);
  // The same with a descriptor given directly (tests, generated tools).
  Status RegisterDescriptor(nlohmann::json descriptor, ToolHandler handler);

  // tools/list: `params` is the request's params (object or null). An invalid cursor is
  // -32602. The result is a ListToolsResult.
  struct ListOutcome {
    nlohmann::json result;
    std::optional<jsonrpc::RpcError> error;
  };
  ListOutcome List(const nlohmann::json& params) const;

  // tools/call: `params` is the request's params ({name, arguments?}).
  CallOutcome Call(const ToolContext& ctx, const nlohmann::json& params) const;

  // Registered names, sorted.
  std::vector<std::string> Names() const;
  size_t size() const { return tools_.size(); }
  // The descriptor as registered, or nullptr.
  const nlohmann::json* Descriptor(std::string_view name) const;

 private:
  struct Tool;
  CallOutcome Invoke(const Tool& tool, const ToolContext& ctx, const nlohmann::json& args) const;
  CallOutcome InputRequired(const Tool& tool, const ToolContext& ctx, ToolOutcome out) const;

  const ToolRegistryOptions options_;
  std::map<std::string, std::unique_ptr<Tool>, std::less<>> tools_;
};

// Helpers for tool results (also used by tests).
// A CallToolResult carrying `structured` as structuredContent and, inside the
// untrusted-data block (data_block.h), as its text block. Errors carry the text only.
nlohmann::json ToolResult(nlohmann::json structured, bool is_error);
// The same when the serialisation is at hand. REQUIRES: `serialised` is
// DumpJson(structured, replace).
nlohmann::json ToolResult(nlohmann::json structured, std::string_view serialised, bool is_error);
// The structured error body {"error": {"code", "message", "details"?}}.
nlohmann::json ToolErrorBody(const std::string& code, const std::string& message,
                             const nlohmann::json& details = nullptr);

}  // namespace crmd::mcp
