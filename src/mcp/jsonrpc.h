#pragma once
// JSON-RPC 2.0 messages as MCP uses them (MCP basic/index "Messages"): one message per
// HTTP body; batches (arrays) are refused since protocol 2025-06-18. Pure functions,
// thread-safe.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace crmd::mcp::jsonrpc {

// Standard JSON-RPC 2.0 error codes (JSON-RPC 2.0 §5.1).
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

enum class Kind { kRequest, kNotification, kResponse };

struct Message {
  Kind kind = Kind::kRequest;
  nlohmann::json id;      // string or integer for requests and responses; null otherwise
  std::string method;     // requests and notifications
  nlohmann::json params;  // object, or null when absent
  nlohmann::json result;  // responses: the result (null when the response is an error)
  nlohmann::json error;   // responses: the error object (null on success)
};

// A protocol error, with the id of the offending request when it could be read (null
// otherwise, serialised without an id per MCP basic/index "Error Responses").
struct RpcError {
  int code = kInternalError;
  std::string message;
  nlohmann::json id;    // null when unknown
  nlohmann::json data;  // optional; null means absent
};

// Parses one message. Errors: kParseError (not JSON / not UTF-8), kInvalidRequest (an
// array, missing or wrong "jsonrpc", id null or of the wrong type, method not a string,
// params neither object nor absent, a response without exactly one of result/error).
struct ParseOutcome {
  std::optional<Message> message;
  std::optional<RpcError> error;
};
ParseOutcome Parse(std::string_view body);

// The id of the request in `body` when it parses as one, else null. For answers given
// before the message was parsed (401, 406, 415, an exception): it parses the whole body, so
// only error paths call it; the success path keeps the one parse in Parse(). A body longer
// than `max_bytes` is not parsed (null): the 401 answer passes a small bound, so a client
// without credentials cannot make crmd parse a large body.
nlohmann::json RequestIdOf(std::string_view body, size_t max_bytes = SIZE_MAX);

// {"jsonrpc":"2.0","id":id,"result":result}
nlohmann::json MakeResult(const nlohmann::json& id, nlohmann::json result);
// {"jsonrpc":"2.0","id"?:id,"error":{"code","message","data"?}}; id omitted when null: the
// MCP schemas from 2025-11-25 on make an error's id optional and a RequestId a string or an
// integer, so "id": null (JSON-RPC 2.0 §5) would fail them and the SDKs that check them.
nlohmann::json MakeError(const RpcError& error);

}  // namespace crmd::mcp::jsonrpc
