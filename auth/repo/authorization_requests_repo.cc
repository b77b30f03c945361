#include "auth/repo/authorization_requests_repo.h"

namespace crmd::auth::repo {

Result<int64_t> DeleteExpiredRequests(store::Conn& c, int64_t now) {
  return c.Exec("DELETE FROM authorization_requests WHERE expires_at <= ?", {now});
}

Status InsertPendingRequest(store::Conn& c, const PendingRequestRow& r) {
  auto ins = c.Exec(
      "INSERT INTO authorization_requests (id_hash, browser_hash, csrf_hash, client_id, "
      "redirect_uri, scope, resource, state, code_challenge, created_at, expires_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {r.id_hash, r.browser_hash, r.csrf_hash, r.client_id, r.redirect_uri, r.scope, r.resource,
       store::Opt(r.state), r.code_challenge, r.created_at, r.expires_at});
  if (!ins) return Fail(ins.error());
  return Ok();
}

Result<std::optional<PendingRequestRow>> FindPendingRequest(store::Conn& c,
                                                            const std::string& id_hash,
                                                            int64_t now) {
  auto row = c.QueryOne(
      "SELECT browser_hash, csrf_hash, client_id, redirect_uri, scope, resource, state, "
      "code_challenge FROM authorization_requests WHERE id_hash = ? AND expires_at > ?",
      {id_hash, now});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<PendingRequestRow>();
  const auto& r = **row;
  return std::optional<PendingRequestRow>(PendingRequestRow{.id_hash = id_hash,
                                                            .browser_hash = r.Str(0),
                                                            .csrf_hash = r.Str(1),
                                                            .client_id = r.Str(2),
                                                            .redirect_uri = r.Str(3),
                                                            .scope = r.Str(4),
                                                            .resource = r.Str(5),
                                                            .state = r.OptStr(6),
                                                            .code_challenge = r.Str(7)});
}

Status SetPendingCsrfHash(store::Conn& c, const std::string& id_hash,
                          const std::string& csrf_hash) {
  auto r = c.Exec("UPDATE authorization_requests SET csrf_hash = ? WHERE id_hash = ?",
                  {csrf_hash, id_hash});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<int64_t> ConsumePendingRequest(store::Conn& c, const std::string& id_hash) {
  return c.Exec("DELETE FROM authorization_requests WHERE id_hash = ?", {id_hash});
}

}  // namespace crmd::auth::repo
