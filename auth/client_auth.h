#pragma once
// Client authentication at the token, revocation and introspection endpoints (RFC 6749
// §2.3, OAuth 2.1 §2.4): client_secret_basic, client_secret_post, or none (a public client
// names itself with client_id). Secrets are compared as hashes in constant time; an
// unknown client costs the same work as a wrong secret. Thread-safe (stateless).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "auth/token_errors.h"
#include "src/core/http_types.h"
#include "src/store/db.h"

namespace crmd::auth {

using Form = std::vector<std::pair<std::string, std::string>>;

struct OAuthClient {
  std::string client_id;
  std::string auth_method;                    // none | client_secret_basic | client_secret_post
  bool has_secret = false;                    // confidential client
  std::vector<std::string> grant_types;       // registered grant types
  std::optional<std::string> allowed_scopes;  // client_credentials scopes an admin granted
  bool authenticated_with_secret = false;     // this request proved the secret

  bool Confidential() const { return has_secret && auth_method != "none"; }
  bool AllowsGrant(std::string_view g) const;
};

// Authenticates the calling client. A confidential client must present its secret (basic
// or post; either is accepted); a public client must present client_id only. Refusals are
// 401 invalid_client (with a Basic challenge when Basic was tried), or 400
// invalid_request when several methods are combined.
// REQUIRES: not called inside Database::Read/Write.
OAuthResult<OAuthClient> AuthenticateClient(store::Database& db, const http::Request& request,
                                            const Form& form);

}  // namespace crmd::auth
