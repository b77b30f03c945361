#pragma once
// Outbound HTTP(S), as an interface so modules that must not see Beast (auth's Client ID
// Metadata Document fetcher, webhook delivery) can use it and unit tests can fake it.
// The implementation (src/http/client.h) resolves the host, refuses private, loopback,
// link-local and otherwise non-public addresses unless allowed (SSRF), connects to the
// checked address only, enforces the timeout and the response size cap, and verifies TLS.
#include <cstdint>
#include <string>

#include "src/core/http_types.h"
#include "src/core/result.h"

namespace crmd::http {

struct ClientRequest {
  std::string method = "GET";
  std::string url;  // http:// or https://
  Headers headers;
  std::string body;
  int timeout_ms = 5000;
  size_t max_response_bytes = 1024 * 1024;
  bool allow_private = false;  // allow loopback/private targets (tests, explicit config)
};

struct ClientResponse {
  int status = 0;
  Headers headers;
  std::string body;
  std::optional<std::string_view> Header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (IEquals(k, name)) return std::string_view(v);
    return std::nullopt;
  }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Errors: kInvalidArgument (bad URL), kPermissionDenied (target address not allowed),
  // kUnavailable (connect/timeout/TLS), kPayloadTooLarge (response over the cap).
  virtual Result<ClientResponse> Send(const ClientRequest& request) = 0;
};

}  // namespace crmd::http
