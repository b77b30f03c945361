#pragma once
// The revoked, not yet expired access-token ids (jti) and the grants revoked recently
// enough that a token issued under them may still be alive (`grant_horizon`: the longest
// access-token lifetime plus leeway), kept in memory so that bearer verification never
// queries the database per request. The snapshot is refreshed
// from access_tokens at most every `refresh_every` (2 s by default: a token revoked on any
// node is refused everywhere within a few seconds), and immediately after a revocation on
// this node (MarkStale).
//
// Thread-safe. One caller refreshes while the others keep using the previous snapshot, as
// long as it is younger than `max_staleness`; past that age every caller waits for the
// refresh (after a quiet spell the first burst of requests must not be refused).
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

class RevokedTokens {
 public:
  RevokedTokens(store::Database& db, const Clock& clock, std::chrono::milliseconds refresh_every,
                std::chrono::milliseconds max_staleness = std::chrono::seconds(10),
                std::chrono::seconds grant_horizon = std::chrono::seconds(3600 + 310));
  RevokedTokens(const RevokedTokens&) = delete;
  RevokedTokens& operator=(const RevokedTokens&) = delete;

  // Whether the token `jti`, issued under `grant_id` (empty: unknown), is revoked, by
  // itself or with its grant. kUnavailable when the database has been unreachable for
  // longer than the staleness bound (fail closed rather than accept revoked tokens).
  // REQUIRES: not called inside Database::Read/Write.
  Result<bool> IsRevoked(std::string_view jti, std::string_view grant_id = {});
  // Forces the next IsRevoked to refresh (call after committing a revocation).
  void MarkStale() { stale_.store(true); }

 private:
  struct Set {
    std::unordered_set<std::string> jtis;
    std::unordered_set<std::string> grants;
  };
  Status Refresh();

  store::Database& db_;
  const Clock& clock_;
  const std::chrono::milliseconds refresh_every_;
  // Past this age a snapshot that cannot be refreshed is no longer trusted.
  const std::chrono::milliseconds max_staleness_;
  const std::chrono::seconds grant_horizon_;

  std::mutex refresh_mu_;  // held by the one refreshing caller
  std::mutex snap_mu_;     // guards snapshot_, loaded_at_ and failed_at_
  std::shared_ptr<const Set> snapshot_;
  MonotonicTime loaded_at_{};
  MonotonicTime failed_at_{};                        // end of the last failed refresh
  std::atomic<int64_t> last_warned_ms_{-1'000'000};  // monotonic, for the 503 log line
  std::atomic<bool> stale_{true};
};

}  // namespace crmd::auth
