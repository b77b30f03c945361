#include "src/webhooks/incoming_repo.h"

#include <nlohmann/json.hpp>
#include <string_view>

namespace crmd::webhooks::incoming_repo {
namespace {

constexpr std::string_view kColumns =
    "id, name, token_prefix, mapping, applies, hmac_secret IS NOT NULL, enabled, received_count, "
    "created_at, updated_at, last_received_at";

IncomingHook FromRow(const store::Row& r) {
  IncomingHook h;
  h.id = r.Int(0);
  h.name = r.Str(1);
  h.token_prefix = r.Str(2);
  h.mapping = nlohmann::json::parse(r.Str(3), nullptr, false);
  h.applies = nlohmann::json::parse(r.Str(4), nullptr, false);
  h.has_hmac_secret = r.Int(5) != 0;
  h.enabled = r.Int(6) != 0;
  h.received_count = r.Int(7);
  h.created_at = r.Int(8);
  h.updated_at = r.Int(9);
  h.last_received_at = r.OptInt(10);
  return h;
}

}  // namespace

Result<int64_t> Insert(store::Conn& c, const NewHook& h) {
  return c.InsertReturningId(
      "INSERT INTO incoming_webhooks (id, name, token_prefix, token_hash, mapping, applies, "
      "hmac_secret, enabled, created_at, updated_at) VALUES (" +
          store::NextIdSql("incoming_webhooks") + ", ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      {h.name, h.token_prefix, h.token_hash, h.mapping, h.applies, store::Opt(h.hmac_secret),
       int64_t{h.enabled ? 1 : 0}, h.now, h.now});
}

Result<std::vector<IncomingHook>> List(store::Conn& c) {
  auto rows = c.Query("SELECT " + std::string(kColumns) + " FROM incoming_webhooks ORDER BY id");
  if (!rows) return Fail(rows.error());
  std::vector<IncomingHook> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<std::optional<IncomingHook>> Find(store::Conn& c, int64_t id) {
  auto row =
      c.QueryOne("SELECT " + std::string(kColumns) + " FROM incoming_webhooks WHERE id = ?", {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<IncomingHook>{};
  return std::optional<IncomingHook>(FromRow(**row));
}

Result<bool> Exists(store::Conn& c, int64_t id) {
  auto exists = c.QueryOne("SELECT id FROM incoming_webhooks WHERE id = ?", {id});
  if (!exists) return Fail(exists.error());
  return exists->has_value();
}

Result<std::optional<HookWithSecrets>> FindByPrefix(store::Conn& c, const std::string& prefix) {
  auto row = c.QueryOne("SELECT " + std::string(kColumns) +
                            ", token_hash, hmac_secret FROM incoming_webhooks "
                            "WHERE token_prefix = ?",
                        {prefix});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<HookWithSecrets>();
  return std::optional<HookWithSecrets>(
      HookWithSecrets{FromRow(**row), (*row)->Str(11), (*row)->OptStr(12)});
}

Status SetColumns(store::Conn& c, int64_t id,
                  const std::vector<std::pair<const char*, store::Value>>& sets) {
  for (const auto& [column, value] : sets) {
    // Column names come from the caller's fixed list, never from input.
    auto r = c.Exec(std::string("UPDATE incoming_webhooks SET ") + column + " = ? WHERE id = ?",
                    {value, id});
    if (!r) return Fail(r.error());
  }
  return Ok();
}

Result<bool> Delete(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM incoming_webhooks WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return *n != 0;
}

Status CountReceived(store::Conn& c, int64_t id, int64_t now) {
  auto counted = c.Exec(
      "UPDATE incoming_webhooks SET received_count = received_count + 1, last_received_at = ? "
      "WHERE id = ?",
      {now, id});
  if (!counted) return Fail(counted.error());
  return Ok();
}

}  // namespace crmd::webhooks::incoming_repo
