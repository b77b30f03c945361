#include "tests/support/mcp_client.h"

#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "src/core/http_types.h"
#include "src/mcp/data_block.h"
#include "src/mcp/json_schema.h"

namespace crmd::testing {

using nlohmann::json;

namespace {

// The MCP schema is JSON Schema 2020-12 with "$defs"; valijson speaks draft-07, where
// the same thing is "definitions". The schema uses only keywords whose meaning is the
// same in both (checked: $ref, type, properties, required, additionalProperties, items,
// anyOf, allOf, enum, const, minimum, maximum, format), so renaming the container and
// the references is a faithful translation.
void RewriteRefs(json& node) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "$ref" && it->is_string()) {
        std::string ref = *it;
        const std::string from = "#/$defs/";
        if (ref.rfind(from, 0) == 0) *it = "#/definitions/" + ref.substr(from.size());
      } else {
        RewriteRefs(*it);
      }
    }
  } else if (node.is_array()) {
    for (auto& x : node) RewriteRefs(x);
  }
}

class McpSchemas {
 public:
  // Test support only: each revision's schema is loaded once per test binary.
  static McpSchemas& Get(const std::string& version) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<McpSchemas>> instances;
    std::lock_guard lock(mu);
    auto& slot = instances[version];
    if (!slot) slot.reset(new McpSchemas(version));
    return *slot;
  }

  std::optional<std::string> Validate(const std::string& type, const json& doc) {
    const mcp::CompiledSchema* schema = nullptr;
    {
      std::lock_guard lock(mu_);
      auto it = compiled_.find(type);
      if (it == compiled_.end()) {
        if (!defs_.contains(type)) return "unknown MCP schema type " + type;
        json root{{"$ref", "#/definitions/" + type}, {"definitions", defs_}};
        auto c = mcp::CompiledSchema::Compile(root);
        if (!c) return "cannot compile MCP schema for " + type + ": " + c.error().detail;
        it = compiled_.emplace(type, std::move(*c)).first;
      }
      schema = it->second.get();
    }
    if (auto v = schema->Validate(doc)) return type + " " + v->message;
    return std::nullopt;
  }

 private:
  explicit McpSchemas(const std::string& version) {
    std::string path = std::string(CRMD_SOURCE_DIR) + "/tests/data/mcp/" + version + ".schema.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    json doc = json::parse(ss.str());
    defs_ = std::move(doc["$defs"]);
    RewriteRefs(defs_);
  }
  std::mutex mu_;
  json defs_;
  std::map<std::string, std::unique_ptr<mcp::CompiledSchema>> compiled_;
};

std::optional<std::string> ResultTypeFor(const std::string& method) {
  if (method == "initialize") return "InitializeResult";
  if (method == "tools/list") return "ListToolsResult";
  if (method == "tools/call") return "CallToolResult";
  if (method == "ping") return "EmptyResult";
  if (method == "resources/list") return "ListResourcesResult";
  if (method == "resources/read") return "ReadResourceResult";
  return std::nullopt;
}

// 2026-07-28: the JSON-RPC response type for each method crmd serves.
std::optional<std::string> ModernResponseTypeFor(const std::string& method) {
  if (method == "server/discover") return "DiscoverResultResponse";
  if (method == "tools/list") return "ListToolsResultResponse";
  if (method == "tools/call") return "CallToolResultResponse";
  if (method == "resources/list") return "ListResourcesResultResponse";
  if (method == "resources/read") return "ReadResourceResultResponse";
  return std::nullopt;
}

// 2026-07-28: the request type the client sends, to keep the test client honest.
std::optional<std::string> ModernRequestTypeFor(const std::string& method) {
  if (method == "server/discover") return "DiscoverRequest";
  if (method == "tools/list") return "ListToolsRequest";
  if (method == "tools/call") return "CallToolRequest";
  if (method == "resources/list") return "ListResourcesRequest";
  if (method == "resources/read") return "ReadResourceRequest";
  return std::nullopt;
}

// 2026-07-28: the specific error type for the codes the specification defines.
std::optional<std::string> ModernErrorTypeFor(int code) {
  switch (code) {
    case -32020:
      return "HeaderMismatchError";
    case -32021:
      return "MissingRequiredClientCapabilityError";
    case -32022:
      return "UnsupportedProtocolVersionError";
    case -32602:
      return "InvalidParamsError";
    case -32601:
      return "MethodNotFoundError";
    default:
      return std::nullopt;
  }
}

constexpr const char* kModernVersion = "2026-07-28";

}  // namespace

std::optional<std::string> ValidateMcpType(const std::string& type, const json& doc,
                                           const std::string& version) {
  return McpSchemas::Get(version).Validate(type, doc);
}

std::optional<std::string_view> McpReply::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (http::IEquals(k, name)) return std::string_view(v);
  return std::nullopt;
}

