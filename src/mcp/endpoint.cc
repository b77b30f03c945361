#include "src/mcp/endpoint.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "src/core/log.h"
#include "src/mcp/jsonrpc.h"

namespace crmd::mcp {

using nlohmann::json;

namespace {

// Transport-level refusals (session, headers) use the implementation-defined range.
constexpr int kTransportError = -32000;
constexpr int kSessionNotFound = -32001;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string LowerMediaType(std::string_view v) {
  std::string out(Trim(v.substr(0, v.find(';'))));
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A client MUST list application/json and text/event-stream; crmd only ever answers
// application/json, so it refuses (406) only an Accept that rules JSON out. A missing
// Accept means anything (RFC 9110 §12.5.1).
bool AcceptsJson(const http::Request& req) {
  auto accept = req.Header("Accept");
  if (!accept) return true;
  std::string_view rest = *accept;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string type = LowerMediaType(rest.substr(0, comma));
    if (type == "application/json" || type == "application/*" || type == "*/*") return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

bool IsJsonContent(const http::Request& req) {
  auto ct = req.Header("Content-Type");
  return ct && LowerMediaType(*ct) == "application/json";
}

http::Response RpcErrorResponse(int status, int code, std::string message, json id = nullptr,
                                json data = nullptr) {
  return http::Response::Json(
      status, jsonrpc::MakeError({code, std::move(message), std::move(id), std::move(data)}));
}

json SupportedVersions() {
  json out = json::array();
  for (auto v : kSupportedProtocolVersions) out.push_back(std::string(v));
  return out;
}

// One line per tools/call, for audit and operations. Arguments and results are never
// logged: they carry personal data.
void LogToolCall(const http::Request& req, const Principal& principal, const json& params,
                 const CallOutcome& out, int64_t duration_us) {
  if (!spdlog::should_log(spdlog::level::info)) return;
  std::string tool = params.is_object() && params.contains("name") && params["name"].is_string()
                         ? params["name"].get<std::string>()
                         : "";
  const char* outcome = "ok";
  std::string code;
  switch (out.kind) {
    case CallOutcome::Kind::kRpcError: outcome = "protocol_error"; break;
    case CallOutcome::Kind::kInsufficientScope: outcome = "insufficient_scope"; break;
    case CallOutcome::Kind::kResult:
      if (out.result.value("isError", false)) {
        outcome = "tool_error";
        // The error body travels in the text block (see ToolResult).
        const auto& content = out.result["content"];
        if (content.is_array() && !content.empty() && content[0].contains("text")) {
          auto body = nlohmann::json::parse(content[0]["text"].get<std::string>(), nullptr, false);
          if (body.is_object() && body.contains("error") && body["error"].is_object())
            code = body["error"].value("code", "");
        }
      }
      break;
  }
  spdlog::info(
      R"("event":"tool_call","request_id":"{}","tool":"{}","client_id":"{}","subject":"{}","outcome":"{}","code":"{}","duration_us":{})",
      req.request_id, JsonEscape(tool), JsonEscape(principal.client_id), JsonEscape(principal.subject), outcome,
      code, duration_us);
}

}  // namespace

bool IsSupportedProtocolVersion(std::string_view version) {
  return std::find(kSupportedProtocolVersions.begin(), kSupportedProtocolVersions.end(), version) !=
         kSupportedProtocolVersions.end();
}

std::string NegotiateProtocolVersion(std::string_view requested) {
  if (IsSupportedProtocolVersion(requested)) return std::string(requested);
  return std::string(kSupportedProtocolVersions.front());
}

std::string InsufficientScopeChallenge(const std::string& scope, const std::string& resource_metadata_url) {
  return "Bearer error=\"insufficient_scope\", scope=\"" + scope + "\", resource_metadata=\"" +
         resource_metadata_url + "\"";
}

McpEndpoint::McpEndpoint(McpEndpointOptions options, const ToolRegistry& tools, const Clock& clock,
                         Random& random)
    : options_(std::move(options)),
      tools_(tools),
      own_sessions_(options_.shared_sessions
                        ? nullptr
                        : std::make_unique<SessionStore>(options_.sessions, clock, random)),
      sessions_(options_.shared_sessions ? options_.shared_sessions : own_sessions_.get()),
      limiter_(options_.rate_limit, clock) {}

http::Response McpEndpoint::Handle(const http::Request& req, const Principal& principal) {
  try {
    if (req.method == "POST") return Post(req, principal);
    if (req.method == "DELETE") return Delete(req, principal);
  } catch (const std::exception& e) {
    spdlog::error(R"("event":"mcp_exception","request_id":"{}","what":"{}")", req.request_id,
                  JsonEscape(e.what()));
    return RpcErrorResponse(500, jsonrpc::kInternalError, "Internal error");
  }
  // GET would open a server-to-client SSE stream; crmd sends no server-initiated
  // messages, so it answers 405 as basic/transports allows.
  http::Response r = RpcErrorResponse(405, kTransportError, "Method not allowed");
  r.Set("Allow", "POST, DELETE");
  return r;
}

http::Response McpEndpoint::Post(const http::Request& req, const Principal& principal) {
  if (!AcceptsJson(req)) {
    return RpcErrorResponse(406, kTransportError, "Not Acceptable: the client must accept application/json");
  }
  if (!IsJsonContent(req)) {
    return RpcErrorResponse(415, kTransportError, "Unsupported Media Type: use application/json");
  }
  auto parsed = jsonrpc::Parse(req.body);
  if (parsed.error) return http::Response::Json(400, jsonrpc::MakeError(*parsed.error));
  jsonrpc::Message& m = *parsed.message;

  // initialize starts a session; it carries no session id and its version is negotiated
  // in the body, so the headers are not checked.
  if (m.kind == jsonrpc::Kind::kRequest && m.method == "initialize") {
    return Initialize(m.id, m.params, principal);
  }

  auto version = req.Header("MCP-Protocol-Version");
  if (version && !IsSupportedProtocolVersion(Trim(*version))) {
    return RpcErrorResponse(400, kTransportError, "Bad Request: unsupported MCP-Protocol-Version",
                            nullptr,
                            json{{"supported", SupportedVersions()}, {"requested", std::string(*version)}});
  }
  auto session_header = req.Header("Mcp-Session-Id");
  if (!session_header) {
    return RpcErrorResponse(400, kTransportError, "Bad Request: Mcp-Session-Id header is required");
  }
  std::string session_id(Trim(*session_header));
  std::string owner = SessionStore::OwnerKey(principal.client_id, principal.subject);
  // Another principal's session answers exactly like an unknown one: no oracle.
  auto found = sessions_->Find(session_id, owner);
  if (found == Sessions::Lookup::kUnavailable) {
    return RpcErrorResponse(503, kTransportError, "Service Unavailable: try again");
  }
  if (found != Sessions::Lookup::kOk) {
    return RpcErrorResponse(404, kSessionNotFound, "Session not found");
  }

  if (m.kind == jsonrpc::Kind::kNotification) {
    if (m.method == "notifications/initialized") sessions_->MarkInitialized(session_id);
    return http::Response::Empty(202);
  }
  if (m.kind == jsonrpc::Kind::kResponse) return http::Response::Empty(202);

  if (m.method == "ping") return http::Response::Json(200, jsonrpc::MakeResult(m.id, json::object()));
  if (m.method == "tools/list") {
    auto list = tools_.List(m.params);
    if (list.error) {
      list.error->id = m.id;
      return http::Response::Json(200, jsonrpc::MakeError(*list.error));
    }
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, std::move(list.result)));
  }
  if (m.method == "tools/call") {
    auto started = std::chrono::steady_clock::now();
    CallOutcome out;
    if (!limiter_.Allow(owner)) {
      out.result = ToolResult(
          ToolErrorBody(ErrcCode(Errc::kRateLimited), "too many tool calls: retry in a few seconds"), true);
    } else {
      out = tools_.Call(ToolContext{principal, req.request_id, session_id}, m.params);
    }
    LogToolCall(req, principal, m.params, out,
                std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started)
                    .count());
    switch (out.kind) {
      case CallOutcome::Kind::kResult:
        return http::Response::Json(200, jsonrpc::MakeResult(m.id, std::move(out.result)));
      case CallOutcome::Kind::kRpcError:
        out.rpc_error.id = m.id;
        return http::Response::Json(200, jsonrpc::MakeError(out.rpc_error));
      case CallOutcome::Kind::kInsufficientScope: {
        http::Response r = RpcErrorResponse(403, kInsufficientScopeCode,
                                            "Insufficient scope: requires " + out.required_scope, m.id,
                                            json{{"required_scope", out.required_scope}});
        r.Set("WWW-Authenticate",
              InsufficientScopeChallenge(out.required_scope, options_.resource_metadata_url));
        return r;
      }
    }
  }
  return RpcErrorResponse(200, jsonrpc::kMethodNotFound, "Method not found: " + m.method, m.id);
}

