// The 2025-era path of McpEndpoint (2025-11-25, 2025-06-18, 2025-03-26): initialize opens
// a session, and every later request names it in Mcp-Session-Id.
#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/text.h"
#include "src/mcp/answers.h"
#include "src/mcp/endpoint.h"
#include "src/mcp/jsonrpc.h"

namespace crmd::mcp {

using nlohmann::json;

http::Response McpEndpoint::PostInSession(const http::Request& req, const jsonrpc::Message& m,
                                          const Principal& principal) {
  // What a transport error below answers with (JSON-RPC 2.0 §5: the request's id). A
  // notification has none, and a client's response carries the id of our request, not one
  // to answer. Called on the error paths only: a served request copies nothing.
  auto answer_id = [&m] { return m.kind == jsonrpc::Kind::kRequest ? m.id : json(); };
  auto version = req.Header("MCP-Protocol-Version");
  if (version && !IsSupportedProtocolVersion(text::TrimOws(*version))) {
    return RpcErrorResponse(
        400, kTransportError, "Bad Request: unsupported MCP-Protocol-Version", answer_id(),
        json{{"supported", SupportedVersions()}, {"requested", std::string(*version)}});
  }
  auto session_header = req.Header("Mcp-Session-Id");
  if (!session_header) {
    return RpcErrorResponse(400, kTransportError, "Bad Request: Mcp-Session-Id header is required",
                            answer_id());
  }
  std::string session_id(text::TrimOws(*session_header));
  std::string owner = SessionStore::OwnerKey(principal.client_id, principal.subject);
  // Another principal's session answers exactly like an unknown one: no oracle.
  SessionInfo session_info;
  auto found = sessions_->Find(session_id, owner, &session_info);
  if (found == Sessions::Lookup::kUnavailable) {
    return RpcErrorResponse(503, kTransportError, "Service Unavailable: try again", answer_id());
  }
  if (found != Sessions::Lookup::kOk) {
    return RpcErrorResponse(404, kSessionNotFound, "Session not found", answer_id());
  }

  if (m.kind == jsonrpc::Kind::kNotification) {
    if (m.method == "notifications/initialized") sessions_->MarkInitialized(session_id);
    return http::Response::Empty(202);
  }
  if (m.kind == jsonrpc::Kind::kResponse) return http::Response::Empty(202);

  if (m.method == "ping")
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, json::object()));
  if (m.method == "tools/list") {
    auto list = tools_.List(m.params);
    if (list.error) {
      list.error->id = m.id;
      return http::Response::Json(200, jsonrpc::MakeError(*list.error));
    }
    if (session_info.ui_extension) options_.ui->AnnotateTools(list.result);
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, std::move(list.result)));
  }
  if (session_info.ui_extension) {
    if (auto answer = ResourcesAnswer(m, false)) return std::move(*answer);
  }
  if (m.method == "tools/call") {
    const Stopwatch started;
    CallOutcome out =
        RunToolCall(ToolContext{.principal = principal,
                                .request_id = req.request_id,
                                .session_id = session_id,
                                .session_url_elicitation = session_info.url_elicitation},
                    m.params, owner);
    LogToolCall(req, principal, m.params, out, started.ElapsedMicros());
    switch (out.kind) {
      case CallOutcome::Kind::kResult:
        return ToolCallAnswer(m.id, std::move(out.result), out);
      case CallOutcome::Kind::kRpcError:
        out.rpc_error.id = m.id;
        return http::Response::Json(200, jsonrpc::MakeError(out.rpc_error));
      case CallOutcome::Kind::kInsufficientScope:
        return InsufficientScopeAnswer(m.id, out.required_scope, options_.resource_metadata_url);
      case CallOutcome::Kind::kInputRequired:
      case CallOutcome::Kind::kMissingCapability:
        // Unreachable: a session request has no client capabilities, so the registry turns
        // NeedInput into a tool error.
        return RpcErrorResponse(500, jsonrpc::kInternalError, "Internal error", m.id);
    }
  }
  return RpcErrorResponse(200, jsonrpc::kMethodNotFound, "Method not found: " + m.method, m.id);
}

http::Response McpEndpoint::Initialize(const json& id, const json& params,
                                       const Principal& principal) {
  if (!params.is_object() || !params.contains("protocolVersion") ||
      !params["protocolVersion"].is_string()) {
    return RpcErrorResponse(200, jsonrpc::kInvalidParams,
                            "Invalid params: protocolVersion must be a string", id);
  }
  std::string version = NegotiateProtocolVersion(params["protocolVersion"].get<std::string>());
  // capabilities.elicitation.url declares URL mode (an empty elicitation object is form
  // only): remembered with the session for URLElicitationRequiredError.
  bool url_elicitation = false;
  bool ui = false;
  if (auto caps = params.find("capabilities"); caps != params.end() && caps->is_object()) {
    if (auto e = caps->find("elicitation"); e != caps->end() && e->is_object()) {
      auto u = e->find("url");
      url_elicitation = u != e->end() && u->is_object();
    }
    ui = OffersUi(DeclaresUiExtension(*caps));
  }
  auto session = sessions_->Create(
      SessionStore::OwnerKey(principal.client_id, principal.subject),
      SessionInfo{
          .protocol_version = version, .url_elicitation = url_elicitation, .ui_extension = ui});
  if (!session) {
    return RpcErrorResponse(503, kTransportError, "Service Unavailable: too many sessions", id);
  }
  json result{
      {"protocolVersion", version},
      {"capabilities", ServerCapabilities(ui)},
      {"serverInfo",
       {{"name", options_.server_name},
        {"title", options_.server_title},
        {"version", options_.server_version}}},
  };
  if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
  http::Response r = http::Response::Json(200, jsonrpc::MakeResult(id, std::move(result)));
  r.Set("Mcp-Session-Id", *session);
  return r;
}

}  // namespace crmd::mcp
