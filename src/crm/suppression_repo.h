#pragma once
// SQL of the suppression list (tables suppressions and suppression_backfill, migration
// 0071), inside a caller's transaction. No rules here (those are in SuppressionList); rows
// in, rows out, bound parameters only. Promises: Insert inserts nothing when the address
// or domain already has an entry; ids are never reused (NextIdSql).
// Stateless; any thread, with its own Conn.
// REQUIRES: lookups inside Database::Read or Write; every write inside Database::Write.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "src/core/result.h"
#include "src/crm/suppression.h"
#include "src/store/db.h"

namespace crmd::crm::suppression_repo {

Result<std::optional<Suppression>> Find(store::Conn& c, int64_t id);
// The entry of the address hash, else the entry of the domain (either may be empty).
Result<std::optional<Suppression>> FindMatch(store::Conn& c, const std::string& address_hash,
                                             const std::string& domain);
// Of the keys given, those an entry has: address hashes and domains, in one set (a hash
// is 64 hex digits, never a domain). Statements of up to 200 keys of each kind.
Result<std::unordered_set<std::string>> MatchingKeys(store::Conn& c,
                                                     const std::vector<std::string>& address_hashes,
                                                     const std::vector<std::string>& domains);
// The new entry's id; nullopt when the address or domain already has one (nothing written).
// `s.address_hash` or `s.domain` is set, not both.
Result<std::optional<int64_t>> Insert(store::Conn& c, const Suppression& s);
// Replaces the reason and source of entry `id` (a stronger reason arrived).
Status SetReason(store::Conn& c, int64_t id, const std::string& reason, const std::string& source);
Result<bool> Delete(store::Conn& c, int64_t id);

// The live contact that holds the address of entry `id` (nullopt: none).
Status SetContact(store::Conn& c, int64_t id, std::optional<int64_t> contact_id);
// Entries pointing at the contact no longer do (its address changed).
Status ClearContact(store::Conn& c, int64_t contact_id);

struct ListFilter {
  std::optional<std::string> reason;
  std::optional<std::string> kind;  // "address" | "domain"
};
// Keyset page: ids > after_id, ascending, at most `limit` rows; each with the email of the
// live contact it points at (ListedSuppression::email), if any.
Result<std::vector<ListedSuppression>> List(store::Conn& c, const ListFilter& f, int64_t after_id,
                                            int limit);

// Up to `limit` contacts still waiting in suppression_backfill (id, email, status; a
// deleted contact comes with an empty email), lowest id first.
struct BackfillRow {
  int64_t contact_id = 0;
  std::string email, status;
};
Result<std::vector<BackfillRow>> BackfillBatch(store::Conn& c, int limit);
Status BackfillDone(store::Conn& c, int64_t contact_id);

}  // namespace crmd::crm::suppression_repo
