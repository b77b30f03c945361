#pragma once
// Small pieces shared by the marketing services (campaigns, automations, sequences,
// reports): opaque id cursors, RFC 3339 times, previews of confirmable actions.
// Stateless and thread-safe.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/governance/audit.h"
#include "src/store/db.h"

namespace crmd::governance {
class Idempotency;
}  // namespace crmd::governance
namespace crmd::crm {
class ContactService;
}  // namespace crmd::crm

namespace crmd::marketing {

// The contact status that receives marketing email (campaign audiences).
inline constexpr const char* kSubscribedStatus = "subscribed";

// Why a contact with this status and (normalised) address gets no marketing email, "" when
// it gets it: not subscribed, or its address suppressed whatever the status says (every
// send path asks this at the message's turn; docs/crm.md "Suppression list").
Result<std::string> WhyNotMailed(store::Conn& c, crm::ContactService& contacts,
                                 const std::string& status, const std::string& email);

inline constexpr int kDefaultPageSize = 25;
inline constexpr int kMaxPageSize = 100;

// Records an audit row in the caller's transaction: governance::AuditLog::Record in production
// (wired by marketing::MakeServices), empty in unit tests.
using AuditSink =
    std::function<Status(store::Conn&, const governance::Actor&, const governance::AuditEntry&)>;

// A marketing create run once per idempotency key, inside the service's transaction `c`:
// `create` inserts and answers the new id; a repeat of `key` from the same client within
// the window answers the id first created without calling it. A null store or an empty
// key just runs `create`.
Result<int64_t> CreateOnce(store::Conn& c, governance::Idempotency* idempotency,
                           const governance::Actor& actor, const std::string& operation,
                           const std::string& key, const std::function<Result<int64_t>()>& create);

// Keyset pagination over ids ascending. The cursor is opaque to clients (base64url).
std::string EncodeIdCursor(int64_t last_id);
// Empty cursor -> 0. A malformed cursor is kInvalidArgument naming "cursor".
Result<int64_t> DecodeIdCursor(std::string_view cursor);
// Clamps a requested limit to [1, kMaxPageSize]; 0 or absent -> kDefaultPageSize.
int ClampLimit(std::optional<int64_t> limit);

// One page of `list(c, after_id, limit + 1)` (records with an `id`, ascending) after
// `cursor`, in a read transaction of its own: {items, next_cursor}. No SQL here; `list`
// is a repository function.
template <typename Page, typename List>
Result<Page> ListPageAfterCursor(store::Database& db, std::string_view cursor, int limit,
                                 List list) {
  auto after = DecodeIdCursor(cursor);
  if (!after) return Fail(after.error());
  return db.Read([&](store::Conn& c) -> Result<Page> {
    auto rows = list(c, *after, static_cast<int64_t>(limit + 1));
    if (!rows) return Fail(rows.error());
    Page page;
    page.items = std::move(*rows);
    if (static_cast<int>(page.items.size()) > limit) {
      page.items.resize(limit);
      page.next_cursor = EncodeIdCursor(page.items.back().id);
    }
    return page;
  });
}

// Parses "2026-11-22T16:47:13Z", offsets like "+02:00", fractional seconds, or a date
// "2026-11-22" (midnight UTC). nullopt when malformed.
std::optional<int64_t> ParseRfc3339(std::string_view text);
nlohmann::json TimeJson(std::optional<int64_t> unix_seconds);  // RFC 3339 or null

// Reads an array of positive integer ids from j[key]; absent -> empty. Duplicates removed.
Result<std::vector<int64_t>> IdArray(const nlohmann::json& j, const char* key);

}  // namespace crmd::marketing
