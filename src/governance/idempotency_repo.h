#pragma once
// SQL for idempotency keys (table idempotency_keys), inside a caller's transaction. Keys
// are stored as their SHA-256, never in clear. Only governance::Idempotency (and housekeeping)
// use this. Promises: one answer per (scope, key); Remember replaces an expired row.
// Stateless; any thread, with its own Conn. REQUIRES: Find inside Database::Read or
// Write; Remember and DeleteCreatedBefore inside Database::Write.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::governance::idempotency_repo {

// The answer kept for (scope, key) when it was kept after `created_after`; nullopt
// otherwise (also when the stored answer is not JSON).
Result<std::optional<nlohmann::json>> Find(store::Conn& c, const std::string& scope,
                                           const std::string& key, int64_t created_after);
// Keeps `answer` for (scope, key) at `now`, replacing an expired row with the same key.
Status Remember(store::Conn& c, const std::string& scope, const std::string& key,
                const nlohmann::json& answer, int64_t now);

// Housekeeping: removes keys kept at or before `cutoff`; answers how many.
// REQUIRES: inside Database::Write.
Result<int64_t> DeleteCreatedBefore(store::Conn& c, int64_t cutoff);

}  // namespace crmd::governance::idempotency_repo
