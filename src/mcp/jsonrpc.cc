#include "src/mcp/jsonrpc.h"

#include "src/core/json_parse.h"

namespace crmd::mcp::jsonrpc {

namespace {

using nlohmann::json;

// Deeper documents are refused by the parser, which stops at the 65th level whatever
// follows: serialisation and schema validation are recursive, and a 1 MiB body of '['
// would otherwise exhaust a worker's stack.
constexpr int kMaxDepth = 64;

bool ValidId(const json& id) { return id.is_string() || id.is_number_integer(); }

ParseOutcome Invalid(std::string message, json id = nullptr) {
  return {std::nullopt, RpcError{kInvalidRequest, std::move(message), std::move(id), nullptr}};
}

}  // namespace

ParseOutcome Parse(std::string_view body) {
  // Strict: a member given twice in one object is a parse error, not "the last one wins".
  // (A scan for the depth before the parse was a seventh of the parse's cost.)
  ParsedJson parsed = ParseJsonStrict(body, kMaxDepth);
  if (!parsed) {
    std::string message = parsed.problem == JsonProblem::kTooDeep ? "Parse error: nesting too deep"
                          : parsed.problem == JsonProblem::kDuplicateKey ||
                                  parsed.problem == JsonProblem::kNulCharacter
                              ? "Parse error: " + parsed.detail
                              : std::string("Parse error");
    return {std::nullopt, RpcError{kParseError, std::move(message), nullptr, nullptr}};
  }
  json doc = std::move(parsed.value);
  if (doc.is_array()) return Invalid("Invalid Request: batches are not supported");
  if (!doc.is_object()) return Invalid("Invalid Request: not an object");

  // Recover the id early so that later errors can echo it.
  json id = nullptr;
  auto id_it = doc.find("id");
  bool has_id = id_it != doc.end();
  if (has_id && ValidId(*id_it)) id = *id_it;

  auto v = doc.find("jsonrpc");
  if (v == doc.end() || !v->is_string() || *v != "2.0") {
    return Invalid("Invalid Request: jsonrpc must be \"2.0\"", id);
  }
  if (has_id && !ValidId(*id_it)) {
    return Invalid("Invalid Request: id must be a string or an integer");
  }

  Message m;
  auto method = doc.find("method");
  if (method != doc.end()) {
    if (!method->is_string()) return Invalid("Invalid Request: method must be a string", id);
    m.method = method->get<std::string>();
    auto params = doc.find("params");
    if (params != doc.end()) {
      if (!params->is_object()) {
        return Invalid("Invalid Request: params must be an object", id);
      }
      m.params = std::move(*params);
    }
    m.kind = has_id ? Kind::kRequest : Kind::kNotification;
    m.id = std::move(id);
    return {std::move(m), std::nullopt};
  }

  // No method: a response to a request the server sent.
  bool has_result = doc.contains("result");
  bool has_error = doc.contains("error");
  if (has_result == has_error) {
    return Invalid("Invalid Request: needs a method, or exactly one of result and error", id);
  }
  if (has_result && !has_id) return Invalid("Invalid Request: a result needs an id");
  if (has_error && !doc["error"].is_object()) {
    return Invalid("Invalid Request: error must be an object", id);
  }
  m.kind = Kind::kResponse;
  m.id = std::move(id);
  if (has_result) m.result = std::move(doc["result"]);
  if (has_error) m.error = std::move(doc["error"]);
  return {std::move(m), std::nullopt};
}

json RequestIdOf(std::string_view body, size_t max_bytes) {
  if (body.size() > max_bytes) return nullptr;
  ParseOutcome parsed = Parse(body);
  if (parsed.message && parsed.message->kind == Kind::kRequest) return parsed.message->id;
  return nullptr;
}

json MakeResult(const json& id, json result) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json MakeError(const RpcError& error) {
  json err{{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) err["data"] = error.data;
  json out{{"jsonrpc", "2.0"}};
  if (!error.id.is_null()) out["id"] = error.id;
  out["error"] = std::move(err);
  return out;
}

}  // namespace crmd::mcp::jsonrpc
