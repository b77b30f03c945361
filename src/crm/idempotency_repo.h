#pragma once
// SQL for idempotency keys (table idempotency_keys), inside a caller's transaction. Keys
// are stored as their SHA-256, never in clear. Only crm::Idempotency uses this. Stateless.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm::idempotency_repo {

// The answer kept for (scope, key) when it was kept after `created_after`; nullopt
// otherwise (also when the stored answer is not JSON).
Result<std::optional<nlohmann::json>> Find(store::Conn& c, const std::string& scope,
                                           const std::string& key, int64_t created_after);
// Keeps `answer` for (scope, key) at `now`, replacing an expired row with the same key.
Status Remember(store::Conn& c, const std::string& scope, const std::string& key,
                const nlohmann::json& answer, int64_t now);

}  // namespace crmd::crm::idempotency_repo
