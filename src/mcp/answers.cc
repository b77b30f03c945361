// The parts of tools/call both protocol generations share (the call itself, its log line
// and metrics, the answer), and the JSON-RPC error answer.
#include "src/mcp/answers.h"

#include <spdlog/spdlog.h>

#include "src/core/json_write.h"
#include "src/core/log.h"
#include "src/mcp/data_block.h"
#include "src/mcp/endpoint.h"
#include "src/mcp/jsonrpc.h"

namespace crmd::mcp {

using nlohmann::json;

http::Response RpcErrorResponse(int status, int code, std::string message, json id, json data) {
  return http::Response::Json(
      status, jsonrpc::MakeError({code, std::move(message), std::move(id), std::move(data)}));
}

json SupportedVersions() {
  json out = json::array();
  for (auto v : kSupportedProtocolVersions) out.push_back(std::string(v));
  return out;
}

http::Response InsufficientScopeAnswer(const json& id, const std::string& scope,
                                       const std::string& resource_metadata_url) {
  http::Response r =
      RpcErrorResponse(403, kInsufficientScopeCode, "Insufficient scope: requires " + scope, id,
                       json{{"required_scope", scope}});
  r.Set("WWW-Authenticate", InsufficientScopeChallenge(scope, resource_metadata_url));
  return r;
}

// A tool call within the principal's rate on this node, or the rate-limited tool error.
CallOutcome McpEndpoint::RunToolCall(const ToolContext& context, const json& params,
                                     const std::string& owner) {
  if (limiter_.Allow(owner)) return tools_.Call(context, params);
  CallOutcome out;
  out.result = ToolResult(
      ToolErrorBody(ErrcCode(Errc::kRateLimited), "too many tool calls: retry in a few seconds"),
      true);
  return out;
}

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
        if (content.is_array() && !content.empty() && content[0].contains("text") &&
            content[0]["text"].is_string()) {
          auto body = ParseDataText(content[0]["text"].get_ref<const std::string&>());
          if (body && body->is_object() && body->contains("error") && (*body)["error"].is_object())
            code = (*body)["error"].value("code", "");
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

// The answer to a tools/call whose outcome is a result. When the structured content's
// serialisation is at hand (CallOutcome::text_is_structured), the writer copies it where
// the structured content goes instead of serialising the tree a second time (the same
// bytes: src/core/json_write.h). When the structured content exists only
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
      AppendJsonString(body, DataText(text));
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
    if (structured != r.end()) {
      return http::Response::Text(
          200,
          DumpJson(doc, json::error_handler_t::replace,
                   JsonSerialized{.node = &*structured, .text = out.structured_text}),
          "application/json");
    }
  }
  return http::Response::Json(200, doc);
}

}  // namespace crmd::mcp
