#pragma once
// The authorization endpoint (RFC 6749 §4.1 as profiled by OAuth 2.1 and MCP 2025-11-25):
// GET /oauth/authorize validates the request, then the person signs in (GET/POST
// /oauth/login) and consents (GET/POST /oauth/consent); the client gets a single-use code
// (table auth_codes, redeemed by the token endpoint) at its redirect URI together with
// `state` and `iss` (RFC 9207).
//
// Rules: response_type=code only; PKCE with S256 only; resource (RFC 8707) must be this
// server's MCP resource (absent: defaulted to it); scope is parsed against the catalogue,
// and when absent defaults to the client's registered scope or else every *:read scope.
// Errors found before client_id and redirect_uri are validated are shown on an HTML page
// (400) and never redirected (RFC 6749 §4.1.2.1). So are all errors of clients that anyone
// could have registered (dynamic registration, metadata documents): redirecting them
// would make this server an open redirector (RFC 9700 §4.11.2), sending a browser to a URI
// of the requester's choosing without anybody signing in. Only clients an operator
// created get their errors at their redirect URI. The same holds for prompt=none: a
// silent request that cannot be answered (no session: login_required; no consent:
// consent_required) is shown as a page for those clients, and redirected only for
// operator-made ones; a person who already consented gets the code either way.
//
// The pending request lives on the server (table authorization_requests); pages carry an
// opaque handle, and the request is bound to the browser cookie that started it. Forms
// carry CSRF tokens (login: per pending request; consent: per login session) and POSTs
// with a foreign Origin are refused.
//
// Thread-safe (state is in the database).
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "auth/cimd.h"
#include "auth/clients.h"
#include "auth/consent.h"
#include "auth/login_session.h"
#include "auth/registration.h"
#include "auth/sign_in_throttle.h"
#include "auth/users.h"
#include "src/core/clock.h"
#include "src/core/http_types.h"
#include "src/core/random.h"
#include "src/store/db.h"

namespace crmd::auth {

// A validated authorization request.
struct AuthorizationRequest {
  std::string client_id;
  std::string redirect_uri;  // as presented (a loopback port may differ from the registered one)
  std::set<std::string> scopes;
  std::string resource;
  std::optional<std::string> state;
  std::string code_challenge;  // S256
  bool prompt_none = false;    // OIDC-style prompt=none: fail instead of showing pages
  // An operator created the client (source "admin"): errors may go to its redirect URI.
  bool redirect_errors = false;
};

// Why a request was refused. When `redirect` is false the client or its redirect URI could
// not be trusted (unknown, or registered by anyone): the error is shown to the person
// instead.
struct AuthorizeFailure {
  OAuthError error;
  bool redirect = false;
  std::string redirect_uri;
  std::optional<std::string> state;
};

using ClientLookup = std::function<Result<Client>(std::string_view client_id)>;

struct AuthorizeRules {
  std::string resource;                  // config.McpResource()
  std::set<std::string> default_scopes;  // when the request has no scope
};

// Validates the query of GET /oauth/authorize (already split into pairs).
tl::expected<std::pair<AuthorizationRequest, Client>, AuthorizeFailure>
ValidateAuthorizationRequest(const std::vector<std::pair<std::string, std::string>>& query,
                             const ClientLookup& lookup, const AuthorizeRules& rules);

// Every *:read scope: the default when a request names none.
std::set<std::string> DefaultReadScopes();

// redirect_uri with the parameters appended to its query (percent-encoded).
std::string AppendQuery(std::string_view redirect_uri,
                        const std::vector<std::pair<std::string, std::string>>& params);

struct AuthorizeOptions {
  std::string issuer;
  std::string resource;
  std::vector<std::string> allowed_origins;
  int64_t auth_code_ttl = 60;
  int64_t pending_ttl = 10 * 60;  // how long a person has to sign in and decide
};

struct AuthorizeServices {
  store::Database& db;
  ClientStore& clients;
  CimdResolver& cimd;
  Users& users;
  LoginSessions& sessions;
  Consents& consents;
  SignInThrottle& throttle;  // failed sign-ins on the login page
  Random& random;
  const Clock& clock;
};

class AuthorizationEndpoint {
 public:
  AuthorizationEndpoint(AuthorizeServices services, AuthorizeOptions options);
  AuthorizationEndpoint(const AuthorizationEndpoint&) = delete;
  AuthorizationEndpoint& operator=(const AuthorizationEndpoint&) = delete;

  http::Response HandleAuthorize(const http::Request& req);  // GET /oauth/authorize
  http::Response HandleLogin(const http::Request& req);      // GET, POST /oauth/login
  http::Response HandleConsent(const http::Request& req);    // GET, POST /oauth/consent

  // The client for a client_id: metadata document for https ids, else the registry.
  // Revoked or unknown clients are kNotFound.
  Result<Client> LookupClient(std::string_view client_id);

 private:
  struct Pending;
  struct Browser;

  Browser BrowserOf(const http::Request& req);
  Result<std::optional<Pending>> FindPending(const http::Request& req, const std::string& handle);
  Result<std::optional<LoginSession>> SessionOf(const http::Request& req);
  http::Response LoginForm(int status, const Pending& pending, const std::string& handle,
                           const std::string& email, const std::string& error);
  http::Response PostLogin(const http::Request& req);
  http::Response PostConsent(const http::Request& req);
  // Issues the code (consuming the pending request) and redirects to the client.
  http::Response Approve(const AuthorizationRequest& request,
                         const std::optional<std::string>& handle, int64_t user_id,
                         const std::set<std::string>& scopes, bool remember);
  http::Response RedirectError(const AuthorizationRequest& request, const std::string& error,
                               const std::string& description, int status);
  http::Response ErrorPage(int status, std::string_view title, std::string_view message);

  AuthorizeServices s_;
  const AuthorizeOptions options_;
  const CookieNames cookies_;
};

}  // namespace crmd::auth
