#include "src/governance/idempotency_repo.h"

#include "src/core/crypto.h"

namespace crmd::governance::idempotency_repo {

Result<std::optional<nlohmann::json>> Find(store::Conn& c, const std::string& scope,
                                           const std::string& key, int64_t created_after) {
  auto row = c.QueryOne(
      "SELECT response FROM idempotency_keys WHERE scope = ? AND key_hash = ? AND created_at > ?",
      {scope, crypto::Sha256Hex(key), created_after});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<nlohmann::json>{};
  auto j = nlohmann::json::parse((*row)->Str(0), nullptr, false);
  if (j.is_discarded()) return std::optional<nlohmann::json>{};
  return std::optional<nlohmann::json>(std::move(j));
}

Status Remember(store::Conn& c, const std::string& scope, const std::string& key,
                const nlohmann::json& answer, int64_t now) {
  // An expired row with the same key is replaced: the window has passed.
  auto r = c.Exec(
      "INSERT INTO idempotency_keys (scope, key_hash, response, created_at) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (scope, key_hash) DO UPDATE SET response = excluded.response, "
      "created_at = excluded.created_at",
      {scope, crypto::Sha256Hex(key), answer.dump(), now});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<int64_t> DeleteCreatedBefore(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM idempotency_keys WHERE created_at <= ?", {cutoff});
}

}  // namespace crmd::governance::idempotency_repo
