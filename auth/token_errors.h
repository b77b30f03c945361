#pragma once
// OAuth error responses of the token, revocation and introspection endpoints (RFC 6749
// §5.2, RFC 8707 §2 invalid_target). Every response of these endpoints carries
// Cache-Control: no-store and Pragma: no-cache (RFC 6749 §5.1), errors included.
// `description` is client-facing: it never names internals.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <tl/expected.hpp>
#include <utility>

#include "src/core/http_types.h"

namespace crmd::auth {

struct OAuthError {
  int status = 400;
  std::string error;
  std::string description;
  bool basic_challenge = false;  // 401 with WWW-Authenticate: Basic (RFC 6749 §5.2)

  static OAuthError InvalidRequest(std::string d) { return {400, "invalid_request", std::move(d)}; }
  static OAuthError InvalidClient(std::string d, bool basic = false) {
    return {401, "invalid_client", std::move(d), basic};
  }
  static OAuthError InvalidGrant(std::string d) { return {400, "invalid_grant", std::move(d)}; }
  static OAuthError UnauthorizedClient(std::string d) {
    return {400, "unauthorized_client", std::move(d)};
  }
  static OAuthError UnsupportedGrantType(std::string d) {
    return {400, "unsupported_grant_type", std::move(d)};
  }
  static OAuthError InvalidScope(std::string d) { return {400, "invalid_scope", std::move(d)}; }
  static OAuthError InvalidTarget(std::string d) { return {400, "invalid_target", std::move(d)}; }
  // The detail goes to the log by the caller, never to the client.
  static OAuthError ServerError() { return {500, "server_error", "internal error"}; }
};

template <typename T>
using OAuthResult = tl::expected<T, OAuthError>;

inline tl::unexpected<OAuthError> Refuse(OAuthError e) {
  return tl::unexpected<OAuthError>(std::move(e));
}

// JSON with the no-store headers.
http::Response NoStoreJson(int status, const nlohmann::json& body);
http::Response OAuthErrorResponse(const OAuthError& error);

}  // namespace crmd::auth
