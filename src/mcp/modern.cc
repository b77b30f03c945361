#include "src/mcp/modern.h"

#include <algorithm>
#include <array>

#include "src/core/clock.h"
#include "src/core/crypto.h"
#include "src/core/log.h"
#include "src/mcp/answers.h"
#include "src/mcp/endpoint.h"

namespace crmd::mcp {

using nlohmann::json;

namespace {

jsonrpc::RpcError InvalidParams(std::string message) {
  return {jsonrpc::kInvalidParams, "Invalid params: " + std::move(message), nullptr, nullptr};
}

jsonrpc::RpcError Mismatch(std::string message) {
  return {kHeaderMismatch, "Header mismatch: " + std::move(message), nullptr, nullptr};
}

// RFC 9110 field value characters as MCP restricts them: visible ASCII, space, tab.
bool PlainHeaderSafe(std::string_view v) {
  return std::all_of(v.begin(), v.end(),
                     [](unsigned char c) { return c == '\t' || (c >= 0x20 && c <= 0x7e); });
}

// A value a client must send plain: no leading/trailing whitespace, only safe characters,
// and not itself looking like the base64 sentinel.
bool SendablePlain(std::string_view v) {
  if (!PlainHeaderSafe(v)) return false;
  if (!v.empty() && (v.front() == ' ' || v.front() == '\t' || v.back() == ' ' || v.back() == '\t'))
    return false;
  return true;
}

constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

}  // namespace

std::optional<std::string> MetaProtocolVersion(const json& params) {
  if (!params.is_object()) return std::nullopt;
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return std::nullopt;
  auto v = meta->find(kMetaProtocolVersion);
  if (v == meta->end() || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

MetaOutcome ReadRequestMeta(const json& params) {
  if (!params.is_object() || !params.contains("_meta") || !params["_meta"].is_object()) {
    return {std::nullopt, InvalidParams("params._meta is required")};
  }
  const json& meta = params["_meta"];
  RequestMeta out;
  auto version = meta.find(kMetaProtocolVersion);
  if (version == meta.end() || !version->is_string()) {
    return {std::nullopt,
            InvalidParams("_meta.io.modelcontextprotocol/protocolVersion must be a string")};
  }
  out.protocol_version = version->get<std::string>();
  auto caps = meta.find(kMetaClientCapabilities);
  if (caps == meta.end() || !caps->is_object()) {
    return {std::nullopt,
            InvalidParams("_meta.io.modelcontextprotocol/clientCapabilities must be an object")};
  }
  out.client_capabilities = *caps;
  if (auto info = meta.find(kMetaClientInfo); info != meta.end()) {
    if (!info->is_object() || !info->contains("name") || !(*info)["name"].is_string() ||
        !info->contains("version") || !(*info)["version"].is_string()) {
      return {
          std::nullopt,
          InvalidParams("_meta.io.modelcontextprotocol/clientInfo must have a name and a version")};
    }
    out.client_info = *info;
  }
  if (auto level = meta.find(kMetaLogLevel); level != meta.end()) {
    if (!level->is_string() || std::find(kLogLevels.begin(), kLogLevels.end(),
                                         level->get<std::string>()) == kLogLevels.end()) {
      return {std::nullopt,
              InvalidParams("_meta.io.modelcontextprotocol/logLevel is not a logging level")};
    }
    out.log_level = level->get<std::string>();
  }
  return {std::move(out), std::nullopt};
}

std::optional<std::string> DecodeMirroredHeader(std::string_view value) {
  constexpr std::string_view kPrefix = "=?base64?";
  constexpr std::string_view kSuffix = "?=";
  if (value.size() >= kPrefix.size() + kSuffix.size() &&
      value.substr(0, kPrefix.size()) == kPrefix &&
      value.substr(value.size() - kSuffix.size()) == kSuffix) {
    auto decoded = crypto::Base64Decode(
        value.substr(kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size()));
    if (!decoded) return std::nullopt;
    return std::move(*decoded);
  }
  if (!PlainHeaderSafe(value)) return std::nullopt;
  return std::string(value);
}

std::optional<jsonrpc::RpcError> CheckRequestHeaders(const http::Request& req,
                                                     const jsonrpc::Message& m,
                                                     std::string_view meta_version) {
  auto version = req.Header("MCP-Protocol-Version");
  if (!version) return Mismatch("the MCP-Protocol-Version header is required");
  if (*version != meta_version) {
    return Mismatch("MCP-Protocol-Version header '" + std::string(*version) +
                    "' does not match _meta.io.modelcontextprotocol/protocolVersion '" +
                    std::string(meta_version) + "'");
  }
  auto method = req.Header("Mcp-Method");
  if (!method) return Mismatch("the Mcp-Method header is required");
  if (!PlainHeaderSafe(*method)) return Mismatch("the Mcp-Method header has invalid characters");
  if (*method != m.method) {
    return Mismatch("Mcp-Method header '" + std::string(*method) +
                    "' does not match body method '" + m.method + "'");
  }
  const char* source = nullptr;
  if (m.method == "tools/call" || m.method == "prompts/get")
    source = "name";
  else if (m.method == "resources/read")
    source = "uri";
  if (!source) return std::nullopt;

  auto name = req.Header("Mcp-Name");
  if (!name) return Mismatch("the Mcp-Name header is required for " + m.method);
  auto decoded = DecodeMirroredHeader(*name);
  if (!decoded) return Mismatch("the Mcp-Name header has invalid characters or bad base64");
  // A missing or non-string body value is the body's problem (-32602 later), unless the
  // header claims a name: then the two disagree.
  std::string body_value;
  if (m.params.is_object() && m.params.contains(source) && m.params[source].is_string()) {
    body_value = m.params[source].get<std::string>();
  }
  if (*decoded != body_value) {
    std::string shown = SendablePlain(*decoded) ? *decoded : std::string(*name);
    return Mismatch("Mcp-Name header value '" + shown + "' does not match body value");
  }
  return std::nullopt;
}

// --- The 2026-07-28 path of McpEndpoint ---

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
  // MCP Apps per request: only a request whose client declares the extension sees it.
  const bool ui = OffersUi(DeclaresUiExtension(meta.meta->client_capabilities));

  if (m.method == "server/discover") {
    json result{{"supportedVersions", AllProtocolVersions()},
                {"capabilities", ServerCapabilities(ui)},
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
    if (ui) options_.ui->AnnotateTools(list.result);
    list.result["ttlMs"] = options_.list_ttl_ms;
    list.result["cacheScope"] = "public";
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, Complete(std::move(list.result))));
  }
  if (m.method == "tools/call")
    return CallToolModern(req, m, principal, meta.meta->client_capabilities);
  if (ui) {
    if (auto answer = ResourcesAnswer(m, true)) return std::move(*answer);
  }
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

  CallOutcome out = RunToolCall(ToolContext{.principal = principal,
                                            .request_id = req.request_id,
                                            .session_id = "",
                                            .client_capabilities = &client_capabilities,
                                            .input = input},
                                params, owner);
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
  return InsufficientScopeAnswer(m.id, out.required_scope, options_.resource_metadata_url);
}

}  // namespace crmd::mcp
