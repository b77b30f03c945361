#pragma once
// Idempotency keys for creates: a repeat of (scope, key) within 24 hours returns the
// first result. The key is stored hashed; scope names the caller and the operation, e.g.
// "oauth:<client_id>:create_contact". Used inside the create's transaction, so a
// concurrent repeat either sees the first result or waits for it. Thread-safe.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/crm/actor.h"
#include "src/store/db.h"

namespace crmd::crm {

inline constexpr int64_t kIdempotencyWindowSeconds = 24 * 3600;

std::string IdempotencyScope(const Actor& actor, const std::string& operation);

class IdempotencyStore {
 public:
  explicit IdempotencyStore(Clock* clock) : clock_(clock) {}
  // The stored first result, or nullopt (also when older than the window).
  Result<std::optional<nlohmann::json>> Find(store::Conn& conn, const std::string& scope,
                                             const std::string& key);
  Status Remember(store::Conn& conn, const std::string& scope, const std::string& key,
                  const nlohmann::json& response);
  Result<int64_t> Purge(store::Conn& conn);  // deletes rows past the window

  // Runs `first` once per (scope, key) inside the caller's transaction: the answer
  // remembered within the window, else `first`'s answer, remembered in the same
  // transaction. An empty key just runs `first`.
  Result<nlohmann::json> Once(store::Conn& conn, const std::string& scope, const std::string& key,
                              const std::function<Result<nlohmann::json>()>& first);

 private:
  Clock* const clock_;
};

}  // namespace crmd::crm
