#include "src/mcp/registry.h"

#include <spdlog/spdlog.h>

#include <cmath>

#include "src/core/crypto.h"
#include "src/core/embedded.h"
#include "src/core/json_write.h"
#include "src/core/log.h"
#include "src/mcp/data_block.h"
#include "src/mcp/json_schema.h"
#include "src/mcp/modern.h"

namespace crmd::mcp {

using nlohmann::json;

struct ToolRegistry::Tool {
  std::string name;
  std::string scope;
  json descriptor;  // as registered
  json listed;      // the Tool object tools/list shows
  std::unique_ptr<CompiledSchema> input;
  std::unique_ptr<CompiledSchema> output;  // may be null
  ToolHandler handler;
};

namespace {

// Writes every finite double in `doc` that is a whole number within int64 as an integer;
// true when it changed one.
bool WholeNumbersAsIntegers(json& doc) {
  if (doc.is_number_float()) {
    const double d = doc.get<double>();
    // 2^63 is the first double past int64; the comparison is false for NaN.
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || std::trunc(d) != d)
      return false;
    doc = static_cast<int64_t>(d);
    return true;
  }
  bool changed = false;
  if (doc.is_structured())
    for (auto& value : doc) changed = WholeNumbersAsIntegers(value) || changed;
  return changed;
}

// MCP server/tools "Tool Names": 1-128 of A-Z a-z 0-9 _ - .
bool ValidToolName(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Status Bad(const std::string& name, const std::string& why) {
  return Fail(Errc::kInvalidArgument, "tool " + name + ": " + why);
}

Result<std::unique_ptr<CompiledSchema>> CompileObjectSchema(const std::string& name,
                                                            const json& schema, const char* which) {
  if (!schema.is_object())
    return Fail(Bad(name, std::string(which) + " must be an object").error());
  auto type = schema.find("type");
  if (type == schema.end() || *type != "object") {
    return Fail(Bad(name, std::string(which) + " must have type \"object\"").error());
  }
  auto compiled = CompiledSchema::Compile(schema);
  if (!compiled) {
    return Fail(Errc::kInvalidArgument,
                "tool " + name + ": " + which + ": " + compiled.error().message,
                compiled.error().detail);
  }
  return std::move(*compiled);
}

std::string EncodeCursor(const std::string& last_name) {
  return crypto::Base64UrlEncode("after:" + last_name);
}

std::optional<std::string> DecodeCursor(const std::string& cursor) {
  auto raw = crypto::Base64UrlDecode(cursor);
  if (!raw || raw->rfind("after:", 0) != 0) return std::nullopt;
  return raw->substr(6);
}

}  // namespace

json ToolResult(json structured, bool is_error) {
  // A string that is not UTF-8 (not from a client: their JSON is checked) is written with
  // U+FFFD, as the answer's writer does (http::Response::Json): a tool's result is always
  // answered, and its text is the serialisation of its structured content.
  std::string serialised = DumpJson(structured, json::error_handler_t::replace);
  return ToolResult(std::move(structured), serialised, is_error);
}

json ToolResult(json structured, std::string_view serialised, bool is_error) {
  // The text is the same JSON inside the untrusted-data block (data_block.h): an assistant
  // reading it is told which words are crmd's and which are data.
  json text{{"type", "text"}, {"text", DataText(serialised)}};
  json result = json::object();
  result["content"] = json::array({std::move(text)});
  // Errors travel as text only: clients (the official TypeScript SDK among them) check any
  // structuredContent against the tool's outputSchema, even when isError is true.
  if (!is_error) result["structuredContent"] = std::move(structured);
  result["isError"] = is_error;
  return result;
}

json ToolErrorBody(const std::string& code, const std::string& message, const json& details) {
  json err{{"code", code}, {"message", message}};
  if (!details.is_null()) err["details"] = details;
  return json{{"error", std::move(err)}};
}

ToolRegistry::ToolRegistry(ToolRegistryOptions options) : options_(options) {}
ToolRegistry::~ToolRegistry() = default;

Status ToolRegistry::Register(std::string name, ToolHandler handler) {
  auto file = embedded::Find("tools/" + name + ".json");
  if (!file) return Bad(name, "schemas/tools/" + name + ".json is not embedded");
  json descriptor = json::parse(*file, nullptr, /*allow_exceptions=*/false);
  if (descriptor.is_discarded()) return Bad(name, "schemas/tools/" + name + ".json is not JSON");
  if (!descriptor.is_object() || descriptor.value("name", json()) != name) {
    return Bad(name, "descriptor \"name\" must be \"" + name + "\"");
  }
  return RegisterDescriptor(std::move(descriptor), std::move(handler));
}

Status ToolRegistry::RegisterDescriptor(json d, ToolHandler handler) {
  if (!d.is_object()) return Fail(Errc::kInvalidArgument, "tool descriptor must be an object");
  auto name_it = d.find("name");
  if (name_it == d.end() || !name_it->is_string() || !ValidToolName(*name_it)) {
    return Fail(Errc::kInvalidArgument, "tool descriptor: invalid or missing name");
  }
  std::string name = *name_it;
  if (!handler) return Bad(name, "no handler");
  if (tools_.count(name)) return Bad(name, "registered twice");
  if (!d.contains("description") || !d["description"].is_string()) {
    return Bad(name, "description must be a string");
  }
  for (const char* key : {"title", "scope"}) {
    if (d.contains(key) && !d[key].is_string())
      return Bad(name, std::string(key) + " must be a string");
  }
  if (d.contains("annotations") && !d["annotations"].is_object()) {
    return Bad(name, "annotations must be an object");
  }
  if (!d.contains("inputSchema")) return Bad(name, "inputSchema is required");

  auto tool = std::make_unique<Tool>();
  tool->name = name;
  tool->scope = d.value("scope", "");
  auto input = CompileObjectSchema(name, d["inputSchema"], "inputSchema");
  if (!input) return Fail(input.error());
  tool->input = std::move(*input);
  if (d.contains("outputSchema")) {
    auto output = CompileObjectSchema(name, d["outputSchema"], "outputSchema");
    if (!output) return Fail(output.error());
    tool->output = std::move(*output);
  }

  // Only MCP's Tool fields are listed; "scope" is crmd's own.
  json listed{{"name", name}};
  for (const char* key :
       {"title", "description", "inputSchema", "outputSchema", "annotations", "icons"}) {
    if (d.contains(key)) listed[key] = d[key];
  }
  tool->listed = std::move(listed);
  tool->descriptor = std::move(d);
  tool->handler = std::move(handler);
  tools_.emplace(name, std::move(tool));
  return Ok();
}

ToolRegistry::ListOutcome ToolRegistry::List(const json& params) const {
  auto it = tools_.begin();
  if (params.is_object() && params.contains("cursor")) {
    const json& c = params["cursor"];
    auto after = c.is_string() ? DecodeCursor(c.get<std::string>()) : std::nullopt;
    if (!after) {
      return {nullptr, jsonrpc::RpcError{jsonrpc::kInvalidParams, "Invalid params: invalid cursor",
                                         nullptr, nullptr}};
    }
    it = tools_.upper_bound(*after);
  }
  json tools = json::array();
  size_t page = std::max<size_t>(1, options_.page_size);
  std::string last;
  for (; it != tools_.end() && tools.size() < page; ++it) {
    tools.push_back(it->second->listed);
    last = it->first;
  }
  json result{{"tools", std::move(tools)}};
  if (it != tools_.end()) result["nextCursor"] = EncodeCursor(last);
  return {std::move(result), std::nullopt};
}

CallOutcome ToolRegistry::Call(const ToolContext& ctx, const json& params) const {
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    return CallOutcome::Rpc(jsonrpc::kInvalidParams, "Invalid params: name must be a string");
  }
  const std::string& name = params["name"].get_ref<const std::string&>();
  static const json kNoArguments = json::object();
  const json* args = &kNoArguments;
  if (auto a = params.find("arguments"); a != params.end() && !a->is_null()) {
    if (!a->is_object()) {
      return CallOutcome::Rpc(jsonrpc::kInvalidParams,
                              "Invalid params: arguments must be an object");
    }
    args = &*a;
  }
  auto it = tools_.find(name);
  if (it == tools_.end()) return CallOutcome::Rpc(jsonrpc::kInvalidParams, "Unknown tool: " + name);
  const Tool& tool = *it->second;

