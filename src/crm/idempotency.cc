#include "src/crm/idempotency.h"

#include "src/core/crypto.h"

namespace crmd::crm {

std::string IdempotencyScope(const Actor& actor, const std::string& operation) {
  // "Same client": the OAuth client for tools, else the actor's own identity.
  const std::string& who = actor.client_id.empty() ? actor.subject : actor.client_id;
  return actor.kind + ":" + who + ":" + operation;
}

Result<std::optional<nlohmann::json>> IdempotencyStore::Find(store::Conn& conn,
                                                             const std::string& scope,
                                                             const std::string& key) {
  auto row = conn.QueryOne(
      "SELECT response FROM idempotency_keys WHERE scope = ? AND key_hash = ? AND created_at > ?",
      {scope, crypto::Sha256Hex(key), clock_->NowUnix() - kIdempotencyWindowSeconds});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<nlohmann::json>{};
  auto j = nlohmann::json::parse((*row)->Str(0), nullptr, false);
  if (j.is_discarded()) return std::optional<nlohmann::json>{};
  return std::optional<nlohmann::json>(std::move(j));
}

Status IdempotencyStore::Remember(store::Conn& conn, const std::string& scope,
                                  const std::string& key, const nlohmann::json& response) {
  // An expired row with the same key is replaced: the window has passed.
  auto r = conn.Exec(
      "INSERT INTO idempotency_keys (scope, key_hash, response, created_at) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (scope, key_hash) DO UPDATE SET response = excluded.response, "
      "created_at = excluded.created_at",
      {scope, crypto::Sha256Hex(key), response.dump(), clock_->NowUnix()});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<int64_t> IdempotencyStore::Purge(store::Conn& conn) {
  return conn.Exec("DELETE FROM idempotency_keys WHERE created_at <= ?",
                   {clock_->NowUnix() - kIdempotencyWindowSeconds});
}

Result<nlohmann::json> IdempotencyStore::Once(store::Conn& conn, const std::string& scope,
                                              const std::string& key,
                                              const std::function<Result<nlohmann::json>()>& first) {
  if (!key.empty()) {
    auto seen = Find(conn, scope, key);
    if (!seen) return Fail(seen.error());
    if (*seen) return std::move(**seen);
  }
  auto answer = first();
  if (!answer || key.empty()) return answer;
  if (auto st = Remember(conn, scope, key, *answer); !st) return Fail(st.error());
  return answer;
}

}  // namespace crmd::crm
