#include "auth/repo/login_sessions_repo.h"

namespace crmd::auth::repo {

Result<int64_t> DeleteExpiredSessions(store::Conn& c, int64_t now) {
  return c.Exec("DELETE FROM login_sessions WHERE expires_at <= ?", {now});
}

Status InsertSession(store::Conn& c, const LoginSession& s) {
  return Discard(
      c.Exec("INSERT INTO login_sessions (id_hash, user_id, csrf_token, created_at, expires_at) "
             "VALUES (?, ?, ?, ?, ?)",
             {s.id_hash, s.user_id, s.csrf_token, s.created_at, s.expires_at}));
}

Result<std::optional<LoginSession>> FindLiveSession(store::Conn& c, const std::string& id_hash,
                                                    int64_t now) {
  // Looked up by the hash of a 256-bit secret: a timing difference in the index lookup
  // reveals nothing useful about the secret itself.
  auto row = c.QueryOne(
      "SELECT id_hash, user_id, csrf_token, created_at, expires_at FROM login_sessions "
      "WHERE id_hash = ? AND expires_at > ?",
      {id_hash, now});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<LoginSession>();
  const auto& r = **row;
  return LoginSession{.id_hash = r.Str(0),
                      .user_id = r.Int(1),
                      .csrf_token = r.Str(2),
                      .created_at = r.Int(3),
                      .expires_at = r.Int(4)};
}

Status DeleteSession(store::Conn& c, const std::string& id_hash) {
  return Discard(c.Exec("DELETE FROM login_sessions WHERE id_hash = ?", {id_hash}));
}

Status DeleteSessionsOf(store::Conn& c, int64_t user_id) {
  return Discard(c.Exec("DELETE FROM login_sessions WHERE user_id = ?", {user_id}));
}

}  // namespace crmd::auth::repo
