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
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "src/core/principal.h"
#include "src/core/result.h"

namespace crmd::mcp {

// A retried multi round-trip request (MCP 2026-07-28 basic/patterns/mrtr): the state the
// tool asked to keep (verified: sealed by this server, bound to this principal, tool and
// arguments, not expired) and the client's answers.
struct InputRound {
  nlohmann::json state;      // as given to ToolOutcome::NeedInput
  nlohmann::json responses;  // inputResponses: key of an input request -> the client's result
                             // (e.g. an ElicitResult {"action", "content"?}); an object, maybe
                             // empty. Unchecked client input: validate what you read.
};

struct ToolContext {
  const Principal& principal;
  std::string request_id;  // HTTP request id, for logs and audit
  std::string session_id;  // Mcp-Session-Id, may be empty
  // MCP 2026-07-28 requests only: the client's capabilities for this request (_meta
  // io.modelcontextprotocol/clientCapabilities); nullptr for 2025-era sessions, which
  // cannot answer NeedInput.
  const nlohmann::json* client_capabilities = nullptr;
  // A retry carrying requestState; nullptr on a first attempt.
  const InputRound* input = nullptr;
  // A 2025-era session whose client declared URL-mode elicitation at initialize: the tool
  // may answer ToolOutcome::UrlElicitationRequired (client/elicitation, -32042).
  bool session_url_elicitation = false;

  // Whether NeedInput may be answered (a 2026-07-28 request).
  bool CanRequestInput() const { return client_capabilities != nullptr; }
  // Whether the client declared elicitation in `mode` ("form" or "url"); an empty
  // elicitation object means form only (client/elicitation "Capabilities").
  bool SupportsElicitation(std::string_view mode) const;
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
  // Used when ok instead of `structured`: the structured content already serialised (a
  // JSON object, written as DumpJson writes it). The answer copies it as the text block
  // and as structuredContent without a tree in between (OkText).
  std::string structured_text;
  bool ok = true;
  Error error;                   // used when !ok
  nlohmann::json error_details;  // optional, e.g. the current record on revision_conflict
  // NeedInput: an InputRequests map and the state to get back on the retry.
  bool needs_input = false;
  nlohmann::json input_requests;
  nlohmann::json input_state;
  nlohmann::json url_elicitations;  // UrlElicitationRequired: an array

  static ToolOutcome Ok(nlohmann::json j) {
    ToolOutcome o;
    o.structured = std::move(j);
    return o;
  }
  // REQUIRES: `json_object` is a JSON object's serialisation as DumpJson(..., replace)
  // writes it (sorted keys, compact), e.g. built with crm::AppendJson(Contact).
  static ToolOutcome OkText(std::string json_object) {
    ToolOutcome o;
    o.structured_text = std::move(json_object);
    return o;
  }
  // Asks the client for input and to retry (MCP 2026-07-28 InputRequiredResult). `requests`
  // maps ids unique within this call to ElicitRequest objects (ElicitForm/ElicitUrl);
  // `state` (any JSON, small, no secrets: the client can read it) comes back verified in
  // ctx.input->state. REQUIRES: ctx.CanRequestInput() and every request's mode supported
  // (ctx.SupportsElicitation); the endpoint refuses otherwise (-32021 or a tool error).
  static ToolOutcome NeedInput(nlohmann::json requests, nlohmann::json state) {
    ToolOutcome o;
    o.needs_input = true;
    o.input_requests = std::move(requests);
    o.input_state = std::move(state);
    return o;
  }
  // The request cannot go on until the person completes URL-mode elicitations out of band;
  // the client retries it afterwards (2025-11-25 URLElicitationRequiredError, -32042).
  // `elicitations`: an array of ElicitUrl params objects, each with an "elicitationId".
  // REQUIRES: ctx.session_url_elicitation.
  static ToolOutcome UrlElicitationRequired(std::string message, nlohmann::json elicitations) {
    ToolOutcome o;
    o.ok = false;
    o.error.code = Errc::kApprovalPending;
    o.error.message = std::move(message);
    o.url_elicitations = std::move(elicitations);
    return o;
  }
  static ToolOutcome Fail(Error e, nlohmann::json details = nullptr) {
    ToolOutcome o;
    o.ok = false;
    o.error = std::move(e);
    o.error_details = std::move(details);
    return o;
  }
  // Maps a Result<json> to an outcome.
  static ToolOutcome From(Result<nlohmann::json> r) {
    if (r) return Ok(std::move(*r));
    return Fail(std::move(r.error()));
  }
};

// ElicitRequest objects for NeedInput (client/elicitation).
// Form mode: `requested_schema` is a flat object schema of primitive properties.
nlohmann::json ElicitForm(std::string message, nlohmann::json requested_schema);
// URL mode: the person opens `url` (out of band; the client sees only the URL).
nlohmann::json ElicitUrl(std::string message, std::string url);

using ToolHandler = std::function<ToolOutcome(const ToolContext&, const nlohmann::json& args)>;

class ToolRegistry;  // src/mcp/registry.h

}  // namespace crmd::mcp
