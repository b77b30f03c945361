#pragma once
// One function per grant type of the token endpoint (RFC 6749 §4.1.3, §6, §4.4), each a
// sequence of small named checks. They run after client authentication and form
// validation (single-valued parameters) and return the RFC 6749 §5.1 success body or an
// OAuth error. Thread-safe; each runs one database transaction.
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "auth/client_auth.h"
#include "auth/repo/grants_repo.h"
#include "auth/token_errors.h"
#include "auth/token_service.h"

namespace crmd::auth {

struct GrantContext {
  TokenService& tokens;
  const OAuthClient& client;  // authenticated
  const Form& form;
  std::optional<std::string> resource;  // RFC 8707 resource parameter (at most one)
};

// authorization_code: single use (a replay revokes the grant), bound to client,
// redirect_uri, PKCE S256 verifier and resource.
OAuthResult<nlohmann::json> GrantAuthorizationCode(const GrantContext& ctx);
// refresh_token: rotated on every use; reuse of a rotated token revokes the grant; scope
// may only narrow.
OAuthResult<nlohmann::json> GrantRefreshToken(const GrantContext& ctx);
// client_credentials: confidential clients only, within the admin-granted allowed_scopes.
OAuthResult<nlohmann::json> GrantClientCredentials(const GrantContext& ctx);

// The subject ("sub") of tokens from a grant: the user id, or "client:<client_id>".
std::string GrantSubject(std::optional<int64_t> user_id, std::string_view client_id);

// `scopes` within what the grant's person may hold now (auth/roles.h); a grant without a
// person (client_credentials) keeps them. `refusal` is set (invalid_grant) when the person
// is disabled, deleted or unknown, or (invalid_scope) when nothing is left.
struct PersonScopes {
  std::set<std::string> scopes;
  OAuthError refusal;
};
Result<PersonScopes> CapToPerson(store::Conn& c, std::optional<int64_t> user_id,
                                 const std::set<std::string>& scopes);

// Creates a refresh token of `grant` valid for `ttl` seconds through `c` (part of the
// grant's transaction) and returns its plaintext (only the hash is stored).
Result<std::string> IssueRefreshToken(store::Conn& c, Random& random, const repo::GrantRow& grant,
                                      int64_t now, int64_t ttl);

// {"access_token","token_type":"Bearer","expires_in","scope"[,"refresh_token"]}
nlohmann::json TokenResponseBody(const IssuedAccessToken& token, const std::string& scope,
                                 const std::optional<std::string>& refresh_token);

// The outcome of a grant transaction: errors that must still commit (a replay revokes
// the grant and then refuses) travel as values, not as a rolled-back Result error.
struct GrantOutcome {
  OAuthResult<nlohmann::json> result;
  bool revoked = false;  // tell the revocation cache
  // A security event (a replayed code, a reused refresh token) to log as a warning once the
  // transaction is committed: the body may run twice (store/db.h).
  std::string warning;
};

// Runs `body` in a write transaction and turns the outcome into the endpoint's answer,
// logging internal failures without exposing them.
template <typename F>
OAuthResult<nlohmann::json> RunGrant(TokenService& tokens, const char* grant, F&& body);
void LogGrantFailure(const char* grant, const Error& error);
void LogGrantWarning(const std::string& line);

template <typename F>
OAuthResult<nlohmann::json> RunGrant(TokenService& tokens, const char* grant, F&& body) {
  auto key = tokens.keys().Current();
  if (!key) {
    LogGrantFailure(grant, key.error());
    return Refuse(OAuthError::ServerError());
  }
  auto outcome =
      tokens.db().Write([&](store::Conn& c) -> Result<GrantOutcome> { return body(c, *key); });
  if (!outcome) {
    LogGrantFailure(grant, outcome.error());
    return Refuse(OAuthError::ServerError());
  }
  if (outcome->revoked) tokens.RevocationsChanged();
  if (!outcome->warning.empty()) LogGrantWarning(outcome->warning);
  return std::move(outcome->result);
}

}  // namespace crmd::auth
