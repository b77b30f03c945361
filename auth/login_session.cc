#include "auth/login_session.h"

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
  std::string out = std::string(name) + "=" + std::string(value) + "; Path=/; HttpOnly; SameSite=Lax";
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
  auto r = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    // Expired sessions are swept here rather than by a background job.
    if (auto d = c.Exec("DELETE FROM login_sessions WHERE expires_at <= ?", {s.created_at}); !d) return d;
    return c.Exec(
        "INSERT INTO login_sessions (id_hash, user_id, csrf_token, created_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?)",
        {s.id_hash, s.user_id, s.csrf_token, s.created_at, s.expires_at});
  });
  if (!r) return Fail(r.error());
  if (out) *out = s;
  return secret;
}

Result<std::optional<LoginSession>> LoginSessions::Find(std::string_view secret) {
  if (secret.empty() || secret.size() > 256) return std::optional<LoginSession>();
  std::string hash = crypto::HashSecret(secret);
  const int64_t now = clock_.NowUnix();
  return db_.Read([&](store::Conn& c) -> Result<std::optional<LoginSession>> {
    // Looked up by the hash of a 256-bit secret: a timing difference in the index lookup
    // reveals nothing useful about the secret itself.
    auto row = c.QueryOne(
        "SELECT id_hash, user_id, csrf_token, created_at, expires_at FROM login_sessions "
        "WHERE id_hash = ? AND expires_at > ?",
        {hash, now});
    if (!row) return Fail(row.error());
    if (!*row) return std::optional<LoginSession>();
    const auto& r = **row;
    return LoginSession{.id_hash = r.Str(0),
                        .user_id = r.Int(1),
                        .csrf_token = r.Str(2),
                        .created_at = r.Int(3),
                        .expires_at = r.Int(4)};
  });
}

Status LoginSessions::Delete(std::string_view secret) {
  std::string hash = crypto::HashSecret(secret);
  auto r = db_.Write([&](store::Conn& c) { return c.Exec("DELETE FROM login_sessions WHERE id_hash = ?", {hash}); });
  if (!r) return Fail(r.error());
  return Ok();
}

Status LoginSessions::DeleteAllOf(int64_t user_id) {
  auto r = db_.Write([&](store::Conn& c) { return c.Exec("DELETE FROM login_sessions WHERE user_id = ?", {user_id}); });
  if (!r) return Fail(r.error());
  return Ok();
}

}  // namespace crmd::auth