  // Scope before arguments: a caller without the scope learns nothing about the schema.
  if (!tool.scope.empty() && !ctx.principal.HasScope(tool.scope)) {
    CallOutcome o;
    o.kind = CallOutcome::Kind::kInsufficientScope;
    o.required_scope = tool.scope;
    return o;
  }
  if (auto v = tool.input->Validate(*args)) {
    // JSON Schema's "integer" is any number with a zero fraction, and a client's encoder
    // may write 7 as 7.0; the validator and the handlers read integers. Only on this path,
    // after a refusal, so a call with plain integers pays nothing for it.
    json whole = *args;
    if (WholeNumbersAsIntegers(whole) && !tool.input->Validate(whole))
      return Invoke(tool, ctx, whole);
    json body = ToolErrorBody(ErrcCode(Errc::kInvalidArgument), v->message);
    body["error"]["field"] = v->field;
    CallOutcome o;
    o.result = ToolResult(std::move(body), true);
    return o;
  }
  return Invoke(tool, ctx, *args);
}

CallOutcome ToolRegistry::Invoke(const Tool& tool, const ToolContext& ctx, const json& args) const {
  ToolOutcome out;
  // The one place where a handler's exception becomes a protocol error without detail.
  try {
    out = tool.handler(ctx, args);
  } catch (const std::exception& e) {
    spdlog::error(R"("event":"tool_exception","tool":"{}","request_id":"{}","what":"{}")",
                  tool.name, ctx.request_id, JsonEscape(e.what()));
    return CallOutcome::Rpc(jsonrpc::kInternalError, "Internal error");
  } catch (...) {
    spdlog::error(R"("event":"tool_exception","tool":"{}","request_id":"{}")", tool.name,
                  ctx.request_id);
    return CallOutcome::Rpc(jsonrpc::kInternalError, "Internal error");
  }

  CallOutcome o;
  if (out.needs_input) return InputRequired(tool, ctx, std::move(out));
  if (out.url_elicitations.is_array()) {
    if (!ctx.session_url_elicitation || out.url_elicitations.empty()) {
      spdlog::error(
          R"("event":"tool_input_invalid","tool":"{}","request_id":"{}","violation":"{}")",
          tool.name, ctx.request_id, "URL elicitation for a client that did not declare it");
      CallOutcome o;
      o.result = ToolResult(ToolErrorBody(ErrcCode(Errc::kInternal), "internal error"), true);
      return o;
    }
    CallOutcome o = CallOutcome::Rpc(kUrlElicitationRequired, std::move(out.error.message));
    o.rpc_error.data = nlohmann::json{{"elicitations", std::move(out.url_elicitations)}};
    return o;
  }
  if (!out.ok) {
    const Error& e = out.error;
    if (e.code == Errc::kPermissionDenied && out.error_details.is_object() &&
        out.error_details.contains("required_scope") &&
        out.error_details["required_scope"].is_string()) {
      o.kind = CallOutcome::Kind::kInsufficientScope;
      o.required_scope = out.error_details["required_scope"];
      return o;
    }
    if (e.code == Errc::kInternal) {
      spdlog::error(R"("event":"tool_internal_error","tool":"{}","request_id":"{}","detail":"{}")",
                    tool.name, ctx.request_id, JsonEscape(e.detail));
      o.result = ToolResult(ToolErrorBody(ErrcCode(Errc::kInternal), "internal error"), true);
      return o;
    }
    o.result = ToolResult(ToolErrorBody(ErrcCode(e.code), e.message, out.error_details), true);
    return o;
  }

  // A result given as text: parsed only where it must be a tree (checked against the
  // outputSchema, or asked for as one); else it stays text to the answer.
  json parsed_text;
  const bool as_text = !out.structured_text.empty();
  if (as_text && (options_.materialize_text_results || (options_.validate_output && tool.output))) {
    // Our own text, not a client's: no depth limit (a contact's custom_fields may be as
    // deep as a client could send them, and sit two levels down here).
    parsed_text = json::parse(out.structured_text, nullptr, false);
    if (options_.materialize_text_results) out.structured = std::move(parsed_text);
  }
  const json& structured =
      as_text && !options_.materialize_text_results ? parsed_text : out.structured;
  const bool must_check =
      !as_text || options_.materialize_text_results || (options_.validate_output && tool.output);
  // structuredContent is a JSON object (MCP CallToolResult).
  bool bad_output = must_check && !structured.is_object();
  if (!bad_output && options_.validate_output && tool.output) {
    if (auto v = tool.output->Validate(structured)) {
      spdlog::error(
          R"("event":"tool_output_invalid","tool":"{}","request_id":"{}","violation":"{}")",
          tool.name, ctx.request_id, JsonEscape(v->message));
      bad_output = true;
    }
  } else if (bad_output) {
    spdlog::error(
        R"("event":"tool_output_invalid","tool":"{}","request_id":"{}","violation":"not an object")",
        tool.name, ctx.request_id);
  }
  if (bad_output) {
    o.result = ToolResult(ToolErrorBody(ErrcCode(Errc::kInternal), "internal error"), true);
    return o;
  }
  if (as_text && !options_.materialize_text_results) {
    // No content block in the tree: the answer's writer writes it from the text.
    o.result = json::object();
    o.result["isError"] = false;
    o.structured_text = std::move(out.structured_text);
    o.structured_in_text = true;
    return o;
  }
  o.structured_text = DumpJson(out.structured, json::error_handler_t::replace);
  o.result = ToolResult(std::move(out.structured), o.structured_text, false);
  o.text_is_structured = true;
  return o;
}

