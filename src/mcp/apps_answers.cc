// MCP Apps on McpEndpoint, for both protocol generations: the server's capabilities with
// the extension declared to a client that declared it, and the views as resources.
#include <nlohmann/json.hpp>

#include "src/mcp/answers.h"
#include "src/mcp/endpoint.h"
#include "src/mcp/modern.h"

namespace crmd::mcp {

using nlohmann::json;

namespace {

// 2025-era resources/read of an unknown uri (server/resources "Error Handling"); 2026-07-28
// answers -32602, and asks clients to accept this one too.
constexpr int kResourceNotFound = -32002;

}  // namespace

json McpEndpoint::ServerCapabilities(bool ui) const {
  json caps{{"tools", {{"listChanged", false}}}};
  if (!ui) return caps;
  caps["resources"] = {{"listChanged", false}};
  caps["extensions"] = {{std::string(kUiExtension), UiExtensionCapability()}};
  return caps;
}

std::optional<http::Response> McpEndpoint::ResourcesAnswer(const jsonrpc::Message& m,
                                                           bool modern) const {
  if (m.method != "resources/list" && m.method != "resources/read") return std::nullopt;
  auto answer = [&](json result) {
    if (modern) {
      // The views change only with a deployment and hold no one's data.
      result["ttlMs"] = options_.list_ttl_ms;
      result["cacheScope"] = "public";
      result = Complete(std::move(result));
    }
    return http::Response::Json(200, jsonrpc::MakeResult(m.id, std::move(result)));
  };
  if (m.method == "resources/list") return answer(options_.ui->List());
  auto uri = m.params.is_object() ? m.params.find("uri") : m.params.end();
  if (!m.params.is_object() || uri == m.params.end() || !uri->is_string()) {
    return RpcErrorResponse(200, jsonrpc::kInvalidParams, "Invalid params: uri must be a string",
                            m.id);
  }
  json read = options_.ui->Read(uri->get_ref<const std::string&>());
  if (read.is_null()) {
    return RpcErrorResponse(200, modern ? jsonrpc::kInvalidParams : kResourceNotFound,
                            "Resource not found", m.id, json{{"uri", *uri}});
  }
  return answer(std::move(read));
}

}  // namespace crmd::mcp
