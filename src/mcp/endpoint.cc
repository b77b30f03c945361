#include "src/mcp/endpoint.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/json_write.h"
#include "src/core/log.h"
#include "src/core/text.h"
#include "src/mcp/jsonrpc.h"
#include "src/mcp/modern.h"

namespace crmd::mcp {

using nlohmann::json;

namespace {

// Transport-level refusals (session, headers) use the implementation-defined range.
constexpr int kTransportError = -32000;
constexpr int kSessionNotFound = -32001;

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

}  // namespace

// One line per tools/call, for audit and operations, and its metrics. Arguments and
// results are never logged: they carry personal data.
void McpEndpoint::LogToolCall(const http::Request& req, const Principal& principal,
                              const json& params, const CallOutcome& out,
                              int64_t duration_us) const {
  metrics::Registry* const metrics = options_.metrics;
  const bool log = spdlog::should_log(spdlog::level::info);
  if (!log && !metrics) return;
  static constexpr const char* kOutcomes[] = {"ok",
                                              "tool_error",
                                              "protocol_error",
                                              "insufficient_scope",
                                              "input_required",
                                              "missing_client_capability"};
  static_assert(std::size(kOutcomes) == std::tuple_size_v<decltype(ToolSeries::calls)>);
  auto name = params.is_object() ? params.find("name") : params.end();
  const std::string_view tool = params.is_object() && name != params.end() && name->is_string()
                                    ? std::string_view(name->get_ref<const std::string&>())
                                    : std::string_view();
  size_t outcome = 0;
  std::string code;
  switch (out.kind) {
    case CallOutcome::Kind::kRpcError:
      outcome = 2;
      break;
    case CallOutcome::Kind::kInsufficientScope:
      outcome = 3;
      break;
    case CallOutcome::Kind::kInputRequired:
      outcome = 4;
      break;
    case CallOutcome::Kind::kMissingCapability:
      outcome = 5;
      break;
    case CallOutcome::Kind::kResult:
      if (out.result.value("isError", false)) {
        outcome = 1;
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
  if (metrics) {
    std::call_once(tool_series_once_, [&] {
      for (const auto& n : tools_.Names()) tool_series_.emplace(n, std::make_unique<ToolSeries>());
      tool_series_.emplace("unknown", std::make_unique<ToolSeries>());
    });
    // Only registered names become label values: a client's made-up name is "unknown".
    auto it = tool_series_.find(tool);
    if (it == tool_series_.end()) it = tool_series_.find(std::string_view("unknown"));
    const std::string_view label = it->first;
    ToolSeries& series = *it->second;
    metrics::Kept(series.calls[outcome], [&]() -> metrics::Counter& {
      return metrics->Counter("crmd_mcp_tool_calls_total", "MCP tools/call by tool and outcome.",
                              {{"tool", label}, {"outcome", kOutcomes[outcome]}});
    }).Inc();
    metrics::Kept(series.duration, [&]() -> metrics::Histogram& {
      return metrics->Histogram("crmd_mcp_tool_call_duration_seconds",
                                "MCP tools/call latency by tool.", {{"tool", label}});
    }).ObserveMicros(duration_us);
    if (!code.empty())
      metrics
          ->Counter("crmd_errors_total", "Errors answered, by face and stable error code.",
                    {{"face", "mcp"}, {"code", code}})
          .Inc();
  }
  if (!log) return;
  spdlog::info(
      R"("event":"tool_call","request_id":"{}","tool":"{}","client_id":"{}","subject":"{}","outcome":"{}","code":"{}","duration_us":{})",
      req.request_id, JsonEscape(std::string(tool)), JsonEscape(principal.client_id),
      JsonEscape(principal.subject), kOutcomes[outcome], code, duration_us);
}

namespace {

// The answer to a tools/call whose outcome is a result. When the result's text block is
// its structured content serialised (CallOutcome::text_is_structured), the writer copies
// that text where the structured content goes instead of serialising the tree a second
// time (the same bytes: src/core/json_write.h). When the structured content exists only
// as text (CallOutcome::structured_in_text), the tree holds the other members, and the
// writer writes the text block and the structured content from the text.
http::Response ToolCallAnswer(const json& id, json result, const CallOutcome& out) {
  const bool in_text = out.structured_in_text;
  if (in_text && result.is_object()) {
    // Written straight out, in the order nlohmann writes the same document (sorted keys:
    // "id", "jsonrpc", "result"; inside it, content and structuredContent at their
    // places), so the bytes are those of the tree with both members in it.
    const std::string& text = out.structured_text;
    std::string body;
    body.reserve(text.size() * 2 + 160);
    body.append("{\"id\":");
    AppendJson(body, id);
    body.append(",\"jsonrpc\":\"2.0\",\"result\":{");
    bool first = true;
    auto member = [&](std::string_view key) {
      if (!first) body.push_back(',');
      first = false;
      AppendJsonString(body, key);
      body.push_back(':');
    };
    auto content = [&] {
      member("content");
      body.append("[{\"text\":");
      AppendJsonString(body, text);
      body.append(",\"type\":\"text\"}]");
    };
    auto structured = [&] {
      member("structuredContent");
      body.append(text);
    };
    int written = 0;  // 0: neither, 1: content, 2: both
    for (const auto& [key, value] : result.items()) {
      // The text is both; the registry puts neither in the tree.
      if (key == "content" || key == "structuredContent") continue;
      if (written == 0 && key > std::string_view("content")) {
        content();
        written = 1;
      }
      if (written == 1 && key > std::string_view("structuredContent")) {
        structured();
        written = 2;
      }
      member(key);
      AppendJson(body, value);
    }
    if (written == 0) content();
    if (written < 2) structured();
    body.append("}}");
    return http::Response::Text(200, std::move(body), "application/json");
  }
  json doc = jsonrpc::MakeResult(id, std::move(result));
  if (out.text_is_structured) {
    const json& r = doc["result"];
    auto structured = r.find("structuredContent");
    auto content = r.find("content");
    if (structured != r.end() && content != r.end() && content->is_array() && !content->empty() &&
        (*content)[0].is_object()) {
      auto text = (*content)[0].find("text");
      if (text != (*content)[0].end() && text->is_string()) {
        return http::Response::Text(
            200,
            DumpJson(
                doc, json::error_handler_t::replace,
                JsonSerialized{.node = &*structured, .text = text->get_ref<const std::string&>()}),
            "application/json");
      }
    }
  }
  return http::Response::Json(200, doc);
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
  // What a transport error below answers with (JSON-RPC 2.0 §5: the request's id). A
  // notification has none, and a client's response carries the id of our request, not one
  // to answer. Called on the error paths only: a served request copies nothing.
  auto answer_id = [&m] { return m.kind == jsonrpc::Kind::kRequest ? m.id : json(); };
  AdoptMetaTrace(m.params);

  // initialize starts a session; it carries no session id and its version is negotiated
  // in the body, so the headers are not checked. An initialize carrying 2026-07-28 request
  // metadata is a stateless request for a method that revision removed (404, below).
  auto meta_version = MetaProtocolVersion(m.params);
  if (m.kind == jsonrpc::Kind::kRequest && m.method == "initialize" &&
      !(meta_version && !IsSupportedProtocolVersion(*meta_version))) {
    return Initialize(m.id, m.params, principal);
  }
  // The era is chosen per request: _meta naming a version that is not session-based (or,
  // without one, a header naming a stateless version) is a 2026-07-28 request.
  if (meta_version) {
    if (!IsSupportedProtocolVersion(*meta_version)) return PostModern(req, m, principal);
  } else if (auto header = req.Header("MCP-Protocol-Version");
             header && IsModernProtocolVersion(text::TrimOws(*header))) {
    return PostModern(req, m, principal);
  }

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
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, std::move(list.result)));
  }
  if (m.method == "tools/call") {
    const Stopwatch started;
    CallOutcome out;
    if (!limiter_.Allow(owner)) {
      out.result = ToolResult(ToolErrorBody(ErrcCode(Errc::kRateLimited),
                                            "too many tool calls: retry in a few seconds"),
                              true);
    } else {
      out = tools_.Call(ToolContext{.principal = principal,
                                    .request_id = req.request_id,
                                    .session_id = session_id,
                                    .session_url_elicitation = session_info.url_elicitation},
                        m.params);
    }
    LogToolCall(req, principal, m.params, out, started.ElapsedMicros());
    switch (out.kind) {
      case CallOutcome::Kind::kResult:
        return ToolCallAnswer(m.id, std::move(out.result), out);
      case CallOutcome::Kind::kRpcError:
        out.rpc_error.id = m.id;
        return http::Response::Json(200, jsonrpc::MakeError(out.rpc_error));
      case CallOutcome::Kind::kInsufficientScope: {
        http::Response r = RpcErrorResponse(403, kInsufficientScopeCode,
                                            "Insufficient scope: requires " + out.required_scope,
                                            m.id, json{{"required_scope", out.required_scope}});
        r.Set("WWW-Authenticate",
              InsufficientScopeChallenge(out.required_scope, options_.resource_metadata_url));
        return r;
      }
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
  if (auto caps = params.find("capabilities"); caps != params.end() && caps->is_object()) {
    if (auto e = caps->find("elicitation"); e != caps->end() && e->is_object()) {
      auto u = e->find("url");
      url_elicitation = u != e->end() && u->is_object();
    }
  }
  auto session = sessions_->Create(
      SessionStore::OwnerKey(principal.client_id, principal.subject),
      SessionInfo{.protocol_version = version, .url_elicitation = url_elicitation});
  if (!session) {
    return RpcErrorResponse(503, kTransportError, "Service Unavailable: too many sessions", id);
  }
  json result{
      {"protocolVersion", version},
      {"capabilities", {{"tools", {{"listChanged", false}}}}},
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

// --- 2026-07-28 ---

json McpEndpoint::ServerInfo() const {
  return json{{"name", options_.server_name},
              {"title", options_.server_title},
              {"version", options_.server_version}};
}

json McpEndpoint::Complete(json result) const {
  result["resultType"] = "complete";
  result["_meta"][kMetaServerInfo] = ServerInfo();
  return result;
}

// Order: a version header that differs from the body (-32020: the two must match whatever
// they name), the version (-32022), the other mirrored headers (-32020), the other
// required _meta fields (-32602); each is HTTP 400 (basic/transports/streamable-http "Protocol
// Version Header", "Server Validation"; basic/index "Per-request protocol fields").
http::Response McpEndpoint::PostModern(const http::Request& req, const jsonrpc::Message& m,
                                       const Principal& principal) {
  // No client-to-server notifications are defined over HTTP in 2026-07-28; one is accepted
  // and ignored. Clients must not send responses (no server-to-client requests exist).
  if (m.kind == jsonrpc::Kind::kNotification) return http::Response::Empty(202);
  if (m.kind == jsonrpc::Kind::kResponse) {
    return RpcErrorResponse(400, jsonrpc::kInvalidRequest,
                            "Invalid Request: clients do not send responses in 2026-07-28");
  }
  auto version = MetaProtocolVersion(m.params);
  if (!version) {
    const bool no_meta = !m.params.is_object() || !m.params.contains("_meta");
    return RpcErrorResponse(
        400, jsonrpc::kInvalidParams,
        no_meta ? "Invalid params: params._meta is required. The MCP-Protocol-Version header "
                  "asks for a stateless revision, whose every request carries "
                  "_meta.io.modelcontextprotocol/protocolVersion and "
                  "_meta.io.modelcontextprotocol/clientCapabilities; for an earlier revision, "
                  "send initialize first"
                : "Invalid params: _meta.io.modelcontextprotocol/protocolVersion must be a string",
        m.id);
  }
  if (auto header = req.Header("MCP-Protocol-Version"); header && *header != *version) {
    return RpcErrorResponse(
        400, kHeaderMismatch,
        "Header mismatch: MCP-Protocol-Version header '" + std::string(*header) +
            "' does not match _meta.io.modelcontextprotocol/protocolVersion '" + *version + "'",
        m.id);
  }
  if (!IsModernProtocolVersion(*version)) {
    return RpcErrorResponse(400, kUnsupportedProtocolVersion, "Unsupported protocol version", m.id,
                            json{{"supported", AllProtocolVersions()}, {"requested", *version}});
  }
  if (auto mismatch = CheckRequestHeaders(req, m, *version)) {
    mismatch->id = m.id;
    return http::Response::Json(400, jsonrpc::MakeError(*mismatch));
  }
  MetaOutcome meta = ReadRequestMeta(m.params);
  if (meta.error) {
    meta.error->id = m.id;
    return http::Response::Json(400, jsonrpc::MakeError(*meta.error));
  }
  // io.modelcontextprotocol/logLevel is read and ignored: crmd declares no logging
  // capability in either era and never sends notifications/message.

  if (m.method == "server/discover") {
    json result{{"supportedVersions", AllProtocolVersions()},
                {"capabilities", {{"tools", {{"listChanged", false}}}}},
                {"ttlMs", options_.list_ttl_ms},
                {"cacheScope", "public"}};
    if (!options_.instructions.empty()) result["instructions"] = options_.instructions;
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, Complete(std::move(result))));
  }
  if (m.method == "tools/list") {
    auto list = tools_.List(m.params);
    if (list.error) {
      list.error->id = m.id;
      return http::Response::Json(200, jsonrpc::MakeError(*list.error));
    }
    // Every caller sees every tool (scopes guard calling, not listing), in name order.
    list.result["ttlMs"] = options_.list_ttl_ms;
    list.result["cacheScope"] = "public";
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, Complete(std::move(list.result))));
  }
  if (m.method == "tools/call")
    return CallToolModern(req, m, principal, meta.meta->client_capabilities);
  // basic/transports/streamable-http: an RPC method the server does not implement is 404
  // with -32601 (ping, logging/setLevel, resources/*, prompts/*, subscriptions/listen).
  return RpcErrorResponse(404, jsonrpc::kMethodNotFound, "Method not found: " + m.method, m.id);
}

http::Response McpEndpoint::CallToolModern(const http::Request& req, const jsonrpc::Message& m,
                                           const Principal& principal,
                                           const json& client_capabilities) {
  const Stopwatch started;
  const json& params = m.params;
  std::string owner = SessionStore::OwnerKey(principal.client_id, principal.subject);
  auto invalid = [&](std::string message) {
    return RpcErrorResponse(200, jsonrpc::kInvalidParams, std::move(message), m.id);
  };
  if (!params.contains("name") || !params["name"].is_string())
    return invalid("Invalid params: name must be a string");
  static const json kNoArguments = json::object();
  const json& arguments = params.contains("arguments") && params["arguments"].is_object()
                              ? params["arguments"]
                              : kNoArguments;
  RequestStateBinding binding{.client_id = principal.client_id,
                              .subject = principal.subject,
                              .method = m.method,
                              .name = params["name"].get<std::string>(),
                              .arguments_digest = RequestStateCodec::ArgumentsDigest(arguments)};

  // A retry (basic/patterns/mrtr): the state must be ours, this principal's, for this tool
  // and these arguments, and fresh; the answers must be an InputResponses object.
  InputRound round;
  const InputRound* input = nullptr;
  if (auto state = params.find("requestState"); state != params.end()) {
    if (!state->is_string()) return invalid("Invalid params: requestState must be a string");
    auto opened = request_states_->Open(state->get<std::string>(), binding);
    if (!opened) return invalid(opened.error().message);
    round.state = std::move(*opened);
    round.responses = json::object();
    if (auto responses = params.find("inputResponses"); responses != params.end()) {
      if (!responses->is_object())
        return invalid("Invalid params: inputResponses must be an object");
      for (const auto& [key, value] : responses->items()) {
        if (!value.is_object())
          return invalid("Invalid params: inputResponses." + key + " must be an object");
      }
      round.responses = *responses;
    }
    input = &round;
  }
  // inputResponses without requestState answer nothing crmd asked (it always sends
  // requestState with its input requests): ignored, as unrecognised information is
  // (basic/patterns/mrtr); the call runs as a first round.

  CallOutcome out;
  if (!limiter_.Allow(owner)) {
    out.result = ToolResult(
        ToolErrorBody(ErrcCode(Errc::kRateLimited), "too many tool calls: retry in a few seconds"),
        true);
  } else {
    out = tools_.Call(ToolContext{.principal = principal,
                                  .request_id = req.request_id,
                                  .session_id = "",
                                  .client_capabilities = &client_capabilities,
                                  .input = input},
                      params);
  }
  if (out.kind == CallOutcome::Kind::kInputRequired) {
    auto sealed = request_states_->Seal(binding, out.input_state);
    if (!sealed) {
      spdlog::error(
          R"("event":"tool_input_invalid","tool":"{}","request_id":"{}","violation":"{}")",
          JsonEscape(binding.name), req.request_id, JsonEscape(sealed.error().detail));
      out.kind = CallOutcome::Kind::kResult;
      out.result = ToolResult(ToolErrorBody(ErrcCode(Errc::kInternal), "internal error"), true);
    } else {
      out.result = json{{"inputRequests", std::move(out.input_requests)},
                        {"requestState", std::move(*sealed)}};
    }
  }
  LogToolCall(req, principal, params, out, started.ElapsedMicros());
  switch (out.kind) {
    case CallOutcome::Kind::kResult:
      return ToolCallAnswer(m.id, Complete(std::move(out.result)), out);
    case CallOutcome::Kind::kInputRequired: {
      // Not cacheable and carries no caching hints (server/utilities/caching).
      json result = std::move(out.result);
      result["resultType"] = "input_required";
      result["_meta"][kMetaServerInfo] = ServerInfo();
      return http::Response::Json(200, jsonrpc::MakeResult(m.id, std::move(result)));
    }
    case CallOutcome::Kind::kMissingCapability:
      return RpcErrorResponse(400, kMissingRequiredClientCapability,
                              "Missing required client capability", m.id,
                              json{{"requiredCapabilities", out.required_capabilities}});
    case CallOutcome::Kind::kRpcError:
      out.rpc_error.id = m.id;
      return http::Response::Json(200, jsonrpc::MakeError(out.rpc_error));
    case CallOutcome::Kind::kInsufficientScope:
      break;
  }
  http::Response r = RpcErrorResponse(403, kInsufficientScopeCode,
                                      "Insufficient scope: requires " + out.required_scope, m.id,
                                      json{{"required_scope", out.required_scope}});
  r.Set("WWW-Authenticate",
        InsufficientScopeChallenge(out.required_scope, options_.resource_metadata_url));
  return r;
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
