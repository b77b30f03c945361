#include "auth/repo/codes_repo.h"

namespace crmd::auth::repo {

Status InsertCode(store::Conn& c, const CodeRow& code) {
  auto r = c.Exec(
      "INSERT INTO auth_codes (code_hash, client_id, user_id, redirect_uri, scope, resource, "
      "code_challenge, grant_id, created_at, expires_at, redeemed_at) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
      {code.code_hash, code.client_id, code.user_id, code.redirect_uri, code.scope, code.resource,
       code.code_challenge, code.grant_id, code.created_at, code.expires_at});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::optional<CodeRow>> FindCode(store::Conn& c, const std::string& code_hash) {
  auto r = c.QueryOne(
      "SELECT client_id, user_id, redirect_uri, scope, resource, code_challenge, grant_id, "
      "expires_at, redeemed_at FROM auth_codes WHERE code_hash = ?",
      {code_hash});
  if (!r) return Fail(r.error());
  if (!*r) return std::optional<CodeRow>();
  const auto& x = **r;
  return std::optional<CodeRow>(CodeRow{.code_hash = code_hash,
                                        .client_id = x.Str(0),
                                        .user_id = x.Int(1),
                                        .redirect_uri = x.Str(2),
                                        .scope = x.Str(3),
                                        .resource = x.Str(4),
                                        .code_challenge = x.Str(5),
                                        .grant_id = x.Str(6),
                                        .expires_at = x.Int(7),
                                        .redeemed_at = x.OptInt(8)});
}

Result<bool> RedeemCode(store::Conn& c, const std::string& code_hash, int64_t now) {
  auto claimed =
      c.Exec("UPDATE auth_codes SET redeemed_at = ? WHERE code_hash = ? AND redeemed_at IS NULL",
             {now, code_hash});
  if (!claimed) return Fail(claimed.error());
  return *claimed == 1;
}

Status DeleteUnredeemedCodes(store::Conn& c, std::string_view client_id,
                             std::optional<int64_t> user_id) {
  std::string cid(client_id);
  auto codes =
      user_id ? c.Exec(
                    "DELETE FROM auth_codes WHERE client_id = ? AND user_id = ? AND "
                    "redeemed_at IS NULL",
                    {cid, *user_id})
              : c.Exec("DELETE FROM auth_codes WHERE client_id = ? AND redeemed_at IS NULL", {cid});
  if (!codes) return Fail(codes.error());
  return Ok();
}

Status DeleteUnredeemedCodesOfUser(store::Conn& c, int64_t user_id) {
  auto n = c.Exec("DELETE FROM auth_codes WHERE user_id = ? AND redeemed_at IS NULL", {user_id});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<int64_t> DeleteCodesExpiredBy(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM auth_codes WHERE expires_at <= ?", {cutoff});
}

}  // namespace crmd::auth::repo
