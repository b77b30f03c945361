#include "src/governance/api_keys_repo.h"

namespace crmd::governance::api_keys_repo {
namespace {

// The columns FromRow reads, in order, spelled out in each statement.

ApiKey FromRow(const store::Row& r) {
  ApiKey k;
  k.id = r.Int(0);
  k.name = r.Str(1);
  k.prefix = r.Str(2);
  k.role = ParseApiKeyRole(r.Str(3)).value_or(ApiKeyRole::kIntegration);
  k.enabled = r.Str(4) == "enabled";
  k.created_at = r.Int(5);
  k.last_used_at = r.OptInt(6);
  return k;
}

}  // namespace

Result<int64_t> Insert(store::Conn& c, const std::string& name, const std::string& prefix,
                       const std::string& secret_hash, ApiKeyRole role, int64_t created_at) {
  return c.InsertReturningId(
      "INSERT INTO api_keys (id, name, prefix, secret_hash, role, status, created_at) "
      "VALUES (" +
          store::NextIdSql("api_keys") + ", ?, ?, ?, ?, 'enabled', ?) RETURNING id",
      {name, prefix, secret_hash, std::string(ApiKeyRoleName(role)), created_at});
}

Result<std::vector<ApiKey>> List(store::Conn& c) {
  auto rows = c.Query(
      "SELECT id, name, prefix, role, status, created_at, last_used_at FROM api_keys ORDER BY id");
  if (!rows) return Fail(rows.error());
  std::vector<ApiKey> out;
  for (auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<std::optional<ApiKey>> Find(store::Conn& c, int64_t id) {
  auto row = c.QueryOne(
      "SELECT id, name, prefix, role, status, created_at, last_used_at FROM api_keys WHERE id = ?",
      {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<ApiKey>{};
  return std::optional<ApiKey>(FromRow(**row));
}

Result<std::optional<KeyWithHash>> FindByPrefix(store::Conn& c, const std::string& prefix) {
  auto row = c.QueryOne(
      "SELECT id, name, prefix, role, status, created_at, last_used_at, secret_hash "
      "FROM api_keys WHERE prefix = ?",
      {prefix});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<KeyWithHash>{};
  return std::optional<KeyWithHash>(KeyWithHash{FromRow(**row), (*row)->Str(7)});
}

Result<bool> SetEnabled(store::Conn& c, int64_t id, bool enabled) {
  auto n = c.Exec("UPDATE api_keys SET status = ? WHERE id = ?",
                  {std::string(enabled ? "enabled" : "disabled"), id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Result<bool> Delete(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM api_keys WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Status TouchLastUsed(store::Conn& c, int64_t id, int64_t now, int64_t resolution) {
  auto n = c.Exec(
      "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND "
      "(last_used_at IS NULL OR last_used_at <= ?)",
      {now, id, now - resolution});
  if (!n) return Fail(n.error());
  return Ok();
}

}  // namespace crmd::governance::api_keys_repo