McpClient::McpClient(TestServer& server, McpClientOptions options)
    : server_(server), options_(std::move(options)) {}
McpClient::~McpClient() = default;

McpReply McpClient::Exchange(const std::string& http_method, const std::string& body,
                             http::Headers extra) {
  http::Headers headers;
  auto add = [&](const std::string& k, const std::string& v) {
    for (const auto& [ek, ev] : extra)
      if (http::IEquals(ek, k)) return;  // overridden by the caller
    headers.emplace_back(k, v);
  };
  if (http_method == "POST") {
    add("Content-Type", "application/json");
    add("Accept", "application/json, text/event-stream");
  }
  if (!options_.token.empty()) add("Authorization", "Bearer " + options_.token);
  if (!session_id_.empty()) add("Mcp-Session-Id", session_id_);
  if (!protocol_version_.empty()) add("MCP-Protocol-Version", protocol_version_);
  for (const auto& [k, v] : options_.extra_headers) add(k, v);
  for (auto& h : extra) headers.push_back(std::move(h));

  auto res = server_.Send(http_method, options_.path, body, std::move(headers));
  McpReply reply;
  reply.status = res.status;
  reply.headers = std::move(res.headers);
  reply.raw = std::move(res.body);
  if (!reply.raw.empty()) {
    reply.body = json::parse(reply.raw, nullptr, false);
    if (reply.body.is_discarded()) reply.body = nullptr;
  }
  return reply;
}

McpReply McpClient::RawPost(const std::string& body, http::Headers extra) {
  return Exchange("POST", body, std::move(extra));
}

McpReply McpClient::RawSend(const std::string& method, const std::string& body,
                            http::Headers extra) {
  return Exchange(method, body, std::move(extra));
}

McpReply McpClient::Rpc(const std::string& method, const json& params, bool notification,
                        http::Headers extra, bool check_request) {
  json msg{{"jsonrpc", "2.0"}, {"method", method}};
  if (!notification) msg["id"] = next_id_++;
  json sent = params;
  if (modern_) {
    // Per-request protocol fields (basic/index "_meta"); members the caller set win.
    if (sent.is_null()) sent = json::object();
    json meta{{"io.modelcontextprotocol/protocolVersion", modern_->version},
              {"io.modelcontextprotocol/clientCapabilities", modern_->capabilities}};
    if (modern_->client_info)
      meta["io.modelcontextprotocol/clientInfo"] = {{"name", "crmd-tests"}, {"version", "1.0.0"}};
    if (sent.contains("_meta") && sent["_meta"].is_object()) meta.update(sent["_meta"]);
    sent["_meta"] = std::move(meta);
    // Request metadata headers (basic/transports/streamable-http), unless overridden.
    http::Headers mirrored{{"MCP-Protocol-Version", modern_->version}, {"Mcp-Method", method}};
    if (sent.contains("name") && sent["name"].is_string())
      mirrored.emplace_back("Mcp-Name", sent["name"].get<std::string>());
    else if (method == "resources/read" && sent.contains("uri") && sent["uri"].is_string())
      mirrored.emplace_back("Mcp-Name", sent["uri"].get<std::string>());
    for (auto& [k, v] : mirrored) {
      bool overridden = false;
      for (const auto& [ek, ev] : extra) overridden = overridden || http::IEquals(ek, k);
      if (!overridden) extra.emplace_back(k, v);
    }
  }
  if (!sent.is_null()) msg["params"] = sent;
  if (modern_ && options_.validate && check_request && !notification) {
    if (auto type = ModernRequestTypeFor(method)) {
      if (auto v = ValidateMcpType(*type, msg, kModernVersion))
        ADD_FAILURE() << "test client sent an invalid " << *v;
    }
  }
  McpReply reply = Exchange("POST", msg.dump(), std::move(extra));
  if (options_.validate) {
    if (notification) {
      EXPECT_TRUE(reply.status != 202 || reply.raw.empty()) << "202 must have no body";
    } else if (modern_) {
      CheckModern(method, reply, msg);
      if (reply.body.is_object() && reply.body.contains("id")) {
        EXPECT_EQ(reply.body["id"], msg["id"]) << "response id must echo the request id";
      }
    } else {
      Check(method, reply, params);
      if (reply.body.is_object() && reply.body.contains("id")) {
        EXPECT_EQ(reply.body["id"], msg["id"]) << "response id must echo the request id";
      }
    }
  }
  return reply;
}

