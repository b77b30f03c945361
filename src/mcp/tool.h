#pragma once
// The tool contract between the MCP layer and the tools. The MCP layer knows nothing of
// the CRM: a tool is a name, its descriptor (loaded from schemas/tools/<name>.json) and a
// handler. The registry validates arguments against the input schema and checks the
// scope before the handler runs.
//
// schemas/tools/<name>.json:
//   { "name": "...", "title": "...", "description": "...", "scope": "contacts:read",
//     "annotations": { "readOnlyHint": true, "destructiveHint": false,
//                      "idempotentHint": true, "openWorldHint": false },
//     "inputSchema": { "type": "object", ... }, "outputSchema": { "type": "object", ... } }
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/principal.h"
#include "src/core/result.h"

namespace crmd::mcp {

struct ToolContext {
  const Principal& principal;
  std::string request_id;  // HTTP request id, for logs and audit
  std::string session_id;  // Mcp-Session-Id, may be empty
};

// A tool's answer: either structured content (validated against the output schema and
// also sent as a text block), or a business failure that becomes `isError: true` with
// {"error": {"code": ErrcCode(code), "message": ..., "details"?: ...}}.
// A scope only known at run time (confirm_action: the pending action's scope): return
// Fail({Errc::kPermissionDenied, msg, {}}, {{"required_scope", "<scope>"}}) and the
// endpoint answers HTTP 403 insufficient_scope naming that scope (step-up), not a tool
// error. Errc::kInternal shows the client only "internal error" (detail is logged).
// Handlers should not throw; an escaped exception becomes JSON-RPC -32603 without detail.
struct ToolOutcome {
  nlohmann::json structured;  // used when ok
  bool ok = true;
  Error error;                // used when !ok
  nlohmann::json error_details;  // optional, e.g. the current record on revision_conflict

  static ToolOutcome Ok(nlohmann::json j) { return {std::move(j), true, {}, nullptr}; }
  static ToolOutcome Fail(Error e, nlohmann::json details = nullptr) {
    return {nullptr, false, std::move(e), std::move(details)};
  }
  // Maps a Result<json> to an outcome.
  static ToolOutcome From(Result<nlohmann::json> r) {
    if (r) return Ok(std::move(*r));
    return Fail(std::move(r.error()));
  }
};

using ToolHandler = std::function<ToolOutcome(const ToolContext&, const nlohmann::json& args)>;

class ToolRegistry;  // src/mcp/registry.h

}  // namespace crmd::mcp
