#pragma once
// The bearer guard for the MCP endpoint (RFC 6750 as profiled by the MCP authorization
// spec): the access token comes only in the Authorization header; a token in the query
// string is refused. Thread-safe (stateless over TokenService).
//
// Errors are kUnauthenticated with Error::detail telling the caller which challenge to
// send (RFC 6750 §3.1):
//   "missing"          no credentials: WWW-Authenticate without an error parameter
//   "invalid_request"  malformed header, several tokens, or access_token in the query (400)
//   "invalid_token"    bad signature, expired, revoked, wrong issuer or audience (401)
// kUnavailable when revocation state cannot be checked (answer 503).
#include <string>
#include <string_view>

#include "auth/token_service.h"
#include "src/core/http_types.h"
#include "src/core/principal.h"
#include "src/core/result.h"

namespace crmd::auth {

inline constexpr std::string_view kBearerMissing = "missing";
inline constexpr std::string_view kBearerInvalidRequest = "invalid_request";
inline constexpr std::string_view kBearerInvalidToken = "invalid_token";

class BearerGuard {
 public:
  explicit BearerGuard(TokenService& tokens) : tokens_(tokens) {}
  // The caller's Principal, shared with the verified-token cache's entry (no copy).
  Result<std::shared_ptr<const Principal>> Authenticate(const http::Request& request) const;

 private:
  TokenService& tokens_;
};

// A WWW-Authenticate value for an Authenticate() error (RFC 6750 §3, RFC 9728 §5.1):
// Bearer resource_metadata="<url>"[, error="...", error_description="..."][, scope="..."].
std::string BearerChallenge(const Error& error, std::string_view resource_metadata_url,
                            std::string_view scope = {});
// The HTTP status for an Authenticate() error: 400 invalid_request, 503 unavailable, else 401.
int BearerStatus(const Error& error);

}  // namespace crmd::auth