void McpClient::Check(const std::string& method, const McpReply& reply, const json& params) {
  if (!reply.body.is_object()) {
    // Only bodiless or non-JSON answers at the HTTP level (401, 403 by a guard) are allowed.
    EXPECT_NE(reply.status, 200) << method << ": 200 without a JSON-RPC body: " << reply.raw;
    return;
  }
  if (reply.status == 200 || reply.body.contains("jsonrpc")) {
    auto ct = reply.Header("Content-Type");
    EXPECT_TRUE(ct && ct->find("application/json") != std::string_view::npos) << method;
  }
  if (reply.body.contains("error")) {
    if (auto v = ValidateMcpType("JSONRPCErrorResponse", reply.body))
      ADD_FAILURE() << method << ": " << *v;
    // The specific error types 2025-11-25 defines.
    if (reply.body["error"].value("code", 0) == -32042) {
      if (auto v = ValidateMcpType("URLElicitationRequiredError", reply.body))
        ADD_FAILURE() << method << ": " << *v;
    }
    return;
  }
  if (auto v = ValidateMcpType("JSONRPCResultResponse", reply.body)) {
    ADD_FAILURE() << method << ": " << *v << " in " << reply.raw;
    return;
  }
  auto type = ResultTypeFor(method);
  if (type) {
    if (auto v = ValidateMcpType(*type, reply.body["result"])) {
      ADD_FAILURE() << method << ": " << *v << " in " << reply.raw;
    }
  }
  if (method == "tools/list") RememberOutputSchemas(reply);
  if (method == "tools/call") CheckStructured(reply, params);
}

void McpClient::RememberOutputSchemas(const McpReply& reply) {
  for (const auto& tool : reply.body["result"].value("tools", json::array())) {
    if (!tool.contains("outputSchema")) continue;
    auto c = mcp::CompiledSchema::Compile(tool["outputSchema"]);
    if (!c) {
      ADD_FAILURE() << "outputSchema of " << tool["name"] << " does not compile";
      continue;
    }
    output_schemas_[tool["name"]] = std::shared_ptr<mcp::CompiledSchema>(std::move(*c));
  }
}

void McpClient::CheckStructured(const McpReply& reply, const json& params) {
  if (params.contains("name")) {
    const json& r = reply.body["result"];
    auto it = output_schemas_.find(params["name"].get<std::string>());
    if (it != output_schemas_.end() && !r.value("isError", false) &&
        r.contains("structuredContent")) {
      if (auto v = it->second->Validate(r["structuredContent"])) {
        ADD_FAILURE() << params["name"]
                      << " structuredContent violates its outputSchema: " << v->message;
      }
    }
  }
}

void McpClient::CheckModern(const std::string& method, const McpReply& reply, const json& request) {
  if (!reply.body.is_object()) {
    EXPECT_NE(reply.status, 200) << method << ": 200 without a JSON-RPC body: " << reply.raw;
    return;
  }
  auto ct = reply.Header("Content-Type");
  EXPECT_TRUE(ct && ct->find("application/json") != std::string_view::npos) << method;
  EXPECT_FALSE(reply.Header("Mcp-Session-Id")) << method << ": 2026-07-28 has no sessions";
  if (reply.body.contains("error")) {
    if (auto v = ValidateMcpType("JSONRPCErrorResponse", reply.body, kModernVersion)) {
      ADD_FAILURE() << method << ": " << *v << " in " << reply.raw;
    }
    if (reply.body["error"].contains("code") && reply.body["error"]["code"].is_number_integer()) {
      if (auto type = ModernErrorTypeFor(reply.body["error"]["code"].get<int>())) {
        // InvalidParamsError and MethodNotFoundError are error objects; the others responses.
        bool object_only = *type == "InvalidParamsError" || *type == "MethodNotFoundError";
        if (auto v = ValidateMcpType(*type, object_only ? reply.body["error"] : reply.body,
                                     kModernVersion)) {
          ADD_FAILURE() << method << ": " << *v << " in " << reply.raw;
        }
      }
    }
    return;
  }
  if (auto v = ValidateMcpType("JSONRPCResultResponse", reply.body, kModernVersion)) {
    ADD_FAILURE() << method << ": " << *v << " in " << reply.raw;
    return;
  }
  if (auto type = ModernResponseTypeFor(method)) {
    if (auto v = ValidateMcpType(*type, reply.body, kModernVersion))
      ADD_FAILURE() << method << ": " << *v << " in " << reply.raw;
  }
  const json& result = reply.body["result"];
  // basic/index "Per-response protocol fields": the server identifies itself.
  EXPECT_TRUE(result.contains("_meta") &&
              result["_meta"].contains("io.modelcontextprotocol/serverInfo"))
      << method << ": no serverInfo in result _meta: " << reply.raw;
  std::string result_type = result.value("resultType", "");
  EXPECT_TRUE(result_type == "complete" || result_type == "input_required") << reply.raw;
  if (result_type == "input_required") {
    EXPECT_EQ(method, "tools/call") << "input_required is only for tools/call here";
    if (auto v = ValidateMcpType("InputRequiredResult", result, kModernVersion))
      ADD_FAILURE() << *v;
    EXPECT_TRUE(result.contains("inputRequests") || result.contains("requestState")) << reply.raw;
    EXPECT_FALSE(result.contains("ttlMs") || result.contains("cacheScope"))
        << "input_required is not cacheable";
    return;
  }
  if (method == "tools/call") {
    if (auto v = ValidateMcpType("CallToolResult", result, kModernVersion)) {
      ADD_FAILURE() << *v;
    }
    CheckStructured(reply, request["params"]);
  }
  if (method == "tools/list") RememberOutputSchemas(reply);
}

