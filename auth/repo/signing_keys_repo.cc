#include "auth/repo/signing_keys_repo.h"

namespace crmd::auth::repo {

Result<std::optional<ActiveKeyRow>> NewestActiveKey(store::Conn& c) {
  auto row = c.QueryOne(
      "SELECT kid, private_pem, created_at FROM signing_keys WHERE retired_at IS NULL "
      "ORDER BY created_at DESC, kid LIMIT 1");
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<ActiveKeyRow>();
  return std::optional<ActiveKeyRow>(ActiveKeyRow{(*row)->Str(0), (*row)->Str(1), (*row)->Int(2)});
}

Status RetireActiveKeys(store::Conn& c, int64_t now, int64_t expires_at) {
  auto retired =
      c.Exec("UPDATE signing_keys SET retired_at = ?, expires_at = ? WHERE retired_at IS NULL",
             {now, expires_at});
  if (!retired) return Fail(retired.error());
  return Ok();
}

Status InsertSigningKey(store::Conn& c, const std::string& kid, const std::string& private_pem,
                        const std::string& public_jwk, int64_t now) {
  auto ins = c.Exec(
      "INSERT INTO signing_keys (kid, private_pem, public_jwk, created_at) VALUES (?, ?, ?, ?)",
      {kid, private_pem, public_jwk, now});
  if (!ins) return Fail(ins.error());
  return Ok();
}

Result<std::vector<TrustedKeyRow>> TrustedKeys(store::Conn& c, int64_t now) {
  auto rows = c.Query(
      "SELECT kid, private_pem, expires_at FROM signing_keys "
      "WHERE expires_at IS NULL OR expires_at > ?",
      {now});
  if (!rows) return Fail(rows.error());
  std::vector<TrustedKeyRow> out;
  for (const auto& r : *rows) out.push_back({r.Str(0), r.Str(1), r.OptInt(2)});
  return out;
}

Result<std::vector<std::string>> PublishedJwks(store::Conn& c, int64_t now) {
  auto rows = c.Query(
      "SELECT public_jwk FROM signing_keys WHERE expires_at IS NULL OR expires_at > ? "
      "ORDER BY created_at DESC, kid",
      {now});
  if (!rows) return Fail(rows.error());
  std::vector<std::string> out;
  for (const auto& r : *rows) out.push_back(r.Str(0));
  return out;
}

}  // namespace crmd::auth::repo