http::Response McpEndpoint::Initialize(const json& id, const json& params, const Principal& principal) {
  if (!params.is_object() || !params.contains("protocolVersion") ||
      !params["protocolVersion"].is_string()) {
    return RpcErrorResponse(200, jsonrpc::kInvalidParams,
                            "Invalid params: protocolVersion must be a string", id);
  }
  std::string version = NegotiateProtocolVersion(params["protocolVersion"].get<std::string>());
  auto session = sessions_->Create(SessionStore::OwnerKey(principal.client_id, principal.subject), version);
  if (!session) {
    return RpcErrorResponse(503, kTransportError, "Service Unavailable: too many sessions", id);
  }
  json result{
      {"protocolVersion", version},
      {"capabilities", {{"tools", {{"listChanged", false}}}}},
      {"serverInfo",
       {{"name", options_.server_name}, {"title", options_.server_title}, {"version", options_.server_version}}},
  };
  if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
  http::Response r = http::Response::Json(200, jsonrpc::MakeResult(id, std::move(result)));
  r.Set("Mcp-Session-Id", *session);
  return r;
}

http::Response McpEndpoint::Delete(const http::Request& req, const Principal& principal) {
  auto session_header = req.Header("Mcp-Session-Id");
  if (!session_header) {
    return RpcErrorResponse(400, kTransportError, "Bad Request: Mcp-Session-Id header is required");
  }
  std::string owner = SessionStore::OwnerKey(principal.client_id, principal.subject);
  if (!sessions_->End(std::string(Trim(*session_header)), owner)) {
    return RpcErrorResponse(404, kSessionNotFound, "Session not found");
  }
  return http::Response::Empty(204);
}

}  // namespace crmd::mcp
