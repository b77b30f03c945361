#pragma once
// RequestStateCodec: the `requestState` of MCP 2026-07-28 multi round-trip requests
// (basic/patterns/mrtr). A tool that needs input answers with an InputRequiredResult; what
// it must remember until the retry travels through the client, sealed here, so that any
// node holding the same key can finish the request and no node stores anything.
//
// Token: "s1.<kid>.<base64url(payload)>.<base64url(HMAC-SHA256(key, tag|kid|payload))>".
// The payload is JSON: the binding (OAuth client id, subject, method, tool name, SHA-256
// of the canonical arguments), issue and expiry times, and the tool's own state. The state
// is signed, not encrypted: the client can read it, so tools put no secrets in it.
// The spec's MUSTs (mrtr "Server Requirements" 4-5): attacker-controlled input, integrity
// protected, bound to the principal, a short expiry, and to the originating request.
// Not single-use: a tool that must act at most once enforces that itself.
//
// Thread-safe: every method is const and the object never changes after construction.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"

namespace crmd::mcp {

// A signing key. The first key of a ring seals; every key opens (rotation: add the new key
// first, keep the old one for one TTL, then drop it).
struct RequestStateKey {
  std::string id;      // short, [A-Za-z0-9_-], names the key inside tokens
  std::string secret;  // raw bytes; REQUIRES: at least 32 bytes from a CSPRNG
};

// What a state is bound to; every field must match on the retry.
struct RequestStateBinding {
  std::string client_id;
  std::string subject;
  std::string method;            // "tools/call"
  std::string name;              // the tool
  std::string arguments_digest;  // ArgumentsDigest(arguments)
};

struct RequestStateOptions {
  int64_t ttl_s = 600;                 // a retry later than this is refused
  size_t max_token_bytes = 16 * 1024;  // larger states are refused when sealing and opening
};

class RequestStateCodec {
 public:
  // REQUIRES: `keys` non-empty, ids unique; `clock` outlives the codec.
  RequestStateCodec(std::vector<RequestStateKey> keys, RequestStateOptions options,
                    const Clock& clock);
  RequestStateCodec(const RequestStateCodec&) = delete;
  RequestStateCodec& operator=(const RequestStateCodec&) = delete;

  // kInternal when the state is too large (a tool bug, not the client's).
  Result<std::string> Seal(const RequestStateBinding& binding, const nlohmann::json& state) const;
  // The tool's state. kInvalidArgument (client-facing message, no oracle beyond
  // "expired" vs "invalid") when malformed, forged, under an unknown key, bound to another
  // principal, method, tool or arguments, or expired.
  Result<nlohmann::json> Open(std::string_view token, const RequestStateBinding& binding) const;

  // Hex SHA-256 of the arguments serialised with sorted keys (nlohmann's object order), so
  // the same arguments give the same digest on every node.
  static std::string ArgumentsDigest(const nlohmann::json& arguments);

  int64_t ttl_s() const { return options_.ttl_s; }

 private:
  std::string Mac(const RequestStateKey& key, std::string_view payload_b64) const;

  const std::vector<RequestStateKey> keys_;
  const RequestStateOptions options_;
  const Clock& clock_;
};

}  // namespace crmd::mcp
