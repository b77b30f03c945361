#include "auth/login_session.h"

#include "auth/repo/login_sessions_repo.h"
#include "src/core/crypto.h"

namespace crmd::auth {

std::optional<std::string> CookieValue(const http::Request& req, std::string_view name) {
  for (const auto& [k, v] : req.headers) {
    if (!http::IEquals(k, "Cookie")) continue;
    std::string_view s = v;
    while (!s.empty()) {
      size_t semi = s.find(';');
      std::string_view pair = s.substr(0, semi);
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      size_t eq = pair.find('=');
      if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
        std::string_view value = pair.substr(eq + 1);
        while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
        if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
          value = value.substr(1, value.size() - 2);
        return std::string(value);
      }
      if (semi == std::string_view::npos) break;
      s.remove_prefix(semi + 1);
    }
  }
  return std::nullopt;
}

CookieNames CookieNamesFor(std::string_view issuer) {
  bool secure = issuer.substr(0, 8) == "https://";
  if (secure) return {"__Host-crmd_session", "__Host-crmd_browser", true};
  return {"crmd_session", "crmd_browser", false};
}

std::string SetCookie(std::string_view name, std::string_view value, bool secure, int64_t max_age) {
  std::string out =
      std::string(name) + "=" + std::string(value) + "; Path=/; HttpOnly; SameSite=Lax";
  if (secure) out += "; Secure";
  if (max_age >= 0) out += "; Max-Age=" + std::to_string(max_age);
  return out;
}

Result<std::string> LoginSessions::Create(int64_t user_id, LoginSession* out) {
  std::string secret = random_.Token(32);
  LoginSession s{.id_hash = crypto::HashSecret(secret),
                 .user_id = user_id,
                 .csrf_token = random_.Token(24),
                 .created_at = clock_.NowUnix(),
                 .expires_at = clock_.NowUnix() + ttl_s_};
  auto r = db_.Write([&](store::Conn& c) -> Status {
    // Expired sessions are swept here rather than by a background job.
    if (auto d = repo::DeleteExpiredSessions(c, s.created_at); !d) return Fail(d.error());
    return repo::InsertSession(c, s);
  });
  if (!r) return Fail(r.error());
  if (out) *out = s;
  return secret;
}

Result<std::optional<LoginSession>> LoginSessions::Find(std::string_view secret) {
  if (secret.empty() || secret.size() > 256) return std::optional<LoginSession>();
  std::string hash = crypto::HashSecret(secret);
  const int64_t now = clock_.NowUnix();
  return db_.Read([&](store::Conn& c) { return repo::FindLiveSession(c, hash, now); });
}

Status LoginSessions::Delete(std::string_view secret) {
  std::string hash = crypto::HashSecret(secret);
  return db_.Write([&](store::Conn& c) { return repo::DeleteSession(c, hash); });
}

Status LoginSessions::DeleteAllOf(int64_t user_id) {
  return db_.Write([&](store::Conn& c) { return repo::DeleteSessionsOf(c, user_id); });
}

}  // namespace crmd::auth
