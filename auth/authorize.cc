#include "auth/authorize.h"

#include <algorithm>
#include <map>

#include "auth/csrf.h"
#include "auth/pages.h"
#include "auth/redirect_uri.h"
#include "auth/repo/authorization_requests_repo.h"
#include "auth/repo/codes_repo.h"
#include "auth/repo/consents_repo.h"
#include "auth/repo/users_repo.h"
#include "auth/roles.h"
#include "auth/scopes.h"
#include "src/core/crypto.h"

namespace crmd::auth {
namespace {

using Query = std::vector<std::pair<std::string, std::string>>;

constexpr size_t kMaxStateLength = 2048;

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

std::string HostOf(std::string_view uri) {
  size_t scheme = uri.find("://");
  if (scheme == std::string_view::npos) return std::string(uri.substr(0, uri.find(':'))) + ":";
  std::string_view rest = uri.substr(scheme + 3);
  return std::string(rest.substr(0, rest.find_first_of("/?")));
}

// Fetches a parameter that must appear at most once (RFC 6749 §3.1).
struct Params {
  std::map<std::string, std::vector<std::string>> values;
  explicit Params(const Query& q) {
    for (const auto& [k, v] : q) values[k].push_back(v);
  }
  bool Duplicated(const std::string& k) const {
    auto it = values.find(k);
    return it != values.end() && it->second.size() > 1;
  }
  std::optional<std::string> Get(const std::string& k) const {
    auto it = values.find(k);
    if (it == values.end() || it->second.empty()) return std::nullopt;
    return it->second.front();
  }
};

}  // namespace

std::set<std::string> DefaultReadScopes() {
  std::set<std::string> out;
  for (const auto& s : AllScopes())
    if (s.size() > 5 && s.compare(s.size() - 5, 5, ":read") == 0) out.insert(s);
  return out;
}

std::string AppendQuery(std::string_view redirect_uri, const Query& params) {
  std::string out(redirect_uri);
  char sep = out.find('?') == std::string::npos ? '?' : '&';
  if (!out.empty() && (out.back() == '?' || out.back() == '&')) sep = 0;
  for (const auto& [k, v] : params) {
    if (sep) out += sep;
    out += http::PercentEncode(k) + "=" + http::PercentEncode(v);
    sep = '&';
  }
  return out;
}

tl::expected<std::pair<AuthorizationRequest, Client>, AuthorizeFailure>
ValidateAuthorizationRequest(const Query& query, const ClientLookup& lookup,
                             const AuthorizeRules& rules) {
  Params p(query);
  auto page = [](std::string error, std::string description) {
    return tl::unexpected(
        AuthorizeFailure{OAuthError{400, std::move(error), std::move(description)}, false, {}, {}});
  };
  // Until client_id and redirect_uri are trusted, nothing may be redirected.
  if (p.Duplicated("client_id") || p.Duplicated("redirect_uri"))
    return page("invalid_request", "client_id and redirect_uri may appear only once");
  auto client_id = p.Get("client_id");
  if (!client_id || client_id->empty())
    return page("invalid_request", "The request has no client_id.");
  auto client = lookup(*client_id);
  if (!client) {
    if (client.error().code == Errc::kNotFound)
      return page("invalid_client",
                  "The application is not registered with this server (unknown client_id).");
    if (client.error().code == Errc::kInternal) return page("server_error", "Internal error.");
    return page("invalid_client", client.error().message);
  }
  std::string redirect_uri;
  if (auto presented = p.Get("redirect_uri")) {
    if (!FindMatchingRedirectUri(client->redirect_uris, *presented))
      return page("invalid_request", "The redirect_uri is not registered for this application.");
    redirect_uri = *presented;
  } else if (client->redirect_uris.size() == 1) {
    redirect_uri = client->redirect_uris.front();
  } else {
    return page("invalid_request", "The request has no redirect_uri.");
  }

  AuthorizationRequest r;
  r.client_id = *client_id;
  r.redirect_uri = redirect_uri;
  r.state = p.Get("state");
  // RFC 9700 §4.11.2: only a redirect URI an operator vouched for receives errors.
  r.redirect_errors = client->source == "admin";
  auto fail = [&](std::string error, std::string description) {
    return tl::unexpected(AuthorizeFailure{
        OAuthError{400, std::move(error), std::move(description)}, r.redirect_errors, redirect_uri,
        r.state && r.state->size() <= kMaxStateLength ? r.state : std::nullopt});
  };
  for (const auto& [k, v] : p.values)
    if (v.size() > 1 && k != "resource")
      return fail("invalid_request", "parameter " + k + " is repeated");
  if (r.state && r.state->size() > kMaxStateLength)
    return fail("invalid_request", "state is too long");
  if (!client->AllowsGrant("authorization_code"))
    return fail("unauthorized_client", "this client may not use the authorization code grant");
  if (p.Get("request")) return fail("request_not_supported", "request objects are not supported");
  if (p.Get("request_uri"))
    return fail("request_uri_not_supported", "request_uri is not supported");

  auto response_type = p.Get("response_type");
  if (!response_type) return fail("invalid_request", "response_type is required");
  if (*response_type != "code")
    return fail("unsupported_response_type", "only response_type=code is supported");

  // PKCE (RFC 7636), S256 only (OAuth 2.1 §4.1.1; MCP requires S256). An absent method
  // means plain (RFC 7636 §4.3), which is refused like an explicit plain.
  auto challenge = p.Get("code_challenge");
  if (!challenge) return fail("invalid_request", "code_challenge is required (PKCE with S256)");
  auto method = p.Get("code_challenge_method");
  if (!method || *method != "S256")
    return fail("invalid_request", "code_challenge_method must be S256");
  if (challenge->size() != 43 ||
      !std::all_of(challenge->begin(), challenge->end(), IsBase64UrlChar))
    return fail("invalid_request",
                "code_challenge must be the base64url SHA-256 of the verifier (43 characters)");
  r.code_challenge = *challenge;

  // RFC 8707: this server protects exactly one resource.
  r.resource = rules.resource;
  auto resources = p.values.find("resource");
  if (resources != p.values.end()) {
    for (const auto& v : resources->second)
      if (v != rules.resource) return fail("invalid_target", "resource must be " + rules.resource);
  }

  auto registered = client->RegisteredScope();
  std::optional<std::set<std::string>> allowed;
  if (registered) {
    auto a = ParseScope(*registered);
    if (a) allowed = *a;
  }
  auto scope = p.Get("scope");
  if (scope && !scope->empty()) {
    auto parsed = ParseScope(*scope);
    if (!parsed) return fail("invalid_scope", parsed.error().message);
    r.scopes = *parsed;
  }
  if (r.scopes.empty()) r.scopes = allowed && !allowed->empty() ? *allowed : rules.default_scopes;
  if (allowed && !IsSubset(r.scopes, *allowed))
    return fail("invalid_scope", "the requested scope exceeds the scope this client registered");
  if (r.scopes.empty()) return fail("invalid_scope", "no scope requested");

  if (auto prompt = p.Get("prompt")) r.prompt_none = *prompt == "none";
  return std::make_pair(std::move(r), std::move(*client));
}

namespace {
// Stores a fresh authorization code for `request`, approved for `scopes`, and returns it.
// Runs inside the caller's transaction.
Result<std::string> IssueCode(store::Conn& c, Random& random, int64_t now, int64_t ttl,
                              const AuthorizationRequest& request, int64_t user_id,
                              const std::set<std::string>& scopes) {
  std::string code = random.Token(32);
  auto st = repo::InsertCode(c, {.code_hash = crypto::HashSecret(code),
                                 .client_id = request.client_id,
                                 .user_id = user_id,
                                 .redirect_uri = request.redirect_uri,
                                 .scope = JoinScope(scopes),
                                 .resource = request.resource,
                                 .code_challenge = request.code_challenge,
                                 .grant_id = random.Token(16),
                                 .created_at = now,
                                 .expires_at = now + ttl});
  if (!st) return Fail(st.error());
  return code;
}
}  // namespace

// ---------------------------------------------------------------------------------------
// The endpoint: pages and their state.

struct AuthorizationEndpoint::Pending {
  AuthorizationRequest request;
  std::string csrf_hash;
};

struct AuthorizationEndpoint::Browser {
  std::string secret;
  bool is_new = false;
};

AuthorizationEndpoint::AuthorizationEndpoint(AuthorizeServices services, AuthorizeOptions options)
    : s_(services), options_(std::move(options)), cookies_(CookieNamesFor(options_.issuer)) {}

Result<Client> AuthorizationEndpoint::LookupClient(std::string_view client_id) {
  if (IsCimdClientId(client_id)) {
    auto c = s_.cimd.Resolve(client_id);
    if (!c && c.error().code == Errc::kPermissionDenied) return Fail(Errc::kNotFound, "revoked");
    return c;
  }
  auto c = s_.clients.Find(client_id);
  if (!c) return Fail(c.error());
  if (!*c || (*c)->revoked) return Fail(Errc::kNotFound, "unknown client");
  return **c;
}

AuthorizationEndpoint::Browser AuthorizationEndpoint::BrowserOf(const http::Request& req) {
  auto v = CookieValue(req, cookies_.browser);
  if (v && v->size() >= 32 && v->size() <= 128) return {*v, false};
  return {s_.random.Token(32), true};
}

Result<std::optional<LoginSession>> AuthorizationEndpoint::SessionOf(const http::Request& req) {
  auto v = CookieValue(req, cookies_.session);
  if (!v) return std::optional<LoginSession>();
  return s_.sessions.Find(*v);
}

Result<std::optional<AuthorizationEndpoint::Pending>> AuthorizationEndpoint::FindPending(
    const http::Request& req, const std::string& handle) {
  using Out = std::optional<Pending>;
  auto browser = CookieValue(req, cookies_.browser);
  if (!browser || handle.empty() || handle.size() > 128) return Out();
  const int64_t now = s_.clock.NowUnix();
  auto row = s_.db.Read(
      [&](store::Conn& c) { return repo::FindPendingRequest(c, crypto::HashSecret(handle), now); });
  if (!row) return Fail(row.error());
  if (!*row) return Out();
  auto& r = **row;
  // Bound to the browser that started it: a handle alone is not enough.
  if (!crypto::VerifySecret(*browser, r.browser_hash)) return Out();
  Pending p;
  p.csrf_hash = std::move(r.csrf_hash);
  p.request.client_id = std::move(r.client_id);
  p.request.redirect_uri = std::move(r.redirect_uri);
  auto scopes = ParseScope(r.scope);
  if (!scopes) return Out();
  p.request.scopes = *scopes;
  p.request.resource = std::move(r.resource);
  p.request.state = std::move(r.state);
  p.request.code_challenge = std::move(r.code_challenge);
  return Out(std::move(p));
}

http::Response AuthorizationEndpoint::ErrorPage(int status, std::string_view title,
                                                std::string_view message) {
  return http::Response::Html(status, RenderErrorPage(title, message));
}

http::Response AuthorizationEndpoint::RedirectError(const AuthorizationRequest& request,
                                                    const std::string& error,
                                                    const std::string& description, int status) {
  Query params = {{"error", error}, {"error_description", description}};
  if (request.state) params.emplace_back("state", *request.state);
  params.emplace_back("iss", options_.issuer);  // RFC 9207
  http::Response r = http::Response::Empty(status);
  r.Set("Location", AppendQuery(request.redirect_uri, params));
  r.Set("Cache-Control", "no-store");
  return r;
}

namespace {
http::Response SeeOther(int status, const std::string& location) {
  http::Response r = http::Response::Empty(status);
  r.Set("Location", location);
  r.Set("Cache-Control", "no-store");
  return r;
}
}  // namespace

http::Response AuthorizationEndpoint::HandleAuthorize(const http::Request& req) {
  if (req.method != "GET") {
    auto r = ErrorPage(405, "Method not allowed", "Use GET.");
    r.Set("Allow", "GET");
    return r;
  }
  auto validated = ValidateAuthorizationRequest(
      http::ParseForm(req.query), [this](std::string_view id) { return LookupClient(id); },
      {.resource = options_.resource, .default_scopes = DefaultReadScopes()});
  if (!validated) {
    const auto& f = validated.error();
    if (!f.redirect) {
      if (f.error.error == "server_error")
        return ErrorPage(500, "Cannot authorize", "Internal error.");
      return ErrorPage(400, "Cannot authorize",
                       "The application sent a request this server cannot accept: " +
                           f.error.description + " (" + f.error.error + ")");
    }
    AuthorizationRequest target{.redirect_uri = f.redirect_uri, .state = f.state};
    return RedirectError(target, f.error.error, f.error.description, 302);
  }
  const AuthorizationRequest& request = validated->first;
  auto session = SessionOf(req);
  if (!session) return ErrorPage(500, "Error", "Internal error.");

  if (request.prompt_none) {
    // A silent request that needs the person is redirected only to an operator-made
    // client; anyone could have registered the others' redirect URIs (RFC 9700 §4.11.2).
    auto silent_failure = [&](const std::string& error, const std::string& description) {
      if (request.redirect_errors) return RedirectError(request, error, description, 302);
      return ErrorPage(400, "Cannot authorize",
                       "The application asked to be authorized without showing you anything, "
                       "but " +
                           description + " (" + error +
                           "). Go back to the application and try again.");
    };
    if (!*session) return silent_failure("login_required", "you are not signed in");
    auto covered = s_.consents.Covers(request.client_id, (*session)->user_id, request.scopes);
    if (!covered) return ErrorPage(500, "Error", "Internal error.");
    if (!*covered) return silent_failure("consent_required", "you have not allowed it yet");
    return Approve(request, std::nullopt, (*session)->user_id, request.scopes, false);
  }

  Browser browser = BrowserOf(req);
  std::string handle = s_.random.Token(32);
  const int64_t now = s_.clock.NowUnix();
  auto st = s_.db.Write([&](store::Conn& c) -> Status {
    if (auto d = repo::DeleteExpiredRequests(c, now); !d) return Fail(d.error());
    return repo::InsertPendingRequest(c, {.id_hash = crypto::HashSecret(handle),
                                          .browser_hash = crypto::HashSecret(browser.secret),
                                          .csrf_hash = crypto::HashSecret(s_.random.Token(24)),
                                          .client_id = request.client_id,
                                          .redirect_uri = request.redirect_uri,
                                          .scope = JoinScope(request.scopes),
                                          .resource = request.resource,
                                          .state = request.state,
                                          .code_challenge = request.code_challenge,
                                          .created_at = now,
                                          .expires_at = now + options_.pending_ttl});
  });
  if (!st) return ErrorPage(500, "Error", "Internal error.");
  std::string next = *session ? "/oauth/consent" : "/oauth/login";
  auto r = SeeOther(302, options_.issuer + next + "?request=" + http::PercentEncode(handle));
  if (browser.is_new)
    r.headers.emplace_back("Set-Cookie",
                           SetCookie(cookies_.browser, browser.secret, cookies_.secure, -1));
  return r;
}

http::Response AuthorizationEndpoint::LoginForm(int status, const Pending& pending,
                                                const std::string& handle, const std::string& email,
                                                const std::string& error) {
  // A fresh CSRF token per rendering; only its hash is kept.
  std::string csrf = s_.random.Token(24);
  auto st = s_.db.Write([&](store::Conn& c) {
    return repo::SetPendingCsrfHash(c, crypto::HashSecret(handle), crypto::HashSecret(csrf));
  });
  if (!st) return ErrorPage(500, "Error", "Internal error.");
  auto client = s_.clients.Find(pending.request.client_id);
  std::string name = client && *client ? (*client)->DisplayName() : pending.request.client_id;
  return http::Response::Html(status, RenderLoginPage({.client_name = name,
                                                       .request = handle,
                                                       .csrf_token = csrf,
                                                       .email = email,
                                                       .error = error}));
}

http::Response AuthorizationEndpoint::HandleLogin(const http::Request& req) {
  if (req.method == "POST") return PostLogin(req);
  if (req.method != "GET") {
    auto r = ErrorPage(405, "Method not allowed", "Use GET or POST.");
    r.Set("Allow", "GET, POST");
    return r;
  }
  std::string handle = http::FormValue(http::ParseForm(req.query), "request").value_or("");
  auto pending = FindPending(req, handle);
  if (!pending) return ErrorPage(500, "Error", "Internal error.");
  if (!*pending)
    return ErrorPage(
        400, "Sign-in expired",
        "This sign-in page has expired or was opened in another browser. Go back to the "
        "application and start again.");
  auto session = SessionOf(req);
  if (session && *session)
    return SeeOther(302, options_.issuer + "/oauth/consent?request=" + http::PercentEncode(handle));
  return LoginForm(200, **pending, handle, "", "");
}

http::Response AuthorizationEndpoint::PostLogin(const http::Request& req) {
  if (!OriginAllowed(req, options_.issuer, options_.allowed_origins))
    return ErrorPage(403, "Forbidden", "This form was sent from another site.");
  auto form = http::ParseForm(req.body);
  std::string handle = http::FormValue(form, "request").value_or("");
  auto pending = FindPending(req, handle);
  if (!pending) return ErrorPage(500, "Error", "Internal error.");
  if (!*pending)
    return ErrorPage(
        400, "Sign-in expired",
        "This sign-in page has expired or was opened in another browser. Go back to the "
        "application and start again.");
  auto csrf = http::FormValue(form, "csrf_token");
  if (!csrf || csrf->empty() || !crypto::VerifySecret(*csrf, (*pending)->csrf_hash))
    return ErrorPage(403, "Forbidden", "The form has expired. Reload the page and try again.");

  std::string email = http::FormValue(form, "email").value_or("");
  std::string password = http::FormValue(form, "password").value_or("");
  auto permit = s_.throttle.Reserve(email, req.remote_ip);
  if (!permit) return ErrorPage(500, "Error", "Internal error.");
  if (!permit->allowed) {
    auto r = LoginForm(429, **pending, handle, email, TooManySignInAttempts(permit->retry_after));
    r.Set("Retry-After", std::to_string(permit->retry_after));
    return r;
  }
  auto user = s_.users.Verify(email, password);
  if (!user) {
    if (user.error().code != Errc::kUnauthenticated)
      return ErrorPage(500, "Error", "Internal error.");
    return LoginForm(401, **pending, handle, email, "Invalid email or password.");
  }
  if (!s_.throttle.Succeeded(*permit)) return ErrorPage(500, "Error", "Internal error.");
  // A new session on every sign-in: a session id planted before login is never promoted.
  if (auto old = CookieValue(req, cookies_.session)) (void)s_.sessions.Delete(*old);
  auto secret = s_.sessions.Create(user->id);
  if (!secret) return ErrorPage(500, "Error", "Internal error.");
  auto r = SeeOther(303, options_.issuer + "/oauth/consent?request=" + http::PercentEncode(handle));
  r.headers.emplace_back("Set-Cookie",
                         SetCookie(cookies_.session, *secret, cookies_.secure, s_.sessions.ttl()));
  return r;
}

http::Response AuthorizationEndpoint::HandleConsent(const http::Request& req) {
  if (req.method == "POST") return PostConsent(req);
  if (req.method != "GET") {
    auto r = ErrorPage(405, "Method not allowed", "Use GET or POST.");
    r.Set("Allow", "GET, POST");
    return r;
  }
  std::string handle = http::FormValue(http::ParseForm(req.query), "request").value_or("");
  auto pending = FindPending(req, handle);
  if (!pending) return ErrorPage(500, "Error", "Internal error.");
  if (!*pending)
    return ErrorPage(
        400, "Request expired",
        "This authorization request has expired or was opened in another browser. Go back "
        "to the application and start again.");
  auto session = SessionOf(req);
  if (!session) return ErrorPage(500, "Error", "Internal error.");
  if (!*session)
    return SeeOther(302, options_.issuer + "/oauth/login?request=" + http::PercentEncode(handle));
  const AuthorizationRequest& request = (*pending)->request;
  auto client = LookupClient(request.client_id);
  if (!client)
    return ErrorPage(400, "Cannot authorize", "The application is no longer registered.");
  auto covered = s_.consents.Covers(request.client_id, (*session)->user_id, request.scopes);
  if (!covered) return ErrorPage(500, "Error", "Internal error.");
  if (*covered) return Approve(request, handle, (*session)->user_id, request.scopes, false);
  auto user = s_.users.FindById((*session)->user_id);
  if (!user || !*user) return ErrorPage(500, "Error", "Internal error.");
  // Only what the person's role allows is offered (and only that is granted: Approve).
  std::set<std::string> capped = CapScopes(request.scopes, (*user)->role);
  if (capped.empty())
    return ErrorPage(403, "Cannot authorize",
                     "Your role (" + std::string(RoleName((*user)->role)) +
                         ") allows none of the access this application asks for. Ask an "
                         "administrator.");
  std::vector<std::string> offered(capped.begin(), capped.end());
  return http::Response::Html(200, RenderConsentPage({.client_name = client->DisplayName(),
                                                      .client_id = client->client_id,
                                                      .redirect_host = HostOf(request.redirect_uri),
                                                      .user_email = (*user)->email,
                                                      .request = handle,
                                                      .csrf_token = (*session)->csrf_token,
                                                      .scopes = std::move(offered)}));
}

http::Response AuthorizationEndpoint::PostConsent(const http::Request& req) {
  if (!OriginAllowed(req, options_.issuer, options_.allowed_origins))
    return ErrorPage(403, "Forbidden", "This form was sent from another site.");
  auto form = http::ParseForm(req.body);
  std::string handle = http::FormValue(form, "request").value_or("");
  auto pending = FindPending(req, handle);
  if (!pending) return ErrorPage(500, "Error", "Internal error.");
  if (!*pending)
    return ErrorPage(
        400, "Request expired",
        "This authorization request has expired or was opened in another browser. Go back "
        "to the application and start again.");
  auto session = SessionOf(req);
  if (!session) return ErrorPage(500, "Error", "Internal error.");
  if (!*session)
    return SeeOther(303, options_.issuer + "/oauth/login?request=" + http::PercentEncode(handle));
  if (!CsrfTokenMatches(http::FormValue(form, "csrf_token"), (*session)->csrf_token))
    return ErrorPage(403, "Forbidden", "The form has expired. Reload the page and try again.");

  const AuthorizationRequest& request = (*pending)->request;
  std::string decision = http::FormValue(form, "decision").value_or("");
  std::set<std::string> approved;
  if (decision == "allow") {
    // Only narrowing: a scope that was not requested cannot be added by editing the form.
    for (const auto& [k, v] : form)
      if (k == "scope" && request.scopes.count(v)) approved.insert(v);
  } else if (decision != "deny") {
    return ErrorPage(400, "Bad request", "Choose Allow or Deny.");
  }
  if (approved.empty()) {
    auto st = s_.db.Write(
        [&](store::Conn& c) { return repo::ConsumePendingRequest(c, crypto::HashSecret(handle)); });
    if (!st) return ErrorPage(500, "Error", "Internal error.");
    return RedirectError(request, "access_denied", "the person denied the request", 303);
  }
  return Approve(request, handle, (*session)->user_id, approved, true);
}

http::Response AuthorizationEndpoint::Approve(const AuthorizationRequest& request,
                                              const std::optional<std::string>& handle,
                                              int64_t user_id, const std::set<std::string>& scopes,
                                              bool remember) {
  const int64_t now = s_.clock.NowUnix();
  auto code = s_.db.Write([&](store::Conn& c) -> Result<std::string> {
    // Consent never grants beyond the person's role (auth/roles.h), whatever was asked,
    // remembered or ticked.
    auto user = repo::FindUserById(c, user_id);
    if (!user) return Fail(user.error());
    if (!*user || !(*user)->active()) return Fail(Errc::kUnauthenticated, "access ended");
    std::set<std::string> allowed = CapScopes(scopes, (*user)->role);
    if (allowed.empty()) return Fail(Errc::kPermissionDenied, "beyond the role");
    if (handle) {
      // Consuming the pending request in the same transaction makes a double submit
      // produce at most one code.
      auto n = repo::ConsumePendingRequest(c, crypto::HashSecret(*handle));
      if (!n) return Fail(n.error());
      if (*n == 0) return Fail(Errc::kNotFound, "request already used");
    }
    if (remember)
      if (auto st = repo::UpsertConsent(c, request.client_id, user_id, JoinScope(allowed), now);
          !st)
        return Fail(st.error());
    return IssueCode(c, s_.random, now, options_.auth_code_ttl, request, user_id, allowed);
  });
  if (!code) {
    if (code.error().code == Errc::kNotFound)
      return ErrorPage(400, "Request expired", "This authorization request was already completed.");
    if (code.error().code == Errc::kUnauthenticated)
      return ErrorPage(403, "Cannot authorize", "This account cannot sign in.");
    if (code.error().code == Errc::kPermissionDenied)
      return RedirectError(request, "access_denied",
                           "the person's role allows none of the requested scopes",
                           handle && remember ? 303 : 302);
    return ErrorPage(500, "Error", "Internal error.");
  }
  Query params = {{"code", *code}};
  if (request.state) params.emplace_back("state", *request.state);
  params.emplace_back("iss", options_.issuer);
  return SeeOther(handle && remember ? 303 : 302, AppendQuery(request.redirect_uri, params));
}

}  // namespace crmd::auth