void McpClient::UseModern(McpModernOptions modern) {
  session_id_.clear();
  protocol_version_.clear();
  modern_ = std::move(modern);
}

McpReply McpClient::Discover() { return Rpc("server/discover", json::object(), false); }

McpReply McpClient::CallToolRetry(const std::string& name, const json& arguments,
                                  const json& input_responses, const std::string& request_state) {
  json params{{"name", name}, {"arguments", arguments}, {"requestState", request_state}};
  if (!input_responses.is_null()) params["inputResponses"] = input_responses;
  return Rpc("tools/call", params, false);
}

McpReply McpClient::ModernRequest(const std::string& method, json params, http::Headers extra) {
  return Rpc(method, params, false, std::move(extra), /*check_request=*/false);
}

McpReply McpClient::Initialize(const std::string& version, const json& capabilities) {
  session_id_.clear();
  protocol_version_.clear();
  McpReply reply =
      Rpc("initialize",
          json{{"protocolVersion", version},
               {"capabilities", capabilities.is_object() ? capabilities : json::object()},
               {"clientInfo", {{"name", "crmd-tests"}, {"version", "1.0.0"}}}},
          false);
  if (!reply.ok()) return reply;
  if (auto sid = reply.Header("Mcp-Session-Id")) session_id_ = std::string(*sid);
  protocol_version_ = reply.result().value("protocolVersion", "");
  McpReply n = Notify("notifications/initialized", nullptr);
  EXPECT_EQ(n.status, 202) << n.raw;
  return reply;
}

McpReply McpClient::Ping() { return Rpc("ping", nullptr, false); }

McpReply McpClient::ListTools(const std::optional<std::string>& cursor) {
  json params = json::object();
  if (cursor) params["cursor"] = *cursor;
  return Rpc("tools/list", params, false);
}

json McpClient::ListAllTools() {
  json all = json::array();
  std::optional<std::string> cursor;
  for (int page = 0; page < 100; ++page) {
    McpReply r = ListTools(cursor);
    EXPECT_TRUE(r.ok()) << r.raw;
    if (!r.ok()) break;
    for (const auto& t : r.result()["tools"]) all.push_back(t);
    if (!r.result().contains("nextCursor")) break;
    cursor = r.result()["nextCursor"].get<std::string>();
  }
  return all;
}

const json& McpReply::structured() const {
  if (is_tool_error() && !result().contains("structuredContent")) {
    if (error_structured_.is_null()) {
      const auto& content = result().at("content");
      // Inside the untrusted-data block (src/mcp/data_block.h); null when it is not one.
      auto parsed = mcp::ParseDataText(content.at(0).at("text").get<std::string>());
      EXPECT_TRUE(parsed) << "a tool error's text is not an untrusted-data block";
      if (parsed) error_structured_ = std::move(*parsed);
    }
    return error_structured_;
  }
  return result().at("structuredContent");
}

McpReply McpClient::CallTool(const std::string& name, const json& arguments) {
  return Rpc("tools/call", json{{"name", name}, {"arguments", arguments}}, false);
}

json McpClient::CallToolOk(const std::string& name, const json& arguments) {
  McpReply r = CallTool(name, arguments);
  if (!r.ok() || r.is_tool_error() || !r.result().contains("structuredContent")) {
    ADD_FAILURE() << name << " did not succeed: HTTP " << r.status << " " << r.raw;
    return nullptr;
  }
  return r.structured();
}

json McpClient::CallToolError(const std::string& name, const json& arguments) {
  McpReply r = CallTool(name, arguments);
  if (r.is_tool_error() && r.result().contains("structuredContent")) {
    ADD_FAILURE() << name << ": a tool error must not carry structuredContent (clients check it "
                  << "against the outputSchema): " << r.raw;
  }
  if (!r.is_tool_error() || !r.structured().contains("error")) {
    ADD_FAILURE() << name << " was expected to be a tool error: HTTP " << r.status << " " << r.raw;
    return nullptr;
  }
  return r.structured()["error"];
}

McpReply McpClient::Request(const std::string& method, const json& params) {
  return Rpc(method, params, false);
}

McpReply McpClient::Notify(const std::string& method, const json& params) {
  return Rpc(method, params, true);
}

McpReply McpClient::EndSession() { return Exchange("DELETE", "", {}); }

}  // namespace crmd::testing
