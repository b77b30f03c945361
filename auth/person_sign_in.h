#pragma once
// Signing a person in outside an authorization request (the console's approval pages):
// the same accounts (Users), the same login sessions and cookie (LoginSessions,
// CookieNamesFor), and the same throttle of failed sign-ins (SignInThrottle) as the OAuth
// login page. A new session on every sign-in, so a session id
// planted before login is never promoted. Thread-safe (state is in the database).
//
// Login CSRF: the sign-in form carries a token that must equal a cookie set with the form
// (a double-submit token, "__Host-crmd_login" over https, "crmd_login" on plain http,
// HttpOnly, SameSite=Strict), so another site cannot sign a browser into an account of
// its choosing; a foreign Origin is refused as well.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "auth/login_session.h"
#include "auth/sign_in_throttle.h"
#include "auth/users.h"
#include "src/core/http_types.h"
#include "src/core/random.h"
#include "src/core/result.h"

namespace crmd::auth {

struct SignedIn {
  User user;
  LoginSession session;
};

struct SignInAttempt {
  std::optional<User> user;  // set on success
  int status = 200;          // 401 wrong credentials, 429 rate limited, 500
  std::string error;         // for the person, when !user
  int64_t retry_after = 0;   // with 429
  std::vector<std::string> set_cookies;
};

// The sign-in form's token and the cookie that carries its twin.
struct LoginFormToken {
  std::string token;
  std::string set_cookie;
};

struct PersonSignInOptions {
  std::string issuer;
  std::vector<std::string> allowed_origins;
};

class PersonSignIn {
 public:
  PersonSignIn(Users& users, LoginSessions& sessions, SignInThrottle& throttle, Random& random,
               PersonSignInOptions options);
  PersonSignIn(const PersonSignIn&) = delete;
  PersonSignIn& operator=(const PersonSignIn&) = delete;

  // The person of the request's session cookie (live session, existing user), or nullopt.
  Result<std::optional<SignedIn>> Current(const http::Request& req);
  // Checks the password (throttled: SignInThrottle) and starts a session.
  SignInAttempt SignIn(const http::Request& req, const std::string& email,
                       const std::string& password);
  // False when a POST carries a foreign Origin (OriginAllowed, csrf.h).
  bool OriginAllowed(const http::Request& req) const;
  // Ends the request's session (if any); the Set-Cookie values that clear the cookie.
  std::vector<std::string> SignOut(const http::Request& req);
  // A fresh token for the sign-in form, reusing the browser's login cookie when it has one.
  LoginFormToken IssueLoginFormToken(const http::Request& req);
  // True when `presented` is non-empty and equals the request's login cookie (constant time).
  bool LoginFormTokenValid(const http::Request& req, const std::string& presented) const;

 private:
  Users& users_;
  LoginSessions& sessions_;
  SignInThrottle& throttle_;
  Random& random_;
  const PersonSignInOptions options_;
  const CookieNames cookies_;
  const std::string login_cookie_;
};

}  // namespace crmd::auth
