#include "src/mcp/modern.h"

#include <algorithm>
#include <array>

#include "src/core/crypto.h"

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

}  // namespace crmd::mcp
