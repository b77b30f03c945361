#pragma once
// Browser login sessions for the authorization pages, and the cookies that carry them.
//
// Cookie names: over https (issuer starts with https://) the session cookie is
// "__Host-crmd_session" with Secure; over plain http on loopback the __Host- prefix is
// unusable (browsers require Secure for it), so the name is "crmd_session". Both are
// HttpOnly, SameSite=Lax, Path=/. The same rule names the pre-login browser cookie
// ("__Host-crmd_browser" / "crmd_browser") that binds a pending authorization request
// to the browser that started it.
//
// The cookie holds a random secret; the table keeps only its hash. Thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/clock.h"
#include "src/core/http_types.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

// Value of the first cookie named `name` in the request's Cookie headers.
std::optional<std::string> CookieValue(const http::Request& req, std::string_view name);

struct CookieNames {
  std::string session;
  std::string browser;
  bool secure = false;
};
// Names and the Secure flag for an issuer URL (see above).
CookieNames CookieNamesFor(std::string_view issuer);

// A Set-Cookie value: HttpOnly; SameSite=Lax; Path=/; [Secure;] [Max-Age=n]. A negative
// max_age omits Max-Age (a browser-session cookie); zero deletes the cookie.
std::string SetCookie(std::string_view name, std::string_view value, bool secure, int64_t max_age);

struct LoginSession {
  std::string id_hash;
  int64_t user_id = 0;
  std::string csrf_token;  // protects the consent form (compared in constant time)
  int64_t created_at = 0;
  int64_t expires_at = 0;
};

class LoginSessions {
 public:
  static constexpr int64_t kDefaultTtl = 8 * 3600;

  LoginSessions(store::Database& db, const Clock& clock, Random& random,
                int64_t ttl_s = kDefaultTtl)
      : db_(db), clock_(clock), random_(random), ttl_s_(ttl_s) {}
  LoginSessions(const LoginSessions&) = delete;
  LoginSessions& operator=(const LoginSessions&) = delete;

  int64_t ttl() const { return ttl_s_; }
  // Starts a session; returns the secret for the cookie.
  Result<std::string> Create(int64_t user_id, LoginSession* out = nullptr);
  // The live session for a cookie secret, or nullopt (unknown or expired).
  Result<std::optional<LoginSession>> Find(std::string_view secret);
  Status Delete(std::string_view secret);
  // Ends every session of a user (e.g. after a password change).
  Status DeleteAllOf(int64_t user_id);

 private:
  store::Database& db_;
  const Clock& clock_;
  Random& random_;
  const int64_t ttl_s_;
};

}  // namespace crmd::auth