// A tool asked for input (ToolOutcome::NeedInput). Only elicitation is offered (crmd
// neither samples nor asks for roots), in a mode the client declared for this request.
CallOutcome ToolRegistry::InputRequired(const Tool& tool, const ToolContext& ctx,
                                        ToolOutcome out) const {
  CallOutcome o;
  auto fail = [&](const char* why) {
    spdlog::error(R"("event":"tool_input_invalid","tool":"{}","request_id":"{}","violation":"{}")",
                  tool.name, ctx.request_id, why);
    o.result = ToolResult(ToolErrorBody(ErrcCode(Errc::kInternal), "internal error"), true);
    return o;
  };
  if (!ctx.CanRequestInput())
    return fail("NeedInput on a request that cannot carry input requests");
  if (!out.input_requests.is_object() || out.input_requests.empty())
    return fail("no input requests");
  for (const auto& [key, request] : out.input_requests.items()) {
    if (key.empty() || !request.is_object() ||
        request.value("method", "") != "elicitation/create" || !request.contains("params") ||
        !request["params"].is_object()) {
      return fail("an input request is not an elicitation/create request");
    }
    std::string mode = request["params"].value("mode", "form");
    if (mode != "form" && mode != "url") return fail("unknown elicitation mode");
    if (!ctx.SupportsElicitation(mode)) {
      o.kind = CallOutcome::Kind::kMissingCapability;
      o.required_capabilities = nlohmann::json{{"elicitation", {{mode, nlohmann::json::object()}}}};
      return o;
    }
  }
  o.kind = CallOutcome::Kind::kInputRequired;
  o.input_requests = std::move(out.input_requests);
  o.input_state = std::move(out.input_state);
  return o;
}

std::vector<std::string> ToolRegistry::Names() const {
  std::vector<std::string> names;
  names.reserve(tools_.size());
  for (const auto& [name, tool] : tools_) names.push_back(name);
  return names;
}

const json* ToolRegistry::Descriptor(std::string_view name) const {
  auto it = tools_.find(name);
  return it == tools_.end() ? nullptr : &it->second->descriptor;
}

}  // namespace crmd::mcp
