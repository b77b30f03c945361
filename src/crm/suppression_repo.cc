#include "src/crm/suppression_repo.h"

#include <algorithm>

namespace crmd::crm::suppression_repo {
namespace {

using store::Value;

constexpr const char* kSuppressionColumns =
    "s.id, s.address_hash, s.domain, s.reason, s.source, s.contact_id, s.created_at";

Suppression SuppressionFromRow(store::Row& r) {
  return Suppression{.id = r.Int(0),
                     .address_hash = r.TakeStr(1),
                     .domain = r.TakeStr(2),
                     .reason = r.TakeStr(3),
                     .source = r.TakeStr(4),
                     .contact_id = r.OptInt(5),
                     .created_at = r.Int(6)};
}

Result<std::optional<Suppression>> OneSuppression(store::Conn& c, const std::string& where,
                                                  const std::vector<Value>& params) {
  auto row = c.QueryOne(
      std::string("SELECT ") + kSuppressionColumns + " FROM suppressions s WHERE " + where, params);
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Suppression>{};
  return std::optional<Suppression>(SuppressionFromRow(**row));
}

}  // namespace

Result<std::optional<Suppression>> Find(store::Conn& c, int64_t id) {
  return OneSuppression(c, "s.id = ?", {id});
}

Result<std::optional<Suppression>> FindMatch(store::Conn& c, const std::string& address_hash,
                                             const std::string& domain) {
  // The address's own entry answers first: it says more than its domain's. Both lookups are
  // on unique indexes; an empty key matches nothing (no entry has one).
  auto rows = c.Query(std::string("SELECT ") + kSuppressionColumns +
                          " FROM suppressions s WHERE s.address_hash = ? OR s.domain = ? "
                          "ORDER BY s.domain IS NULL DESC LIMIT 1",
                      {address_hash, domain});
  if (!rows) return Fail(rows.error());
  if (rows->empty()) return std::optional<Suppression>{};
  return std::optional<Suppression>(SuppressionFromRow(rows->front()));
}

Result<std::unordered_set<std::string>> MatchingKeys(store::Conn& c,
                                                     const std::vector<std::string>& address_hashes,
                                                     const std::vector<std::string>& domains) {
  std::unordered_set<std::string> out;
  constexpr size_t kPerStatement = 200;
  auto look = [&](const char* column, const std::vector<std::string>& keys) -> Status {
    for (size_t at = 0; at < keys.size(); at += kPerStatement) {
      size_t n = std::min(kPerStatement, keys.size() - at);
      std::string sql =
          std::string("SELECT ") + column + " FROM suppressions WHERE " + column + " IN (?";
      std::vector<Value> params{keys[at]};
      for (size_t i = 1; i < n; ++i) {
        sql += ", ?";
        params.emplace_back(keys[at + i]);
      }
      auto rows = c.Query(sql + ")", params);
      if (!rows) return Fail(rows.error());
      for (const auto& r : *rows) out.insert(r.Str(0));
    }
    return Ok();
  };
  if (auto st = look("address_hash", address_hashes); !st) return Fail(st.error());
  if (auto st = look("domain", domains); !st) return Fail(st.error());
  return out;
}

Result<std::optional<int64_t>> Insert(store::Conn& c, const Suppression& s) {
  static const store::NewIdInsert insert(
      "suppressions",
      "INSERT INTO suppressions (id, address_hash, domain, reason, source, contact_id, "
      "created_at) VALUES (",
      ", ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING");
  return insert.Run(c, {s.address_hash.empty() ? Value(nullptr) : Value(s.address_hash),
                        s.domain.empty() ? Value(nullptr) : Value(s.domain), s.reason, s.source,
                        store::Opt(s.contact_id), s.created_at});
}

Status SetReason(store::Conn& c, int64_t id, const std::string& reason, const std::string& source) {
  return Discard(
      c.Exec("UPDATE suppressions SET reason = ?, source = ? WHERE id = ?", {reason, source, id}));
}

Result<bool> Delete(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM suppressions WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return *n > 0;
}

Status SetContact(store::Conn& c, int64_t id, std::optional<int64_t> contact_id) {
  return Discard(
      c.Exec("UPDATE suppressions SET contact_id = ? WHERE id = ?", {store::Opt(contact_id), id}));
}

Status ClearContact(store::Conn& c, int64_t contact_id) {
  return Discard(
      c.Exec("UPDATE suppressions SET contact_id = NULL WHERE contact_id = ?", {contact_id}));
}

Result<std::vector<ListedSuppression>> List(store::Conn& c, const ListFilter& f, int64_t after_id,
                                            int limit) {
  std::string sql = std::string("SELECT ") + kSuppressionColumns +
                    ", k.email FROM suppressions s LEFT JOIN contacts k ON k.id = s.contact_id "
                    "WHERE s.id > ?";
  std::vector<Value> params{after_id};
  if (f.reason) {
    sql += " AND s.reason = ?";
    params.emplace_back(*f.reason);
  }
  if (f.kind) sql += *f.kind == "domain" ? " AND s.domain IS NOT NULL" : " AND s.domain IS NULL";
  sql += " ORDER BY s.id LIMIT ?";
  params.emplace_back(static_cast<int64_t>(limit));
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<ListedSuppression> out;
  out.reserve(rows->size());
  for (auto& r : *rows) {
    std::string email = r.TakeStr(7);
    out.push_back({SuppressionFromRow(r), std::move(email)});
  }
  return out;
}

Result<std::vector<BackfillRow>> BackfillBatch(store::Conn& c, int limit) {
  auto rows = c.Query(
      "SELECT b.contact_id, k.email, k.status FROM suppression_backfill b "
      "LEFT JOIN contacts k ON k.id = b.contact_id ORDER BY b.contact_id LIMIT ?",
      {static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  std::vector<BackfillRow> out;
  out.reserve(rows->size());
  for (auto& r : *rows) out.push_back({r.Int(0), r.TakeStr(1), r.TakeStr(2)});
  return out;
}

Status BackfillDone(store::Conn& c, int64_t contact_id) {
  return Discard(c.Exec("DELETE FROM suppression_backfill WHERE contact_id = ?", {contact_id}));
}

}  // namespace crmd::crm::suppression_repo
