// McpEndpoint's entry: the transport checks every POST passes, then the protocol
// generation the request belongs to: the 2025-era session path (session_requests.cc) or
// the stateless 2026-07-28 path (modern.cc). Both call tools through answers.cc.
#include "src/mcp/endpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/log.h"
#include "src/core/text.h"
#include "src/mcp/answers.h"
#include "src/mcp/jsonrpc.h"
#include "src/mcp/modern.h"

namespace crmd::mcp {

using nlohmann::json;

namespace {

// Whether the media type of a field value (parameters dropped, OWS trimmed) is `type`, in
// any case, without a copy: twice per request.
bool MediaTypeIs(std::string_view v, std::string_view type) {
  return http::IEquals(text::TrimOws(v.substr(0, v.find(';'))), type);
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
    std::string_view range = rest.substr(0, comma);
    if (MediaTypeIs(range, "application/json") || MediaTypeIs(range, "application/*") ||
        MediaTypeIs(range, "*/*"))
      return true;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

bool IsJsonContent(const http::Request& req) {
  auto ct = req.Header("Content-Type");
  return ct && MediaTypeIs(*ct, "application/json");
}

}  // namespace

bool IsSupportedProtocolVersion(std::string_view version) {
  return std::find(kSupportedProtocolVersions.begin(), kSupportedProtocolVersions.end(), version) !=
         kSupportedProtocolVersions.end();
}

bool IsModernProtocolVersion(std::string_view version) {
  return std::find(kModernProtocolVersions.begin(), kModernProtocolVersions.end(), version) !=
         kModernProtocolVersions.end();
}

json AllProtocolVersions() {
  json out = json::array();
  for (auto v : kModernProtocolVersions) out.push_back(std::string(v));
  for (auto v : kSupportedProtocolVersions) out.push_back(std::string(v));
  return out;
}

std::string NegotiateProtocolVersion(std::string_view requested) {
  if (IsSupportedProtocolVersion(requested)) return std::string(requested);
  return std::string(kSupportedProtocolVersions.front());
}

std::string InsufficientScopeChallenge(const std::string& scope,
                                       const std::string& resource_metadata_url) {
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
      limiter_(options_.rate_limit, clock),
      request_states_(std::make_unique<RequestStateCodec>(
          options_.request_state_keys.empty()
              ? std::vector<RequestStateKey>{{.id = "p", .secret = random.Bytes(32)}}
              : options_.request_state_keys,
          options_.request_state, clock)) {}

void McpEndpoint::CountMethod(const jsonrpc::Message* m) const {
  if (!options_.metrics) return;
  // A fixed set of label values: anything else a client sends is "other".
  static constexpr std::string_view kKnown[] = {"initialize",
                                                "ping",
                                                "tools/list",
                                                "tools/call",
                                                "notifications/initialized",
                                                "notifications/cancelled",
                                                "server/discover",
                                                "resources/list",
                                                "resources/read",
                                                "prompts/list"};
  std::string_view method = "invalid";
  if (m && m->kind == jsonrpc::Kind::kResponse) {
    method = "response";
  } else if (m) {
    method = "other";
    for (auto k : kKnown)
      if (m->method == k) method = k;
  }
  options_.metrics
      ->Counter("crmd_mcp_requests_total", "MCP JSON-RPC messages received, by method.",
                {{"method", method}})
      .Inc();
}

void McpEndpoint::AdoptMetaTrace(const json& params) const {
  // 2026-07-28 basic/index "OpenTelemetry trace context": params._meta.traceparent (and
  // tracestate) follow W3C Trace Context. A valid one names the caller's span more
  // precisely than an HTTP header a proxy may have set, so it replaces the trace of the
  // request's log scope; an invalid one is ignored.
  if (!params.is_object()) return;
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return;
  auto tp = meta->find("traceparent");
  if (tp == meta->end() || !tp->is_string()) return;
  const std::string& value = tp->get_ref<const std::string&>();
  if (!trace::ParseTraceparent(value)) return;
  LogContext* ctx = CurrentLogContext();
  if (!ctx) return;
  std::optional<std::string_view> state;
  if (auto ts = meta->find("tracestate"); ts != meta->end() && ts->is_string())
    state = ts->get_ref<const std::string&>();
  ctx->trace = trace::Continue(value, state);
}

http::Response McpEndpoint::Handle(const http::Request& req, const Principal& principal) {
  try {
    if (req.method == "POST") return Post(req, principal);
    if (req.method == "DELETE") return Delete(req, principal);
  } catch (const std::exception& e) {
    spdlog::error(R"("event":"mcp_exception","request_id":"{}","what":"{}")", req.request_id,
                  JsonEscape(e.what()));
    return RpcErrorResponse(500, jsonrpc::kInternalError, "Internal error",
                            jsonrpc::RequestIdOf(req.body));
  }
  // GET would open a server-to-client SSE stream; crmd sends no server-initiated
  // messages, so it answers 405 as basic/transports allows.
  http::Response r = RpcErrorResponse(405, kTransportError, "Method not allowed");
  r.Set("Allow", "POST, DELETE");
  return r;
}

http::Response McpEndpoint::Post(const http::Request& req, const Principal& principal) {
  if (!AcceptsJson(req)) {
    return RpcErrorResponse(406, kTransportError,
                            "Not Acceptable: the client must accept application/json",
                            jsonrpc::RequestIdOf(req.body));
  }
  if (!IsJsonContent(req)) {
    return RpcErrorResponse(415, kTransportError, "Unsupported Media Type: use application/json",
                            jsonrpc::RequestIdOf(req.body));
  }
  auto parsed = jsonrpc::Parse(req.body);
  if (parsed.error) {
    CountMethod(nullptr);
    return http::Response::Json(400, jsonrpc::MakeError(*parsed.error));
  }
  jsonrpc::Message& m = *parsed.message;
  CountMethod(&m);
  AdoptMetaTrace(m.params);

  // initialize starts a session; it carries no session id and its version is negotiated
  // in the body, so the headers are not checked. An initialize carrying 2026-07-28 request
  // metadata is a stateless request for a method that revision removed (404, below).
  auto meta_version = MetaProtocolVersion(m.params);
  if (m.kind == jsonrpc::Kind::kRequest && m.method == "initialize" &&
      !(meta_version && !IsSupportedProtocolVersion(*meta_version))) {
    return Initialize(m.id, m.params, principal);
  }
  // The era is chosen per request: _meta naming a version that is not session-based, or a
  // header naming a stateless version, makes a 2026-07-28 request. A header naming
  // 2026-07-28 over a body whose _meta names a session-based version is one too: the
  // stateless path answers that the two disagree (HeaderMismatch, -32020), as the header's
  // revision requires (basic/transports/streamable-http "Protocol Version Header"),
  // rather than the session path refusing a version it does not speak.
  if (meta_version && !IsSupportedProtocolVersion(*meta_version))
    return PostModern(req, m, principal);
  if (auto header = req.Header("MCP-Protocol-Version");
      header && IsModernProtocolVersion(text::TrimOws(*header))) {
    return PostModern(req, m, principal);
  }

  return PostInSession(req, m, principal);
}

http::Response McpEndpoint::Delete(const http::Request& req, const Principal& principal) {
  auto session_header = req.Header("Mcp-Session-Id");
  if (!session_header) {
    return RpcErrorResponse(400, kTransportError, "Bad Request: Mcp-Session-Id header is required");
  }
  std::string owner = SessionStore::OwnerKey(principal.client_id, principal.subject);
  if (!sessions_->End(std::string(text::TrimOws(*session_header)), owner)) {
    return RpcErrorResponse(404, kSessionNotFound, "Session not found");
  }
  return http::Response::Empty(204);
}

}  // namespace crmd::mcp
